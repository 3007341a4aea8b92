"""The wormhole command over a WebSocket relay: ``--transit-helper ws://``.

Every CLI runs with ``--no-listen``, so nobody advertises direct hints (the
reference would offer every local interface address otherwise; tests here
reach 127.0.0.1 only) and the file can only travel through our relay, which
pairs a WebSocket client with a TCP one (Transit protocol,
"Relay Handshake": "the relay will also connect two clients using different
protocols together").
"""
import hashlib
import os

from twisted.internet import defer, reactor

from ..interop import harness
from ..interop.harness import InteropTestCase, our_cli_argv, ref_cli_argv

SIZE = 300 * 1000 + 7   # several Transit records, not a round number


class FileOverWebSocket(InteropTestCase):
    @defer.inlineCallbacks
    def setUp(self):
        InteropTestCase.setUp(self)
        from wormhole_relay.testing import start_transit_relay
        self.relay = yield start_transit_relay(reactor, websocket_port=0)
        self.addCleanup(self.relay.stop)
        self.srv = yield self.start_our_server()
        # which WebSocket clients the relay paired: our side also learns the
        # peer's relay hints, so only this says the file took the WebSocket
        self.ws_clients = []
        factory = self.relay._ws_listening.factory
        build = factory.buildProtocol

        def recording_build(addr):
            proto = build(addr)
            self.ws_clients.append(proto)
            return proto
        self.patch(factory, "buildProtocol", recording_build)

    def paired_websocket_clients(self):
        return sum(1 for p in self.ws_clients if p._pair is not None)

    def payload(self):
        src = harness.new_dir(self)
        data = os.urandom(SIZE)
        with open(os.path.join(src, "payload.bin"), "wb") as f:
            f.write(data)
        return src, data

    @defer.inlineCallbacks
    def transfer(self, send_argv, recv_argv, src, data, out, code):
        send = self.spawn(send_argv, "sender", cwd=src)
        recv = self.spawn(recv_argv, "receiver")
        yield self.relayed_intact(send, recv, data, out)

    @defer.inlineCallbacks
    def relayed_intact(self, send, recv, data, out):
        """Both exited 0, ``out`` holds ``data``, and the relay saw one
        happy session carrying it."""
        yield self.wait_all([send, recv])
        self.assertExited(send)
        self.assertExited(recv)
        with open(out, "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(),
                             hashlib.sha256(data).hexdigest())
        records = yield self.relay.when_usage(1)
        self.assertEqual([r["mood"] for r in records], ["happy"])
        self.assertGreaterEqual(records[0]["total_bytes"], SIZE)

    def ours(self, transit, *args):
        return our_cli_argv(self.srv.url, "--transit-helper", transit, *args)

    @defer.inlineCallbacks
    def test_ours_both_websocket(self):
        """Our sender and receiver, both --transit-helper ws://: the file
        arrives byte-identical through the relay's WebSocket port."""
        src, data = self.payload()
        out = os.path.join(harness.new_dir(self), "received.bin")
        code = "21-websocket-file"
        ws = self.relay.websocket_url
        yield self.transfer(
            self.ours(ws, "send", "--no-listen", "--hide-progress", "--code", code,
                      "payload.bin"),
            self.ours(ws, "receive", "--no-listen", "--hide-progress", "--accept-file",
                      "-o", out, code),
            src, data, out, code)
        self.assertEqual(self.paired_websocket_clients(), 2)

    @defer.inlineCallbacks
    def test_reference_tcp_ours_websocket(self):
        """The reference 0.24 CLI sends on plain TCP to the relay; ours
        receives on its WebSocket URL: the relay pairs them and the file
        arrives. Ours runs in a loopback-only network namespace where only
        the Mailbox server and the relay's WebSocket port are forwarded, so
        it cannot take the reference's TCP relay hint instead: the
        WebSocket path is the only one (the reference ignores the
        websocket-v1 hint it does not know)."""
        from ..dilation._proxy import CuttableProxy
        from ..tor._network import LoopbackNamespace
        src, data = self.payload()
        out = os.path.join(harness.new_dir(self), "received.bin")
        code = "22-mixed-file"
        ns = LoopbackNamespace()
        self.addCleanup(ns.close)
        ns.enter()
        try:
            # same port numbers inside (the servers check the Host header)
            for port in (self.srv.port, self.relay.websocket_port):
                proxy = CuttableProxy(reactor, "127.0.0.1", port)
                listening = reactor.listenTCP(port, proxy, interface="127.0.0.1")
                self.addCleanup(listening.stopListening)
                self.addCleanup(proxy.cut)
            recv = self.spawn(self.ours(self.relay.websocket_url, "receive", "--no-listen",
                                        "--hide-progress", "--accept-file", "-o", out,
                                        code), "our receiver (namespace)")
        finally:
            ns.leave()
        send = self.spawn(ref_cli_argv(self.srv.url, "send", "--no-listen", "--hide-progress",
                                       "--code", code, "payload.bin",
                                       transit=self.relay.hint),
                          "reference sender", cwd=src)
        yield self.relayed_intact(send, recv, data, out)
        self.assertEqual(self.paired_websocket_clients(), 1)
