"""L1 Manager (spec 000 "Initiating Dilation", "Leaders and Followers"):
please, roles by side, connection-hints, reconnect/reconnecting and
generations, record dispatch; with recording fakes."""

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


class PingInterval(unittest.TestCase):
    def make(self, side):
        from twisted.internet.task import Clock
        self.clock = Clock()
        self.events = []
        ids = iter([b"id01", b"id02", b"id03"])
        self.m = Manager(MID, "ged", [].append, FakeInbound([]), FakeOutbound([]),
                         FakeRegistry([]), lambda lead, gen, mgr: FakeConnector([], lead, gen),
                         clock=self.clock, ping_interval=1.0, entropy=lambda n: next(ids))
        self.m.start()
        self.m.got_dilate(please(side))
        self.c = FakeConnection(self.events, "c")
        self.m.connector_connection_made(self.c)

    def test_leader_pings_and_drops_silent(self):
        """ping_interval (the reference 0.24's wire behaviour): the Leader
        sends a PING with a random id each interval; answered, it pings
        again; unanswered by the next tick, it drops the connection."""
        self.make("0" * 16)
        self.clock.advance(1)
        self.assertEqual(self.c.sent, [Ping(b"id01")])
        self.m.got_record(self.c, Pong(b"id01"))
        self.clock.advance(1)
        self.assertEqual(self.c.sent[-1], Ping(b"id02"))
        self.assertNotIn(("c.disconnect",), self.events)
        self.clock.advance(1)
        self.assertIn(("c.disconnect",), self.events)
        self.m.connection_lost(self.c)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_follower_does_not_ping(self):
        """Only the Leader pings."""
        self.make("f" * 16)
        self.clock.advance(5)
        self.assertEqual(self.c.sent, [])
