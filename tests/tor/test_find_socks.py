"""tor_manager's SOCKS probe against real listening ports on 127.0.0.1
(the rest of tor_manager's tests, with fakes, are unit tests:
tests/unit/tor/test_tor_manager.py)."""

from twisted.internet import defer
from twisted.trial import unittest

from wormhole import tor_manager


class FindSocks(unittest.TestCase):
    @defer.inlineCallbacks
    def test_first_port_that_answers(self):
        """The SOCKS probe takes the first port, in txtorcon's order, where
        something accepts a connection (loopback only)."""
        from twisted.internet import protocol, reactor
        port = yield reactor.listenTCP(0, protocol.Factory.forProtocol(protocol.Protocol),
                                       interface="127.0.0.1")
        self.addCleanup(port.stopListening)
        closed = yield reactor.listenTCP(0, protocol.Factory(), interface="127.0.0.1")
        closed_port = closed.getHost().port
        yield closed.stopListening()
        live = port.getHost().port
        self.patch(tor_manager, "SOCKS_PORTS", (("127.0.0.1", closed_port), ("127.0.0.1", live)))
        self.assertEqual((yield tor_manager._find_socks(reactor)), ("127.0.0.1", live))
        self.patch(tor_manager, "SOCKS_PORTS", (("127.0.0.1", closed_port),))
        self.assertIsNone((yield tor_manager._find_socks(reactor)))
