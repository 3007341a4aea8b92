"""A catalogue of malformed and out-of-order inputs over real loopback.

Each one gets an `error` with `orig` (the original message when it parsed,
else a short description) and a text that says what to do; nothing is
logged as an error; and afterwards the server still serves a full happy
exchange on other connections (Mailbox server protocol, "Connection-Specific
(Client-to-Server) Messages": "If any client->server command is invalid ...
an `error` response will be sent"; docs/server.md, "Wire differences from
the reference (decided here)").
"""

import json
import struct

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.trial import unittest

from wormhole_mailbox.testing import start_mailbox_server

from ._client import connect, happy_exchange

BIND = {"type": "bind", "appid": "app", "side": "s1", "id": "b"}
CLAIM = {"type": "claim", "nameplate": "4", "id": "c"}
OPEN = {"type": "open", "mailbox": "mb1", "id": "o"}
MAX = 64 * 1024

# (name, setup messages, bad payload (dict or bytes), words in the error)
CASES = [
    ("not_json", [], b"hello", "not JSON"),
    ("empty", [], b"", "not JSON"),
    ("invalid_utf8", [], b"\xff\xfe{}", "not valid UTF-8"),
    ("deep_nesting", [], b"[" * 10000 + b"]" * 10000, "32 levels deep"),
    # parseable, but echoing it in `orig` could exhaust the stack
    ("nesting_under_recursion_limit", [],
     b'{"type": "ping", "ping": 1, "x": ' + b"[" * 900 + b"]" * 900 + b"}",
     "32 levels deep"),
    ("array", [], [1, 2], "JSON object"),
    ("string", [], "bind", "JSON object"),
    ("number", [], 42, "JSON object"),
    ("null", [], None, "JSON object"),
    ("no_type", [], {"id": "x"}, "missing 'type'"),
    ("type_number", [], {"type": 5}, "'type' must be a string"),
    ("type_null", [], {"type": None}, "'type' must be a string"),
    ("unknown_type", [], {"type": "frob"}, "unknown type"),
    ("server_type", [], {"type": "welcome"}, "unknown type"),
    ("id_object", [], {"type": "ping", "ping": 1, "id": {"a": 1}},
     "'id' must be a string"),
    ("too_large", [], {"type": "ping", "ping": "x" * (MAX + 10)},
     "too large"),
    ("claim_before_bind", [], CLAIM, "must bind first"),
    ("allocate_before_bind", [], {"type": "allocate"}, "must bind first"),
    ("open_before_bind", [], OPEN, "must bind first"),
    ("add_before_bind", [], {"type": "add", "phase": "p", "body": "00"},
     "must bind first"),
    ("list_before_bind", [], {"type": "list"}, "must bind first"),
    ("release_before_bind", [], {"type": "release"}, "must bind first"),
    ("close_before_bind", [], {"type": "close"}, "must bind first"),
    ("bind_no_appid", [], {"type": "bind", "side": "s"},
     "bind requires 'appid'"),
    ("bind_no_side", [], {"type": "bind", "appid": "a"},
     "bind requires 'side'"),
    ("bind_appid_number", [], {"type": "bind", "appid": 7, "side": "s"},
     "'appid' must be a string"),
    ("bind_side_list", [], {"type": "bind", "appid": "a", "side": ["s"]},
     "'side' must be a string"),
    ("bind_appid_empty", [], {"type": "bind", "appid": "", "side": "s"},
     "must not be empty"),
    ("bind_appid_too_long", [], {"type": "bind", "appid": "a" * 2000,
                                 "side": "s"}, "too long"),
    ("bind_twice", [BIND], BIND, "already bound"),
    ("claim_no_nameplate", [BIND], {"type": "claim"},
     "claim requires 'nameplate'"),
    ("claim_nameplate_number", [BIND], {"type": "claim", "nameplate": 4},
     "must be a string"),
    ("claim_nameplate_letters", [BIND], {"type": "claim",
                                         "nameplate": "abc"},
     "string of digits"),
    ("claim_nameplate_negative", [BIND], {"type": "claim",
                                          "nameplate": "-1"},
     "string of digits"),
    ("claim_nameplate_too_long", [BIND], {"type": "claim",
                                          "nameplate": "1" * 50},
     "too long"),
    ("claim_twice", [BIND, CLAIM], CLAIM, "only one claim"),
    ("allocate_twice", [BIND, {"type": "allocate"}], {"type": "allocate"},
     "don't be greedy"),
    ("allocate_after_claim", [BIND, CLAIM], {"type": "allocate"},
     "allocate must come before claim"),
    ("release_unclaimed", [BIND], {"type": "release"},
     "release without nameplate must follow claim"),
    ("release_other_nameplate", [BIND, CLAIM],
     {"type": "release", "nameplate": "5"}, "same nameplate"),
    ("release_twice", [BIND, CLAIM, {"type": "release"}],
     {"type": "release"}, "only one release"),
    ("open_no_mailbox", [BIND], {"type": "open"},
     "open requires 'mailbox'"),
    ("open_mailbox_number", [BIND], {"type": "open", "mailbox": 3},
     "must be a string"),
    ("open_twice", [BIND, OPEN], OPEN, "only one open"),
    ("add_before_open", [BIND], {"type": "add", "phase": "p", "body": "00"},
     "must open mailbox before adding"),
    ("add_no_phase", [BIND, OPEN], {"type": "add", "body": "00"},
     "missing 'phase'"),
    ("add_no_body", [BIND, OPEN], {"type": "add", "phase": "p"},
     "missing 'body'"),
    ("add_body_not_hex", [BIND, OPEN],
     {"type": "add", "phase": "p", "body": "zz"}, "hex string"),
    ("add_body_odd_length", [BIND, OPEN],
     {"type": "add", "phase": "p", "body": "abc"}, "hex string"),
    ("add_body_number", [BIND, OPEN],
     {"type": "add", "phase": "p", "body": 12}, "hex string"),
    ("add_phase_number", [BIND, OPEN],
     {"type": "add", "phase": 1, "body": "00"}, "must be a string"),
    ("close_before_open", [BIND], {"type": "close"},
     "close without mailbox must follow open"),
    ("close_other_mailbox", [BIND, OPEN],
     {"type": "close", "mailbox": "mb2"}, "same mailbox"),
    ("close_twice", [BIND, OPEN, {"type": "close"}], {"type": "close"},
     "only one close"),
    ("add_after_close", [BIND, OPEN, {"type": "close"}],
     {"type": "add", "phase": "p", "body": "00"}, "already closed"),
    ("close_mood_number", [BIND, OPEN], {"type": "close", "mood": 3},
     "must be a string"),
    ("ping_no_ping", [], {"type": "ping"}, "ping requires 'ping'"),
    ("ping_object", [], {"type": "ping", "ping": {}}, "must be a number"),
    ("permissions_no_method", [], {"type": "submit-permissions"},
     "requires 'method'"),
    ("permissions_after_bind", [BIND],
     {"type": "submit-permissions", "method": "none"},
     "must come before bind"),
]


