"""Journals (Journalled mode).

The RendezvousConnector processes every inbound message, and every event
the reactor starts (a lost connection, a failed connect, a minted hashcash
stamp), inside ``journal.process()``, and hands every outbound message to
``journal.queue_outbound``, so a checkpointing application saves its state
before anything leaves the process. With a journal, the delegate's events
run inside the transaction of the message that caused them, and
``w.serialize()`` is what the checkpoint keeps of the wormhole
(docs/journal.md).
"""

import contextlib

from zope.interface import implementer

from ._interfaces import IJournal


@implementer(IJournal)
class Journal:
    """Queue outbound messages while processing; after the (synchronous)
    ``save_checkpoint`` has run, release them.

    A ``process()`` entered while another is open joins it: the event that
    opened the outer one is the transaction, and its checkpoint covers both
    (the library opens one for what the reactor starts, and that may happen
    inside the application's own, e.g. a close that drops the connection).
    """

    def __init__(self, save_checkpoint):
        self._save_checkpoint = save_checkpoint
        self._outbound_queue = []
        self._depth = 0

    def queue_outbound(self, fn, *args, **kwargs):
        """Queue ``fn(*args, **kwargs)`` (something that sends) until
        ``process()`` ends; outside ``process()`` it is an error."""
        if not self._depth:
            raise RuntimeError(
                "queue_outbound() called outside journal.process(): in journalled mode "
                "every call that sends (set_code, allocate_code, send_message, close) "
                "must be made inside 'with journal.process():' (Journalled mode, "
                "'Wormhole Support')")
        self._outbound_queue.append((fn, args, kwargs))

    @contextlib.contextmanager
    def process(self):
        """A context manager: the calls that send, made inside it, are queued
        and run when the outermost block ends (Journalled mode; docs/journal.md)."""
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth -= 1
            if not self._depth:
                # the transaction failed: nothing it queued may escape
                self._outbound_queue = []
            raise
        self._depth -= 1
        if self._depth:
            return
        try:
            self._save_checkpoint()
        except BaseException:
            self._outbound_queue = []
            raise
        queued, self._outbound_queue = self._outbound_queue, []
        for fn, args, kwargs in queued:
            fn(*args, **kwargs)


@implementer(IJournal)
class ImmediateJournal:
    """The default: no checkpoints, messages go out at once."""

    def queue_outbound(self, fn, *args, **kwargs):
        """Call ``fn(*args, **kwargs)`` at once."""
        fn(*args, **kwargs)

    @contextlib.contextmanager
    def process(self):
        """Nothing to hold back: a context manager that does nothing."""
        yield
