"""L1 Manager (Dilation protocol, "Initiating Dilation",
"Leaders and Followers"): please, roles by side, connection-hints,
reconnect/reconnecting and generations, record dispatch; with recording
fakes."""

import json

from twisted.internet.task import Clock
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole._dilation import _interfaces as I
from wormhole._dilation._records import Ack, Data, Ping, Pong
from wormhole._dilation.manager import (
    DilatedWormhole,
    Manager,
    choose_version,
    make_side,
)

from .fakes import FakeConnection, FakeInbound, FakeOutbound

MID = "8" * 16


class FakeConnector:
    def __init__(self, events, is_leader, generation):
        self.events = events
        self.gen = generation
        events.append(("connector.new", is_leader, generation))

    def start(self):
        self.events.append(("connector.start", self.gen))

    def got_hints(self, hints):
        self.events.append(("connector.got_hints", self.gen, hints))

    def stop(self):
        self.events.append(("connector.stop", self.gen))


class FakeRegistry:
    def __init__(self, events):
        self.events = events

    def set_role(self, is_leader):
        self.events.append(("registry.set_role", is_leader))


def please(side, version="ged"):
    return json.dumps({"type": "please", "side": side, "use-version": version}).encode()


def msg(kind, **kw):
    kw["type"] = kind
    return json.dumps(kw).encode()


