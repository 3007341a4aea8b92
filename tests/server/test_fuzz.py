"""Random input never breaks a connection machine (hypothesis)."""

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole_mailbox._connection import Connection, ServerContext
from wormhole_mailbox._limits import Limits
from wormhole_mailbox._messages import CLIENT_TYPES
from wormhole_mailbox._model import Model
from wormhole_mailbox._permissions import NoPermissions

from ._fakes import FakeGlue, RecordingStore, RecordingUsage

_scalars = st.one_of(st.none(), st.booleans(), st.integers(),
                     st.floats(allow_nan=False), st.text(max_size=20))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.text(max_size=5), inner, max_size=3)), max_leaves=8)
_keys = st.sampled_from(["type", "id", "appid", "side", "nameplate",
                         "mailbox", "phase", "body", "mood", "ping",
                         "method", "stamp", "other"])
_messages = st.dictionaries(_keys, st.one_of(
    _values, st.sampled_from(sorted(CLIENT_TYPES)), st.just("4"),
    st.just("00ff")), max_size=6)


class Fuzz(unittest.TestCase):
    def run_script(self, payloads):
        clock = Clock()
        store, usage = RecordingStore(), RecordingUsage()
        limits = Limits(max_message_size=4096)
        model = Model(store, usage, random.Random(0), limits)
        ctx = ServerContext(clock, model, store, usage, NoPermissions(),
                            limits,
                            {}, allow_list=True)
        glues = [FakeGlue(), FakeGlue()]
        conns = [Connection(ctx, g) for g in glues]
        for c in conns:
            c.connected()
        for i, payload in enumerate(payloads):
            glue = glues[i % 2]
            before = len(glue.sent)
            conns[i % 2].received(payload)
            new = glue.sent[before:]
            if glue.dropped is None and not glue.aborted:
                # every message gets at least an ack or an error
                self.assertTrue(new, payload)
            for msg in new:
                self.assertIn("server_tx", msg)
                if msg["type"] == "error":
                    self.assertIsInstance(msg["error"], str)
                    self.assertIn("orig", msg)
                    json.dumps(msg)
        for c in conns:
            c.lost()
        self.assertEqual(self.flushLoggedErrors(), [])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(_messages, max_size=12))
    def test_random_messages(self, msgs):
        """Random JSON objects with protocol-like keys: always an answer,
        never an exception."""
        self.run_script([json.dumps(m).encode() for m in msgs])

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.binary(max_size=64), max_size=8))
    def test_random_bytes(self, payloads):
        """Arbitrary bytes: always an error, never an exception."""
        self.run_script(payloads)
