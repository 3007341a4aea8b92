"""Hint and ability parsing (File-transfer protocol, "Transit")."""

from hypothesis import given
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole._transit import _hints as h


class ParseHints(unittest.TestCase):
    def test_direct(self):
        """A direct-tcp-v1 hint parses; priority defaults to 0.0."""
        self.assertEqual(h.parse_hint({"type": "direct-tcp-v1", "hostname": "127.0.0.1",
                                       "port": 4001}),
                         h.DirectTCPV1Hint("127.0.0.1", 4001, 0.0))
        self.assertEqual(h.parse_hint({"type": "direct-tcp-v1", "hostname": "a.example",
                                       "port": 1, "priority": 2}).priority, 2.0)

    def test_tor(self):
        """tor-tcp-v1 parses into its own type (we can't dial it without Tor)."""
        self.assertEqual(h.parse_hint({"type": "tor-tcp-v1", "hostname": "x.onion", "port": 80}),
                         h.TorTCPV1Hint("x.onion", 80, 0.0))

    def test_relay(self):
        """relay-v1 carries inner hints, with or without their own type;
        unusable inner hints are dropped, the rest kept."""
        d = {"type": "relay-v1", "hints": [
            {"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 4001, "priority": 0.0},
            {"hostname": "relay.example", "port": 4002},
            {"type": "websocket-v9", "url": "ws://x"},
            {"type": "direct-tcp-v1", "hostname": "", "port": 4001},
            "not a dict",
        ]}
        self.assertEqual(h.parse_hint(d), h.RelayV1Hint((
            h.DirectTCPV1Hint("127.0.0.1", 4001, 0.0),
            h.DirectTCPV1Hint("relay.example", 4002, 0.0))))

    def test_reference_shape_round_trips(self):
        """The dicts we emit are the reference's shape (type, priority,
        hostname, port; relay-v1 inner hints typed) and parse back."""
        relay = h.parse_relay_string("tcp:127.0.0.1:4001")
        self.assertEqual(relay.to_dict(), {"type": "relay-v1", "hints": [
            {"type": "direct-tcp-v1", "priority": 0.0, "hostname": "127.0.0.1", "port": 4001}]})
        self.assertEqual(h.parse_hint(relay.to_dict()), relay)

    def test_invalid(self):
        """Each malformed hint raises BadHint naming the problem."""
        bad = [
            "direct-tcp-v1",
            {"hostname": "a", "port": 1},
            {"type": "direct-tcp-v1", "port": 1},
            {"type": "direct-tcp-v1", "hostname": 7, "port": 1},
            {"type": "direct-tcp-v1", "hostname": "a b", "port": 1},
            {"type": "direct-tcp-v1", "hostname": "a", "port": "1"},
            {"type": "direct-tcp-v1", "hostname": "a", "port": True},
            {"type": "direct-tcp-v1", "hostname": "a", "port": 0},
            {"type": "direct-tcp-v1", "hostname": "a", "port": 65536},
            {"type": "direct-tcp-v1", "hostname": "a", "port": 1, "priority": "high"},
            {"type": "direct-tcp-v1", "hostname": "a", "port": 1, "priority": 10 ** 400},
            {"type": "relay-v1"},
            {"type": "relay-v1", "hints": []},
            {"type": "relay-v1", "hints": [{"hostname": "a"}]},
        ]
        for d in bad:
            self.assertRaises(h.BadHint, h.parse_hint, d)

    def test_unknown_types_ignored(self):
        """parse_hints keeps the good hints and reports unknown or bad ones
        instead of raising: hints come from the peer (File-transfer
        protocol, "Transit", expects new types in future versions)."""
        good, dropped = h.parse_hints([
            {"type": "webrtc-v1", "blob": "x"},
            {"type": "direct-tcp-v1", "hostname": "127.0.0.1", "port": 5},
            {"type": "direct-tcp-v1", "hostname": "127.0.0.1"},
        ])
        self.assertEqual(good, [h.DirectTCPV1Hint("127.0.0.1", 5, 0.0)])
        self.assertEqual(len(dropped), 2)
        self.assertIn("webrtc-v1", dropped[0])
        self.assertRaises(TypeError, h.parse_hints, {"type": "direct-tcp-v1"})

    def test_websocket_inside_relay(self):
        """A relay-v1 hint may name WebSocket URLs (websocket-v1, ws:// or
        wss://) beside TCP ones; inner hints of unknown type or with a bad
        URL are ignored, the rest kept; the hint round-trips."""
        d = {"type": "relay-v1", "name": "example.org", "hints": [
            {"type": "direct-tcp-v1", "hostname": "relay.example.org", "port": 1234},
            {"type": "websocket-v1", "url": "wss://relay.example.org:8000", "priority": 1},
            {"type": "websocket-v1", "url": "ws://relay.example.org/path"},
            {"type": "websocket-v1", "url": "http://relay.example.org/"},
            {"type": "websocket-v1", "url": "ws://:80/"},
            {"type": "websocket-v1", "url": "ws://h:99999/"},
            {"type": "websocket-v1"},
            {"type": "webrtc-v1", "sdp": "x"},
        ]}
        relay = h.parse_hint(d)
        self.assertEqual(relay.hints, (
            h.DirectTCPV1Hint("relay.example.org", 1234, 0.0),
            h.WebSocketV1Hint("wss://relay.example.org:8000", 1.0),
            h.WebSocketV1Hint("ws://relay.example.org/path", 0.0)))
        wss, ws = relay.hints[1:]
        self.assertEqual((wss.hostname, wss.port, wss.tls), ("relay.example.org", 8000, True))
        self.assertEqual((ws.hostname, ws.port, ws.tls), ("relay.example.org", 80, False))
        self.assertEqual(h.parse_hint(relay.to_dict()), relay)
        self.assertEqual(h.describe_hint(wss), "->wss://relay.example.org:8000")
        # only inside a relay hint: a bare websocket-v1 is of no use
        self.assertRaises(h.BadHint, h.parse_hint, d["hints"][1])

    def test_relay_locations(self):
        """Our relays: tcp:HOST:PORT, ws:// or wss:// URLs, several at once
        (comma-separated or a list), each its own relay-v1 hint, no repeats."""
        relays = h.parse_relay_locations("tcp:r:4001, ws://r:4002/,wss://r/,tcp:r:4001")
        self.assertEqual(relays, [
            h.RelayV1Hint((h.DirectTCPV1Hint("r", 4001, 0.0),)),
            h.RelayV1Hint((h.WebSocketV1Hint("ws://r:4002/", 0.0),)),
            h.RelayV1Hint((h.WebSocketV1Hint("wss://r/", 0.0),))])
        self.assertEqual(h.parse_relay_locations(["ws://r:1/"]),
                         [h.RelayV1Hint((h.WebSocketV1Hint("ws://r:1/", 0.0),))])
        for bad in ["ws://", "ws://r:x/", "wss://r/ x", "http://r/"]:
            self.assertRaises(ValueError, h.parse_relay_locations, bad)
        self.assertRaises(TypeError, h.parse_relay_locations, 4001)

    def test_hint_bound(self):
        """A peer may name at most MAX_HINTS_PER_PEER addresses: the rest
        are dropped with one reason, a relay's inner list is cut to what is
        left, and the budget spans several hint messages."""
        limit = h.MAX_HINTS_PER_PEER
        flood = [{"type": "direct-tcp-v1", "hostname": "10.0.0.1", "port": p}
                 for p in range(1, 5001)]
        good, dropped = h.parse_hints(flood)
        self.assertEqual(len(good), limit)
        self.assertEqual(dropped, [f"{5000 - limit} more hint(s) ignored: a peer "
                                   f"may name at most {limit} addresses"])
        budget = h.HintBudget(limit=5)
        good, dropped = budget.parse(flood[:3])
        self.assertEqual((len(good), dropped), (3, []))
        relay = {"type": "relay-v1", "hints": flood[:4]}
        good, dropped = budget.parse([relay, flood[5]])
        self.assertEqual(len(good), 1)
        self.assertEqual(len(good[0].hints), 2)
        self.assertIn("cut to 2 of its 4", dropped[0])
        self.assertIn("1 more hint(s) ignored", dropped[1])

    def test_relay_inner_flood(self):
        """A relay hint with a huge inner list is parsed only up to the bound."""
        inner = [{"hostname": "10.0.0.1", "port": p} for p in range(1, 60001)]
        relay = h.parse_hint({"type": "relay-v1", "hints": inner})
        self.assertEqual(len(relay.hints), h.MAX_HINTS_PER_PEER)

    def test_relay_string(self):
        """The baked-in relay must be tcp:HOST:PORT."""
        for s in ["127.0.0.1:4001", "tcp:127.0.0.1", "tcp::4001", "tcp:h:x", "tcp:h:0", "udp:h:1"]:
            self.assertRaises(ValueError, h.parse_relay_string, s)
        self.assertRaises(TypeError, h.parse_relay_string, b"tcp:h:1")

    def test_describe(self):
        """describe_hint says direct or relay, host and port."""
        self.assertEqual(h.describe_hint(h.DirectTCPV1Hint("127.0.0.1", 5)), "->tcp:127.0.0.1:5")
        self.assertEqual(h.describe_hint(h.parse_relay_string("tcp:r:7")), "->relay:tcp:r:7")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["type", "hostname", "port", "priority", "hints", "x"]),
                      children, max_size=5),
    max_leaves=20)
