"""Hypothesis: whatever the server sends, the client never crashes.

Mailbox server protocol, "WebSocket Transport": unknown message types and
keys are ignored; a malformed message becomes a clear error (the wormhole
closes with mood errory), never an exception escaping into the reactor.
"""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.internet.task import Clock
from twisted.trial import unittest

import wormhole
from wormhole import errors

from .fakes import FakeServer

URL = "ws://127.0.0.1:1/v1"

TYPES = ["welcome", "nameplates", "allocated", "claimed", "released", "message", "closed",
         "error", "ack", "pong", "unknown-type"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children,
                                                                       max_size=3),
    max_leaves=8)

messages = st.fixed_dictionaries(
    {"type": st.sampled_from(TYPES)},
    optional={k: json_values | st.text(alphabet="0123456789abcdef")
              for k in ["welcome", "nameplates", "nameplate", "mailbox", "side", "phase",
                        "body", "error", "orig", "id", "motd"]})


class DecodingTests(unittest.TestCase):
    def run_client(self, payloads, set_code=True):
        clock = Clock()
        server = FakeServer(clock)
        w = wormhole.create("appid", URL, clock, _endpoint_factory=server.endpoint_factory)
        if set_code:
            w.set_code("4-purple-sausages")
        server.pump()
        closed = []
        w._closed_observer.when_fired().addBoth(closed.append)
        for p in payloads:
            server.inject(server.conns[0], p)
        server.pump()
        w.close().addErrback(lambda f: None)
        server.pump()
        self.assertEqual(clock.getDelayedCalls(), [])
        return w, closed

    @settings(max_examples=300, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(messages, max_size=6))
    def test_random_messages(self, msgs):
        """Random server messages (after a welcome) never raise out of the
        client; the wormhole still closes with a WormholeError or a mood."""
        payloads = [json.dumps(m).encode() for m in msgs]
        w, closed = self.run_client(payloads)
        self.assertEqual(len(closed), 1)
        result = closed[0]
        if not isinstance(result, str):
            self.assertIsInstance(result.value, errors.WormholeError)

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.binary(max_size=40) | json_values.map(
        lambda v: json.dumps(v).encode()), max_size=4))
    def test_random_payloads(self, payloads):
        """Random bytes and non-object JSON never raise out of the client."""
        w, closed = self.run_client(payloads, set_code=False)
        self.assertEqual(len(closed), 1)

    def test_malformed_is_protocol_error(self):
        """A 'claimed' without a mailbox closes with ProtocolError (errory)."""
        payloads = [json.dumps({"type": "claimed"}).encode()]
        w, closed = self.run_client(payloads)
        self.assertIsInstance(closed[0].value, errors.ProtocolError)
        self.assertIn("claimed", str(closed[0].value))


class ReorderingTests(unittest.TestCase):
    @settings(max_examples=60, deadline=None)
    @given(st.integers(min_value=1, max_value=6).flatmap(
        lambda n: st.tuples(st.just(n), st.lists(st.integers(0, n - 1), max_size=8),
                            st.permutations(list(range(n))))))
    def test_reordered_and_repeated(self, case):
        """Peer phases arriving in any order, some repeated (the server
        neither orders nor de-duplicates: Mailbox server protocol,
        "Mailboxes"), reach the application exactly once each, in numeric
        order (Client-to-client protocol)."""
        from wormhole._crypto import derive_phase_key, encrypt_data
        n, repeats, order = case
        clock = Clock()
        server = FakeServer(clock)
        w1 = wormhole.create("appid", URL, clock, _endpoint_factory=server.endpoint_factory)
        w2 = wormhole.create("appid", URL, clock, _endpoint_factory=server.endpoint_factory)
        w1.set_code("4-a-b")
        w2.set_code("4-a-b")
        server.pump()
        key = []
        w2.get_unverified_key().addCallback(key.append)
        server.pump()
        conn1 = [c for c in server.conns if c.rc is w1._boss._RC][0]
        side2 = [c for c in server.conns if c.rc is w2._boss._RC][0].side
        bodies = {i: encrypt_data(derive_phase_key(key[0], side2, str(i)), b"m%d" % i)
                  for i in range(n)}
        for i in list(order) + list(repeats):
            server._send(conn1, {"type": "message", "side": side2, "phase": str(i),
                                 "body": bodies[i].hex()})
        got = []
        for _ in range(n + 1):
            w1.get_message().addBoth(got.append)
        server.pump()
        self.assertEqual(got, [b"m%d" % i for i in range(n)])
        results = []
        w1.close().addBoth(results.append)
        w2.close().addBoth(results.append)
        server.pump()
        self.assertEqual(results, ["happy", "happy"])
        self.assertEqual(len(got), n + 1)  # the extra one: WormholeClosed
        self.assertIsInstance(got[-1].value, errors.WormholeClosed)