class ManagerTests(unittest.TestCase):
    def setUp(self):
        self.events = []
        self.sent = []
        self.clock = Clock()
        self.m = Manager(MID, "ged", self.sent.append, FakeInbound(self.events),
                         FakeOutbound(self.events), FakeRegistry(self.events),
                         lambda lead, gen, mgr: FakeConnector(self.events, lead, gen),
                         clock=self.clock)
        self.m.start()

    def test_interfaces(self):
        """The Manager provides IDilationManager and IRecordReceiver."""
        verifyObject(I.IDilationManager, self.m)
        verifyObject(I.IRecordReceiver, self.m)

    def test_helpers(self):
        """Sides are 16 hex digits; the version is our best shared one."""
        s = make_side()
        self.assertEqual(len(s), 16)
        int(s, 16)
        self.assertEqual(choose_version(["x", "ged"]), "ged")
        self.assertIsNone(choose_version(["x"]))
        self.assertIsNone(choose_version(None))
        self.assertEqual(DilatedWormhole(None, None).connector_for("a")._subprotocol, "a")
        self.assertRaises(TypeError, DilatedWormhole(None, None).listener_for, b"a")

    def test_please_first(self):
        """start() sends please with our side and use-version."""
        self.assertEqual(self.sent, [{"type": "please", "side": MID, "use-version": "ged"}])

    def test_leader_by_larger_side(self):
        """A peer with a smaller side makes us Leader, generation 1 starts."""
        self.m.got_dilate(please("0" * 16))
        self.assertEqual(self.events, [("registry.set_role", True), ("connector.new", True, 1),
                                       ("connector.start", 1)])

    def test_follower_by_smaller_side(self):
        """A peer with a larger side makes us Follower."""
        self.m.got_dilate(please("f" * 16))
        self.assertEqual(self.events[0], ("registry.set_role", False))
        self.assertEqual(self.events[1], ("connector.new", False, 1))

    def test_bad_messages_ignored(self):
        """Unparseable messages, unknown types, our own side, duplicates:
        ignored without raising."""
        for bad in (b"not json", b"[]", msg("unknown"), please(MID), please(None)):
            self.m.got_dilate(bad)
        self.assertEqual(self.events, [])
        self.m.got_dilate(please("0" * 16))
        self.m.got_dilate(please("0" * 16))
        self.m.got_dilate(msg("reconnecting"))
        self.assertEqual(len([e for e in self.events if e[0] == "connector.new"]), 1)

    def test_hints_to_current_connector(self):
        """connection-hints go to the connector of the current generation;
        send_hints sends ours."""
        self.m.got_dilate(please("0" * 16))
        self.m.got_dilate(msg("connection-hints", hints=[{"type": "x"}]))
        self.assertEqual(self.events[-1], ("connector.got_hints", 1, [{"type": "x"}]))
        self.m.send_hints([{"type": "y"}])
        self.assertEqual(self.sent[-1], {"type": "connection-hints", "hints": [{"type": "y"}]})

    def test_leader_reconnects(self):
        """The Leader, losing its L3, stops using it, sends reconnect, waits
        for reconnecting, then starts generation 2."""
        self.m.got_dilate(please("0" * 16))
        c = FakeConnection(self.events)
        self.m.connector_connection_made(c)
        self.assertIn(("outbound.use_connection",), self.events)
        self.assertIn(("inbound.use_connection",), self.events)
        del self.events[:]
        self.m.connection_lost(FakeConnection(self.events))  # not ours: ignored
        self.assertEqual(self.events, [])
        self.m.connection_lost(c)
        self.assertEqual(self.events, [("outbound.stop_using_connection",),
                                       ("inbound.stop_using_connection",),
                                       ("connector.stop", 1)])
        self.assertEqual(self.sent[-1], {"type": "reconnect"})
        del self.events[:]
        self.m.got_dilate(msg("connection-hints", hints=[]))  # stale: ignored
        self.assertEqual(self.events, [])
        self.m.got_dilate(msg("reconnecting"))
        self.assertEqual(self.events, [("connector.new", True, 2), ("connector.start", 2)])

    def test_follower_answers_reconnect(self):
        """The Follower drops its L3 on reconnect, stops the old connector,
        sends reconnecting, and starts the next generation."""
        self.m.got_dilate(please("f" * 16))
        c = FakeConnection(self.events, "c")
        self.m.connector_connection_made(c)
        del self.events[:]
        self.m.got_dilate(msg("reconnect"))
        self.assertEqual(self.events, [("outbound.stop_using_connection",),
                                       ("inbound.stop_using_connection",),
                                       ("c.disconnect",), ("connector.stop", 1),
                                       ("connector.new", False, 2), ("connector.start", 2)])
        self.assertEqual(self.sent[-1], {"type": "reconnecting"})

    def test_follower_waits_after_loss(self):
        """A Follower that loses its L3 waits for the Leader's reconnect
        (no new generation of its own)."""
        self.m.got_dilate(please("f" * 16))
        c = FakeConnection(self.events)
        self.m.connector_connection_made(c)
        del self.events[:]
        self.m.connection_lost(c)
        self.assertEqual([e[0] for e in self.events],
                         ["outbound.stop_using_connection", "inbound.stop_using_connection"])
        self.assertEqual(self.sent[-1]["type"], "please")
        self.m.got_dilate(msg("reconnect"))
        self.assertEqual(self.sent[-1], {"type": "reconnecting"})
        self.assertEqual(self.events[-2:], [("connector.new", False, 2), ("connector.start", 2)])

    def test_records_dispatched(self):
        """PING is answered with PONG, PONG fires send_ping's callback, ACK
        goes to Outbound, others to Inbound; a stale connection's records
        are ignored."""
        self.m.got_dilate(please("0" * 16))
        c = FakeConnection(self.events)
        self.m.connector_connection_made(c)
        del self.events[:]
        self.m.got_record(c, Ping(b"abcd"))
        self.assertEqual(c.sent, [Pong(b"abcd")])
        pongs = []
        self.m.send_ping(7, pongs.append)
        self.assertEqual(c.sent[-1], Ping(b"\x00\x00\x00\x07"))
        self.assertRaises(ValueError, self.m.send_ping, 7)  # that id already waits
        self.clock.advance(0.25)
        self.m.got_record(c, Pong(b"\x00\x00\x00\x07"))
        self.assertEqual(pongs, [0.25])  # on_pong gets the round-trip time
        self.m.got_record(c, Pong(b"\x00\x00\x00\x07"))  # a duplicate PONG: ignored
        self.assertEqual(pongs, [0.25])
        self.m.got_record(c, Ack(3))
        self.m.got_record(c, Data(1, 0, b"x"))
        self.m.got_record(FakeConnection(self.events), Data(1, 1, b"stale"))
        self.assertEqual(self.events, [("outbound.handle_ack", 3),
                                       ("inbound.got_record", Data(1, 0, b"x"))])

    def test_stop(self):
        """stop() drops the L3 and the connector; later messages are ignored."""
        self.m.got_dilate(please("0" * 16))
        c = FakeConnection(self.events, "c")
        self.m.connector_connection_made(c)
        del self.events[:]
        self.m.stop()
        self.assertIn(("c.disconnect",), self.events)
        self.assertIn(("connector.stop", 1), self.events)
        del self.events[:]
        self.m.got_dilate(msg("reconnecting"))
        self.m.connection_lost(c)
        self.assertEqual(self.events, [])

    def test_status_reports(self):
        """Generation and peer state are reported: connecting, connected
        (with the hint description), reconnecting, connecting gen 2."""
        reports = []
        m = Manager(MID, "ged", [].append, FakeInbound([]), FakeOutbound([]),
                    FakeRegistry([]), lambda lead, gen, mgr: FakeConnector([], lead, gen),
                    on_status=lambda g, p: reports.append((g, type(p).__name__,
                                                           getattr(p, "hint_description", None))))
        m.start()
        m.got_dilate(please("0" * 16))
        c = FakeConnection()
        c.description = "->tcp:127.0.0.1:1"
        m.connector_connection_made(c)
        m.connection_lost(c)
        m.got_dilate(msg("reconnecting"))
        self.assertEqual(reports, [(1, "ConnectingPeer", None),
                                   (1, "ConnectedPeer", "->tcp:127.0.0.1:1"),
                                   (1, "ReconnectingPeer", None),
                                   (2, "ConnectingPeer", None)])


