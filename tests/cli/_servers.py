"""The two Mailbox servers every CLI end-to-end test runs against: ours
(in-process on 127.0.0.1) and the reference's (magic-wormhole-mailbox-server
0.8 as a ``twistd`` subprocess). A TestCase mixes in ``OurServer`` or
``ReferenceServer`` and gets ``self.url`` in ``setUp``."""
from twisted.internet import defer, reactor

from ..interop.servers import RefMailboxServer


class OurServer:
    server_name = "ours"

    @defer.inlineCallbacks
    def setUp(self):
        from wormhole_mailbox.testing import start_mailbox_server
        srv = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(srv.stop)
        self.url = srv.url


class ReferenceServer:
    server_name = "reference 0.8"

    @defer.inlineCallbacks
    def setUp(self):
        srv = yield RefMailboxServer.start(self, reactor)
        self.addCleanup(srv.stop)
        self.url = srv.url
