"""A trial TestCase with our own Mailbox server on 127.0.0.1 for each
test, and the closing of the wormholes a test made (Dilation and
transfer-v2 end-to-end tests share it)."""

from twisted.internet import defer, reactor
from twisted.internet.task import deferLater
from twisted.trial import unittest

from wormhole_mailbox.testing import start_mailbox_server

# what the reactor needs after a server or wormhole stops for the last
# connection's close to be read (no timer left behind)
SETTLE = 0.05


class OurMailboxTestCase(unittest.TestCase):
    """``self.srv`` is a fresh Mailbox server (``self.srv.url``);
    ``self.close_later(w1, w2)`` closes the wormholes when the test ends."""

    @defer.inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, channel_db=self.mktemp())
        self.addCleanup(self._stop_server)

    @defer.inlineCallbacks
    def _stop_server(self):
        yield self.srv.stop()
        yield deferLater(reactor, SETTLE, lambda: None)

    def close_later(self, *ws):
        self.addCleanup(self._close, *ws)

    @defer.inlineCallbacks
    def _close(self, *ws):
        for w in ws:
            try:
                yield w.close()
            except Exception:  # noqa: BLE001 -- a test may have closed it already
                pass
        yield deferLater(reactor, SETTLE, lambda: None)