class Catalogue(unittest.TestCase):
    @inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, max_message_size=MAX)
        self.addCleanup(self.srv.stop)

    @inlineCallbacks
    def check(self, setup, bad, words):
        c = yield connect(reactor, self.srv.url)
        self.addCleanup(c.close)
        yield c.next("welcome")
        for msg in setup:
            c.send(**msg)
        c.send(type="ping", ping="sync")
        yield c.next("pong")
        c.received = []
        payload = bad if isinstance(bad, bytes) else \
            json.dumps(bad).encode("utf-8")
        c.send_raw(payload)
        err = yield c.next("error")
        self.assertIn(words, err["error"])
        self.assertGreater(len(err["error"]), 10)
        if isinstance(bad, bytes) or len(payload) > MAX:
            self.assertIsInstance(err["orig"], str)
            self.assertTrue(err["orig"].startswith("<"), err["orig"])
        else:
            self.assertEqual(err["orig"], bad)
        # the connection itself still works
        c.send(type="ping", ping=2)
        yield c.next("pong", pong=2)
        yield happy_exchange(reactor, self.srv.url)
        self.assertEqual(self.flushLoggedErrors(), [])

    @inlineCallbacks
    def test_third_side_crowded(self):
        """A third side claiming a nameplate gets error `crowded`; the two
        first sides carry on, and the usage record says crowded."""
        a = yield connect(reactor, self.srv.url)
        b = yield connect(reactor, self.srv.url)
        c = yield connect(reactor, self.srv.url)
        for n, x in enumerate((a, b, c)):
            self.addCleanup(x.close)
            x.send(type="bind", appid="app", side=f"side{n}")
            x.send(type="claim", nameplate="9")
            if x is not c:
                yield x.next("claimed")
        err = yield c.next("error")
        self.assertEqual(err["error"], "crowded")
        self.assertEqual(err["orig"], {"type": "claim", "nameplate": "9"})
        for x in (a, b):
            x.send(type="release")
            yield x.next("released")
        self.assertEqual([r["result"] for r in self.srv.usage()
                          if r["kind"] == "nameplate"], ["crowded"])
        yield happy_exchange(reactor, self.srv.url)

    @inlineCallbacks
    def test_release_someone_elses(self):
        """Releasing a nameplate another side claimed is refused."""
        a = yield connect(reactor, self.srv.url)
        b = yield connect(reactor, self.srv.url)
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        a.send(type="bind", appid="app", side="a")
        a.send(type="claim", nameplate="6")
        yield a.next("claimed")
        b.send(type="bind", appid="app", side="b")
        b.send(type="release", nameplate="6")
        err = yield b.next("error")
        self.assertIn("never claimed by your side", err["error"])
        yield happy_exchange(reactor, self.srv.url)


