"""Journals (spec 004 chapter 11 "Journaled Mode").

The RendezvousConnector processes every inbound message inside
``journal.process()`` and hands every outbound message to
``journal.queue_outbound``, so a checkpointing application can save its
state before anything leaves the process.
"""

import contextlib

from zope.interface import implementer

from ._interfaces import IJournal


@implementer(IJournal)
class Journal:
    """Queue outbound messages while processing; after the (synchronous)
    ``save_checkpoint`` has run, release them."""

    def __init__(self, save_checkpoint):
        self._save_checkpoint = save_checkpoint
        self._outbound_queue = []
        self._processing = False

    def queue_outbound(self, fn, *args, **kwargs):
        if not self._processing:
            raise RuntimeError("queue_outbound() called outside journal.process()")
        self._outbound_queue.append((fn, args, kwargs))

    @contextlib.contextmanager
    def process(self):
        if self._processing:
            raise RuntimeError("journal.process() is not re-entrant")
        self._processing = True
        try:
            yield
            self._save_checkpoint()
            queued, self._outbound_queue = self._outbound_queue, []
            for fn, args, kwargs in queued:
                fn(*args, **kwargs)
        finally:
            self._processing = False


@implementer(IJournal)
class ImmediateJournal:
    """The default: no checkpoints, messages go out at once."""

    def queue_outbound(self, fn, *args, **kwargs):
        fn(*args, **kwargs)

    @contextlib.contextmanager
    def process(self):
        yield
