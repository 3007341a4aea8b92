"""The Dilator (the Boss's IDilator when dilation=True): it waits for the
key, the peer's versions and dilate(), keeps early DILATE-n messages, sends
its own as dilate-0, dilate-1, ..., and fails connect() for an old peer."""

import json

from twisted.internet.testing import MemoryReactorClock
from twisted.python import log
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole._dilation._dilator import Dilator
from wormhole._dilation.manager import (
    CanOnlyDilateOnceError,
    DilatedWormhole,
    OldPeerCannotDilateError,
)
from wormhole._eventual import EventualQueue
from wormhole._interfaces import IDilator

from ...dilation._streams import collector_factory

KEY = b"\x09" * 32
CAN = {"can-dilate": ["ged"], "dilation-abilities": [{"type": "direct-tcp-v1"}]}


class DilatorTests(unittest.TestCase):
    def setUp(self):
        self.reactor = MemoryReactorClock()
        self.eq = EventualQueue(self.reactor)
        self.sent = []
        self.d = self.make()

    def make(self, side=None):
        return Dilator(self.reactor, self.eq,
                       lambda phase, plaintext: self.sent.append((phase, json.loads(plaintext))),
                       side=side)

    def test_interface(self):
        """The Dilator provides IDilator."""
        verifyObject(IDilator, self.d)

    def test_waits_for_all_three(self):
        """Nothing is sent until the key, the versions and dilate() are all
        there, in any order; then please goes out as dilate-0."""
        self.d.got_key(KEY)
        dw = self.d.dilate(listen_addresses=["127.0.0.1"])
        self.assertIsInstance(dw, DilatedWormhole)
        self.assertRaises(CanOnlyDilateOnceError, self.d.dilate)  # as the reference
        self.assertEqual(self.sent, [])
        self.d.got_wormhole_versions(CAN)
        self.assertEqual(self.sent[0][0], "dilate-0")
        self.assertEqual(self.sent[0][1]["type"], "please")
        self.assertEqual(self.sent[0][1]["use-version"], "ged")
        self.assertEqual(len(self.sent[0][1]["side"]), 16)

    def test_early_messages_kept(self):
        """A please that arrives before dilate() is replayed once the
        Manager exists: we become Leader/Follower and send hints as dilate-1."""
        self.d.got_key(KEY)
        self.d.got_wormhole_versions(CAN)
        peer = json.dumps({"type": "please", "side": "0" * 16, "use-version": "ged"})
        self.d.received_dilate(peer.encode())
        self.assertEqual(self.sent, [])
        self.d = self.make(side="f" * 16)
        self.d.got_key(KEY)
        self.d.got_wormhole_versions(CAN)
        self.d.received_dilate(peer.encode())
        self.d.dilate(listen_addresses=["127.0.0.1"])
        self.assertEqual([p for p, _ in self.sent], ["dilate-0", "dilate-1"])
        self.assertEqual(self.sent[1][1]["type"], "connection-hints")
        self.assertEqual([h["hostname"] for h in self.sent[1][1]["hints"]], ["127.0.0.1"])
        self.assertEqual([s[3] for s in self.reactor.tcpServers], ["127.0.0.1"])
        self.d.stop()

    def test_early_messages_bounded(self):
        """docs/security.md, "Dilation": a peer sending DILATE messages without end before we
        dilate. The first 64 are kept (the please first, so Dilation still
        starts), the rest dropped with one log line; bytes are bounded too
        (1 MiB: a 600 KiB message after a 600 KiB one is dropped)."""
        lines = []
        log.addObserver(lines.append)
        self.addCleanup(log.removeObserver, lines.append)
        self.d = self.make(side="f" * 16)
        self.d.got_key(KEY)
        self.d.got_wormhole_versions(CAN)
        please = json.dumps({"type": "please", "side": "0" * 16, "use-version": "ged"})
        self.d.received_dilate(please.encode())
        hints = json.dumps({"type": "connection-hints", "hints": []}).encode()
        for _i in range(1000):
            self.d.received_dilate(hints)
        self.assertEqual(len(self.d._early), 64)
        self.assertEqual(self.d._early_bytes, len(please) + 63 * len(hints))
        said = [e["message"][0] for e in lines if e.get("message")
                and "DILATE" in e["message"][0]]
        self.assertEqual(said, [
            "Dilation: the peer sent more than 64 DILATE messages or 1048576 bytes before "
            "we dilated; dropping the rest (docs/security.md)"])
        self.d.dilate(listen_addresses=["127.0.0.1"])
        self.assertEqual([p for p, _ in self.sent], ["dilate-0", "dilate-1"])
        self.assertEqual(self.d._early, [])
        self.d.stop()

        big = self.make()
        big.received_dilate(b"x" * 600 * 1024)
        big.received_dilate(b"y" * 600 * 1024)
        big.received_dilate(b"z" * 400 * 1024)
        self.assertEqual([m[:1] for m in big._early], [b"x", b"z"])

    def test_old_peer(self):
        """A peer without a shared can-dilate version: connect() errbacks
        with OldPeerCannotDilateError, before and after the versions."""
        dw = self.d.dilate()
        d1 = dw.connector_for("x").connect(collector_factory())
        self.d.got_key(KEY)
        self.d.got_wormhole_versions({"app_versions": {}})
        f = self.failureResultOf(d1, OldPeerCannotDilateError)
        self.assertIn("upgrade", str(f.value))
        self.failureResultOf(dw.connector_for("y").connect(collector_factory()),
                             OldPeerCannotDilateError)
        self.assertEqual(self.sent, [])

    def test_relay_location(self):
        """transit_relay_location is parsed at dilate() (a bad one raises
        there) and advertised as a relay-v1 hint."""
        self.assertRaises(ValueError, self.d.dilate, transit_relay_location="nope")
        self.d = self.make(side="f" * 16)
        self.d.got_key(KEY)
        self.d.got_wormhole_versions(CAN)
        self.d.dilate(transit_relay_location="tcp:127.0.0.1:4001", no_listen=True)
        peer = json.dumps({"type": "please", "side": "0" * 16, "use-version": "ged"})
        self.d.received_dilate(peer.encode())
        hints = self.sent[1][1]["hints"]
        self.assertEqual([h["type"] for h in hints], ["relay-v1"])
        self.assertEqual(self.reactor.tcpServers, [])
        self.d.stop()

    def test_status_updates(self):
        """on_status_update gets DilationStatus values in later turns: the
        wormhole's status as .mailbox (following its changes), the peer's
        hints as DilationHints, and StoppedPeer after stop()."""
        from wormhole._status import (
            Connected,
            DilationHint,
            DilationStatus,
            StatusTracker,
            StoppedPeer,
        )
        tracker = StatusTracker(None, self.eq)
        d = Dilator(self.reactor, self.eq, lambda phase, plaintext: None, tracker,
                    side="f" * 16)
        seen = []
        d.dilate(on_status_update=seen.append, no_listen=True)
        self.eq.flush_sync()
        self.assertEqual(seen, [DilationStatus(tracker.current, 0)])
        tracker.mailbox(Connected("ws://x/v1"))
        d.got_key(KEY)
        d.got_wormhole_versions(CAN)
        d.received_dilate(json.dumps({"type": "please", "side": "0" * 16,
                                      "use-version": "ged"}).encode())
        d.received_dilate(json.dumps({"type": "connection-hints", "hints": [
            {"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 9, "priority": 0.0},
            {"type": "relay-v1", "hints": [{"type": "direct-tcp-v1", "hostname": "relay",
                                            "port": 4001, "priority": 0.0}]}]}).encode())
        d.stop()
        self.eq.flush_sync()
        last = seen[-1]
        self.assertEqual(last.mailbox.mailbox_connection, Connected("ws://x/v1"))
        self.assertEqual(last.hints, {DilationHint("127.0.0.1:9", True),
                                      DilationHint("relay:4001", False)})
        self.assertEqual(last.peer_connection, StoppedPeer())
        self.assertEqual(last.generation, 1)

    def test_keepalive_on_by_default(self):
        """Without ping_interval the reference's 30 s keepalive is used;
        a bad one is refused at dilate()."""
        from wormhole._dilation._dilator import DEFAULT_PING_INTERVAL
        self.assertEqual(DEFAULT_PING_INTERVAL, 30.0)
        self.d.dilate()
        self.assertEqual(self.d._options["ping_interval"], 30.0)
        for bad in (0, -1, True, "5"):
            self.assertRaises(ValueError, self.make().dilate, ping_interval=bad)
