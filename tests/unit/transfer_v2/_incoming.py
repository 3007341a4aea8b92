"""A stand-in for the library's IncomingOffer, as ``cli._receiving``
uses it (the CLI's tests of what the receiver says and asks)."""
from twisted.internet import defer
from twisted.python import failure

from wormhole import transfer_v2 as T
from wormhole.transfer_v2 import _messages as M


class FakeIncoming:
    """What ``Receiving`` uses of an IncomingOffer: a file offer that is
    accepted at once and ends when the test says."""

    is_directory = False
    is_stream = False
    refused = None
    discarded = None
    resumed_from = held = 0

    def __init__(self, name, size):
        self.offer = M.FileOffer(name, 0, size)
        self.size = size
        self._observers = []
        self.rejected = None

    def accept(self, folder, name=None, peer_reason=None):
        return defer.succeed(self)

    def reject(self, reason):
        self.rejected = reason
        self.finish(T.Rejected(self.offer, reason))

    def finish(self, result):
        """The offer ends: ``when_done()`` fires with ``result`` (or fails
        with it, an exception)."""
        for d in self._observers:
            if isinstance(result, Exception):
                d.errback(failure.Failure(result))
            else:
                d.callback(result)

    def when_done(self):
        d = defer.Deferred()
        self._observers.append(d)
        return d
