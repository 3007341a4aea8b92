"""What sending and receiving share: how a protocol machine's end is
awaited, where the Transit object comes from and how it connects, and
closing the wormhole early (File-transfer protocol, "Transit")."""
from twisted.internet import defer


class Outcome:
    """How a protocol machine ends: ``fire(None)`` (the mailbox part went
    well) or ``fire(error)``; only the first call counts."""

    def __init__(self):
        self.d = defer.Deferred()

    @property
    def called(self):
        return self.d.called

    def fire(self, error):
        if not self.d.called:
            self.d.callback(error)

    @defer.inlineCallbacks
    def result(self):
        error = yield self.d
        if error is not None:
            raise error


def make_transit(transit, transit_relay, reactor, timing, factory):
    """``transit`` itself, or what it makes when it is a callable, or a
    new one (``factory``: TransitSender/TransitReceiver) on ``transit_relay``."""
    if transit is None:
        return factory(transit_relay, reactor=reactor, timing=timing)
    if callable(transit):
        return transit()
    return transit


@defer.inlineCallbacks
def connect(transit, reactor, cancellation):
    """``transit.connect()``; a cancel meanwhile waits for the connection
    to tell the peer over it (``Cancellation.connecting``)."""
    if cancellation is None:
        return (yield transit.connect())
    cancellation.connecting(reactor)
    try:
        return (yield transit.connect())
    except BaseException:
        cancellation.over()
        raise


def no_op(*args):
    pass


def close_early(w):
    """Start closing ``w`` now, once the mailbox has done its part.

    File-transfer protocol, "Transit": a file transfer closes the wormhole
    as soon as it has what it needs to open the Transit connection, so the
    server frees the nameplate and mailbox while the bytes flow.
    ``close()`` is idempotent: the application closes again at the end and
    waits for the result (an error of this early close is reported there,
    not here)."""
    w.close().addErrback(lambda _: None)