class LateInputs(unittest.TestCase):
    """Each input that may arrive after the state it belongs to has its own
    reviewed transition; a peer's out-of-order message is logged and
    dropped; our own inputs where they have no transition raise."""

    def setUp(self):
        self.events = []
        self.sent = []
        self.m = Manager(MID, "ged", self.sent.append, FakeInbound(self.events),
                         FakeOutbound(self.events), FakeRegistry(self.events),
                         lambda lead, gen, mgr: FakeConnector(self.events, lead, gen),
                         clock=Clock())
        self.m.start()

    def connected(self, side):
        self.m.got_dilate(please(side))
        self.c = FakeConnection(self.events, "c")
        self.m.connector_connection_made(self.c)
        del self.events[:]

    def test_hints_after_selection(self):
        """Hints the peer sent before it saw the selection reach a
        connected Leader or Follower and change nothing."""
        for side in ("0" * 16, "f" * 16):
            self.setUp()
            self.connected(side)
            self.m.got_dilate(msg("connection-hints", hints=[{"type": "direct-tcp-v1"}]))
            self.assertEqual(self.events, [])

    def test_hints_while_leader_flushes(self):
        """Hints of the generation that ended, arriving before the
        Follower's reconnecting, are not given to any connector."""
        self.connected("0" * 16)
        self.m.connection_lost(self.c)
        del self.events[:]
        self.m.got_dilate(msg("connection-hints", hints=[{"type": "direct-tcp-v1"}]))
        self.assertEqual(self.events, [])
        self.m.got_dilate(msg("reconnecting"))
        self.assertEqual(self.events, [("connector.new", True, 2), ("connector.start", 2)])

    def test_everything_after_stop(self):
        """After stop(), every kind of DILATE message the peer may still
        have sent, and a second stop(), are absorbed without output."""
        self.connected("0" * 16)
        self.m.stop()
        del self.events[:]
        n = len(self.sent)
        for m in (please("0" * 16), please("f" * 16), msg("connection-hints", hints=[]),
                  msg("reconnect"), msg("reconnecting")):
            self.m.got_dilate(m)
        self.m.stop()
        self.assertEqual((self.events, len(self.sent)), ([], n))

    def test_out_of_order_peer_message_logged(self):
        """A reconnect sent to a Leader (only a Leader may send it) or a
        second please has no transition: it is logged as the peer's
        protocol error and changes nothing."""
        self.connected("0" * 16)
        logged = []
        from twisted.python import log
        log.addObserver(logged.append)
        self.addCleanup(log.removeObserver, logged.append)
        self.m.got_dilate(msg("reconnect"))
        self.m.got_dilate(please("0" * 16))
        self.assertEqual(self.events, [])
        text = [" ".join(map(str, e["message"])) for e in logged]
        self.assertEqual(len([t for t in text if "out of order" in t]), 2, text)
        self.assertTrue(any("'reconnect'" in t for t in text), text)

    def test_bug_below_is_not_blamed_on_the_peer(self):
        """A NoTransition raised by another machine while a peer message is
        handled (here: the Connector given hints) is our bug: it propagates
        instead of being logged as the peer's out-of-order message."""
        from automat import NoTransition

        class BrokenConnector(FakeConnector):
            def got_hints(self, hints):
                raise NoTransition("S_somewhere", "_got_hints")
        m = Manager(MID, "ged", [].append, FakeInbound([]), FakeOutbound([]),
                    FakeRegistry([]), lambda lead, gen, mgr: BrokenConnector([], lead, gen),
                    clock=Clock())
        m.start()
        m.got_dilate(please("0" * 16))
        self.assertRaises(NoTransition, m.got_dilate, msg("connection-hints", hints=[]))

    def test_own_inputs_without_transition_raise(self):
        """Our own inputs never arrive where they have no transition; if
        they did it is a bug, and it raises instead of being ignored."""
        from automat import NoTransition
        c = FakeConnection(self.events)
        # connected before any please: there is no Connector yet
        self.assertRaises(NoTransition, self.m.connector_connection_made, c)
        self.connected("0" * 16)
        self.assertRaises(NoTransition, self.m.connector_connection_made, c)
        self.assertRaises(NoTransition, self.m.start)


