"""Hypothesis feeds random and mutated Mailbox server messages to our
client's RendezvousConnector (docs/security.md, "Mailbox client"):
nothing raises out of it, and anything it cannot handle becomes one
WormholeError given to the Boss."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole import errors
from wormhole._status import StatusTracker
from wormhole.util import bytes_to_dict

from ..client.common import recorded_connector
from ..client.fakes import FakeNetwork

TYPES = ["welcome", "nameplates", "allocated", "claimed", "released", "message",
         "closed", "error", "ack", "pong", "other"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3),
    max_leaves=12)
messages = st.builds(
    lambda t, extra: json.dumps(dict(extra, type=t)).encode(),
    st.sampled_from(TYPES),
    st.dictionaries(st.sampled_from(["welcome", "nameplates", "nameplate", "mailbox", "side",
                                     "phase", "body", "error", "orig"]), json_values,
                    max_size=4))
deep = st.builds(lambda n, open_, close: open_ * n + close * n,
                 st.integers(60, 3000), st.sampled_from([b"[", b'{"a":']),
                 st.sampled_from([b"]", b"}"]))


class ServerMessages(unittest.TestCase):
    @settings(max_examples=300, deadline=None)
    @given(st.lists(messages | deep | st.binary(max_size=30), min_size=1, max_size=6),
           st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=3))
    def test_any_message(self, payloads, flips):
        """Well-formed messages of every type with any values, deep
        nesting, garbage, and bytes flipped in them: ws_message never
        raises, and every complaint reaches the Boss as a WormholeError."""
        events = []
        net = FakeNetwork()
        rc = recorded_connector("ws://127.0.0.1:4000/v1", Clock(), net,
                                StatusTracker(None, None), events)
        rc.start()
        net.accept(rc, welcome={})
        for payload in payloads:
            payload = bytearray(payload)
            for pos, x in flips:
                if payload:
                    payload[pos % len(payload)] ^= x
            rc.ws_message(bytes(payload))
        for e in events:
            if e[0] == "b.error":
                self.assertIsInstance(e[1], errors.WormholeError)

    @settings(max_examples=300, deadline=None)
    @given(deep | st.binary(max_size=60) | messages)
    def test_bytes_to_dict(self, payload):
        """The shared decoder answers anything with a dict or ValueError."""
        try:
            self.assertIsInstance(bytes_to_dict(payload), dict)
        except ValueError:
            pass