urls = st.sampled_from(["ws://r/", "wss://r:1/", "ws://:0/", "http://r/", "ws://r:99999/",
                         "wss://r/ x", ""]) | st.text(max_size=30)
hint_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["direct-tcp-v1", "tor-tcp-v1", "relay-v1", "other"])},
    optional={"hostname": json_values, "port": json_values, "priority": json_values,
              "hints": st.lists(json_values | st.fixed_dictionaries(
                  {"hostname": json_values, "port": json_values})
                  | st.fixed_dictionaries(
                      {"type": st.just("websocket-v1")},
                      optional={"url": urls | json_values, "priority": json_values}),
                  max_size=3)})


class PeerInput(unittest.TestCase):
    @given(st.lists(json_values | hint_like, max_size=6))
    def test_never_raises_on_peer_hints(self, hints):
        """Whatever JSON the peer sends as hints, parsing keeps what is
        usable and reports the rest, never raising (the peer's data must
        not crash us)."""
        good, dropped = h.parse_hints(hints)
        self.assertEqual(len(good) + len(dropped), len(hints))
        for g in good:
            self.assertIsInstance(g, (h.DirectTCPV1Hint, h.TorTCPV1Hint, h.RelayV1Hint))
            for inner in getattr(g, "hints", ()):
                if isinstance(inner, h.WebSocketV1Hint):
                    # a kept URL is usable: scheme, host and port all known
                    self.assertIn(inner.url.split(":")[0], ("ws", "wss"))
                    self.assertTrue(inner.hostname)
                    self.assertTrue(0 < inner.port < 65536)