class Keepalive(unittest.TestCase):
    """The keepalive is the L3 connection's alone (test_connection); the
    Manager answers PINGs, counts PONGs nobody waited for, and dates the
    connection's expiry from ping_interval."""

    def test_manager_sends_no_pings(self):
        """Neither role sends PINGs of its own, whatever ping_interval."""
        for side in ("0" * 16, "f" * 16):
            clock = Clock()
            m = Manager(MID, "ged", [].append, FakeInbound([]), FakeOutbound([]),
                        FakeRegistry([]), lambda lead, gen, mgr: FakeConnector([], lead, gen),
                        clock=clock, ping_interval=1.0)
            m.start()
            m.got_dilate(please(side))
            c = FakeConnection([], "c")
            m.connector_connection_made(c)
            clock.advance(5)
            self.assertEqual((c.sent, clock.getDelayedCalls()), ([], []))
            m.got_record(c, Pong(b"\x00\x00\x00\x00"))  # the keepalive's PING's answer
            m.got_record(c, Pong(b"\x00\x00\x00\x00"))
            self.assertEqual(m._pings_answered, 2)

    def test_expiry_in_status(self):
        """ConnectedPeer.expires_at is two ping intervals away: when the
        L3 keepalive would drop a silent peer."""
        reports = []
        clock = Clock()
        clock.advance(100)
        m = Manager(MID, "ged", [].append, FakeInbound([]), FakeOutbound([]),
                    FakeRegistry([]), lambda lead, gen, mgr: FakeConnector([], lead, gen),
                    clock=clock, ping_interval=7.0, on_status=lambda g, p: reports.append(p))
        m.start()
        m.got_dilate(please("0" * 16))
        m.connector_connection_made(FakeConnection([], "c"))
        self.assertEqual(reports[-1].expires_at, 114.0)