def _make(name, setup, bad, words):
    def test(self):
        return self.check(setup, bad, words)
    test.__name__ = f"test_{name}"
    test.__doc__ = f"{name}: answered by an error containing {words!r}."
    return test


for _case in CASES:
    setattr(Catalogue, f"test_{_case[0]}", _make(*_case))


def _frame(opcode, payload, mask=True, rsv=0):
    """One raw WebSocket frame (RFC 6455 5.2), FIN set."""
    head = bytes([0x80 | rsv << 4 | opcode])
    n = len(payload)
    maskbit = 0x80 if mask else 0
    if n < 126:
        head += bytes([maskbit | n])
    elif n < 65536:
        head += bytes([maskbit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([maskbit | 127]) + struct.pack("!Q", n)
    if mask:
        key = b"\x01\x02\x03\x04"
        head += key
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return head + payload


class Framing(unittest.TestCase):
    """WebSocket framing violations get the proper close code (RFC 6455
    7.4.1) and do not disturb other clients."""

    @inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, max_message_size=1000)
        self.addCleanup(self.srv.stop)

    @inlineCallbacks
    def raw(self, data, code):
        c = yield connect(reactor, self.srv.url)
        self.addCleanup(c.close)
        yield c.next("welcome")
        c.proto.transport.write(data)
        got, _reason = yield c.when_closed()
        self.assertEqual(got, code)
        yield happy_exchange(reactor, self.srv.url)
        self.assertEqual(self.flushLoggedErrors(), [])

    def test_unmasked(self):
        """An unmasked client frame: 1002 protocol error."""
        return self.raw(_frame(2, b'{"type":"ping","ping":1}', mask=False),
                        1002)

    def test_reserved_bit(self):
        """A reserved bit without an extension: 1002."""
        return self.raw(_frame(1, b"{}", rsv=4), 1002)

    def test_unknown_opcode(self):
        """An unknown opcode: 1002."""
        return self.raw(_frame(3, b""), 1002)

    def test_invalid_utf8_text(self):
        """A text frame that is not UTF-8: 1007."""
        return self.raw(_frame(1, b"\xff\xfe\xfd"), 1007)

    def test_huge(self):
        """A message far beyond the limit: 1009 (message too big)."""
        return self.raw(_frame(2, b"0" * 100000), 1009)
