"""The transfer-v2 side of ``wormhole receive`` (docs/transfer-v2.md
"The CLI"): the session until the sender closes it, or the hand-over to
the classic receiver when the sender cannot dilate after all."""
from twisted.internet import defer, task

from ..errors import TransferError
from ..eventual import EventualQueue
from ..observer import OneShotObserver
from ..session import PeerError
from ._stream_receive import StreamReceiving
from ._v2_session import first_connection, receiving_session, started
from .ui.connection_path import ConnectionPath
from .ui.prompt import ask
from .ui.screen import say
from .ui.wording import received_text

# how long a session that brought nothing waits for the sender's reason
WHY_WAIT = 2.0


@defer.inlineCallbacks
def receive_session(reactor, cfg, w):
    """Until the sender closes. A text (control message) is printed on
    stdout like classic's. Fires with None, or, when the sender cannot
    dilate after all, with the ``SenderMailbox`` whose ``first_message()``
    the classic receiver reads first."""
    path = ConnectionPath(cfg)
    first = first_connection(reactor, cfg)
    # a Receiving that also takes streams (a long text shown as a text;
    # with --stdout, any stream to standard output: docs/cli.md "Streams")
    receiving = StreamReceiving(reactor, cfg, ask, path)
    texts = []

    def on_text(text):
        texts.append(text)
        print(received_text(text), file=cfg.stdout, flush=True)
    session = receiving_session(reactor, cfg, w, "receive", receiving, on_text, path, first)
    mailbox = SenderMailbox(reactor, w, session)
    try:
        if not (yield started(cfg, session, first)):
            mailbox.hand_over()
            return mailbox
    except Exception:
        if mailbox.error is not None:
            raise receiving.peer_stopped(mailbox.error) from None
        raise
    receiving.expire_kept()
    receiving.expect_offers(session)
    # a sender that stopped on purpose is not waited for (its error says why)
    try:
        yield mailbox.peer.unless_error(session.when_closed())
    except Exception:
        if mailbox.error is not None:
            raise receiving.peer_stopped(mailbox.error) from None
        raise
    receiving.stop_waiting()
    if mailbox.error is not None:
        raise receiving.peer_stopped(mailbox.error)
    if receiving.gave_up is not None:
        if not receiving.failures:
            raise receiving.gave_up
        # an offer failed or was refused first: that is the ERROR line,
        # the silence that followed is said above it
        say(cfg, str(receiving.gave_up))
    yield receiving.finished()
    if not texts and not receiving.offers:
        # a sender that could offer nothing says why in the mailbox (a
        # stream we cannot take: docs/cli.md "Streams"), which may come
        # after its session's close: heard, if it comes within WHY_WAIT
        yield mailbox.peer.unless_error(task.deferLater(reactor, WHY_WAIT, lambda: None))
        # a transfer that did not happen never exits 0 (docs/cli.md,
        # "Exit status")
        raise TransferError("the sender ended the session without sending anything")
    return None


class SenderMailbox:
    """The sender's first mailbox message, read while the transfer-v2
    session starts. The sender may still end it all there (the ``error``
    of File-transfer protocol, "Sender": its human rejected the
    verifier, before any dilation, or stopped it later: Ctrl-C,
    SIGTERM): that closes the session and
    ``peer.error`` says why (a ``PeerError``). When we fall back to the
    classic protocol instead (``hand_over()``), the message is the
    classic receiver's: ``first_message()`` gives it (or its failure)."""

    def __init__(self, reactor, w, session):
        self.peer = PeerError(session, "sender")
        self._first = OneShotObserver(EventualQueue(reactor))
        # a wormhole closed with the message still awaited fails it: the
        # session says what happened, or the classic receiver gets it
        w.get_message().addCallbacks(self._got, self._first.error)

    @property
    def error(self):
        return self.peer.error

    def hand_over(self):
        """The session is not used: the message is no longer ours."""
        self.peer.hand_over()

    def _got(self, body):
        self.peer.got(body)
        self._first.fire(body)

    def first_message(self):
        return self._first.when_fired()
