"""The whole client (create(), Boss and every machine) against an
in-memory Mailbox server, on a Clock: the Client API."""

import io

from twisted.internet.task import Clock
from twisted.trial import unittest
from zope.interface.verify import verifyObject

import wormhole
from wormhole import _interfaces, errors
from wormhole._crypto import derive_phase_key, encrypt_data

from ...client.fakes import FakeServer
from ._support import Delegate

APPID = "example.com/test"
URL = "ws://127.0.0.1:1/v1"


GETTERS = ("get_welcome", "get_code", "get_unverified_key", "get_verifier",
           "get_versions", "get_message")


class WormholeTests(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.server = FakeServer(self.clock)
        self.stderr = io.StringIO()

    def create(self, **kwargs):
        kwargs.setdefault("stderr", self.stderr)
        return wormhole.create(APPID, URL, self.clock,
                               _endpoint_factory=self.server.endpoint_factory, **kwargs)

    def pump(self):
        self.server.pump()

    def ok(self, d):
        self.pump()
        return self.successResultOf(d)

    def fails(self, d, error):
        self.pump()
        return self.failureResultOf(d, error)

    def closed_with(self, w, error):
        d = w.close()
        self.pump()
        return self.failureResultOf(d, error)

    def close_lonely(self, w):
        d = w.close()
        self.pump()
        self.failureResultOf(d, errors.LonelyError)

    def close_both(self, w1, w2):
        d1, d2 = w1.close(), w2.close()
        self.pump()
        return self.successResultOf(d1), self.successResultOf(d2)

    def test_interfaces(self):
        """Both facades provide their interfaces."""
        w = self.create()
        verifyObject(_interfaces.IDeferredWormhole, w)
        verifyObject(_interfaces.IWormholeEvents, w)
        wd = self.create(delegate=Delegate())
        verifyObject(_interfaces.IWormhole, wd)
        verifyObject(_interfaces.IBoss, w._boss)
        self.pump()
        self.close_lonely(w)
        wd.close()
        self.pump()

    def test_exchange(self):
        """Allocate on one side, set_code on the other: code, key, verifier,
        versions, messages both ways, close happy; server saw happy moods."""
        w1 = self.create(versions={"w1": 1})
        w2 = self.create(versions={"w2": 2})
        d_code = w1.get_code()
        w1.allocate_code()
        self.pump()
        code = self.successResultOf(d_code)
        self.assertRegex(code, r"^1-\w+-\w+$")
        self.assertEqual(self.ok(w1.get_code()), code)  # again, after
        w2.set_code(code)
        w1.send_message(b"one")
        w2.send_message(b"two")
        self.pump()
        k1 = self.ok(w1.get_unverified_key())
        k2 = self.ok(w2.get_unverified_key())
        self.assertEqual(k1, k2)
        self.assertEqual(self.ok(w1.get_verifier()),
                         self.ok(w2.get_verifier()))
        self.assertEqual(self.ok(w1.get_versions()), {"w2": 2})
        self.assertEqual(self.ok(w2.get_versions()), {"w1": 1})
        self.assertEqual(self.ok(w1.get_message()), b"two")
        self.assertEqual(self.ok(w2.get_message()), b"one")
        self.assertEqual(w1.derive_key("purpose", 16), w2.derive_key("purpose", 16))
        self.assertEqual(self.close_both(w1, w2), ("happy", "happy"))
        self.assertEqual(sorted(m for s, m in self.server.moods), ["happy", "happy"])
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_ten_messages_each_way(self):
        """Ten messages each way arrive once each, in order."""
        w1, w2 = self.create(), self.create()
        w1.set_code("5-a-b")
        w2.set_code("5-a-b")
        for i in range(10):
            w1.send_message(b"a%d" % i)
            w2.send_message(b"b%d" % i)
        ds1 = [w1.get_message() for i in range(10)]
        self.pump()
        ds2 = [w2.get_message() for i in range(10)]
        self.pump()
        self.assertEqual([self.successResultOf(d) for d in ds1], [b"b%d" % i for i in range(10)])
        self.assertEqual([self.successResultOf(d) for d in ds2], [b"a%d" % i for i in range(10)])
        self.close_both(w1, w2)

    def test_wrong_code(self):
        """Different codes: WrongPasswordError on every pending Deferred and
        on close, both sides report mood scary."""
        w1, w2 = self.create(), self.create()
        w1.set_code("5-a-b")
        w2.set_code("5-a-c")
        d_verifier = w1.get_verifier()
        d_msg = w2.get_message()
        self.pump()
        self.failureResultOf(d_verifier, errors.WrongPasswordError)
        self.failureResultOf(d_msg, errors.WrongPasswordError)
        # before close(): the wormhole closed itself, so every getter,
        # also those that had answered, fails with the error (reference 0.24)
        for w in (w1, w2):
            for getter in GETTERS:
                self.fails(getattr(w, getter)(), errors.WrongPasswordError)
        self.closed_with(w1, errors.WrongPasswordError)
        self.closed_with(w2, errors.WrongPasswordError)
        self.assertEqual([m for s, m in self.server.moods], ["scary", "scary"])
        self.assertEqual(self.server.nameplates["5"]["sides"], set())
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_lonely(self):
        """close() before the peer's PAKE arrives: LonelyError, mood lonely."""
        w = self.create()
        w.set_code("5-a-b")
        d_key = w.get_unverified_key()
        self.pump()
        d = w.close()
        self.pump()
        self.failureResultOf(d, errors.LonelyError)
        self.failureResultOf(d_key, errors.LonelyError)
        self.assertEqual(self.server.moods[-1][1], "lonely")
        self.assertEqual(self.server.nameplates["5"]["sides"], set())
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_close_before_connecting(self):
        """close() before the connection is made completes at once."""
        w = self.create()
        d = w.close()
        self.pump()
        self.failureResultOf(d, errors.LonelyError)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_get_after_happy_close(self):
        """After a happy close, pending and later get_*() calls errback
        with WormholeClosed("happy"); close() again gives "happy" again."""
        w1, w2 = self.create(), self.create()
        w1.set_code("5-a-b")
        w2.set_code("5-a-b")
        self.pump()
        d = w1.get_message()
        self.close_both(w1, w2)
        self.failureResultOf(d, errors.WormholeClosed)
        # every getter, also those that had answered, fails with the mood
        for getter in GETTERS:
            err = self.fails(getattr(w1, getter)(), errors.WormholeClosed)
            self.assertEqual(err.value.args, ("happy",))
        d2 = w1.close()
        self.pump()
        self.assertEqual(self.successResultOf(d2), "happy")

    def test_welcome_and_motd(self):
        """get_welcome fires with the welcome; the motd goes to stderr."""
        self.server.welcome = {"motd": "hello\nworld"}
        w = self.create()
        d = w.get_welcome()
        self.pump()
        self.assertEqual(self.successResultOf(d), {"motd": "hello\nworld"})
        self.assertIn(URL + ":\n  hello\n  world", self.stderr.getvalue())
        self.close_lonely(w)

    def test_welcome_handler(self):
        """A welcome_handler gets the welcome instead of stderr."""
        self.server.welcome = {"motd": "hi"}
        seen = []
        w = self.create(welcome_handler=seen.append)
        self.pump()
        self.assertEqual(seen, [{"motd": "hi"}])
        self.assertEqual(self.stderr.getvalue(), "")
        self.close_lonely(w)

    def test_welcome_error(self):
        """A welcome error closes the wormhole with WelcomeError."""
        self.server.welcome = {"error": "this server is closed"}
        w = self.create()
        d_code = w.get_code()
        self.pump()
        f = self.closed_with(w, errors.WelcomeError)
        self.assertEqual(str(f.value), "this server is closed")
        self.failureResultOf(d_code, errors.WelcomeError)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_welcome_error_on_reconnection(self):
        """A welcome error after a reconnection, while the nameplate and
        mailbox are held: close still finishes (with WelcomeError), no
        reconnection loop."""
        w1, w2 = self.create(), self.create()
        w1.set_code("5-a-b")
        w2.set_code("5-a-b")
        self.pump()
        self.server.welcome = {"error": "closed for maintenance"}
        self.server.drop_all()
        self.clock.advance(1)
        self.pump()
        f = self.closed_with(w1, errors.WelcomeError)
        self.assertEqual(str(f.value), "closed for maintenance")
        self.closed_with(w2, errors.WelcomeError)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_server_error(self):
        """An error message from the server closes with ServerError (errory),
        whose args are the server's text and the command it answered."""
        w = self.create()
        w.set_code("5-a-b")
        self.pump()
        conn = self.server.conns[0]
        self.server._send(conn, {"type": "error", "error": "crowded",
                                 "orig": {"type": "claim"}})
        self.pump()
        f = self.closed_with(w, errors.ServerError)
        # the reference 0.24's args; the text alone as str()
        self.assertEqual(f.value.args, ("crowded", {"type": "claim"}))
        self.assertEqual(str(f.value), "crowded")
        self.assertEqual(self.server.moods[-1][1], "errory")

    def test_server_unreachable(self):
        """No server at all: ServerConnectionError, and the reactor is clean."""
        self.server.up = False
        w = self.create()
        d = w.get_welcome()
        self.pump()
        self.failureResultOf(d, errors.ServerConnectionError)
        self.closed_with(w, errors.ServerConnectionError)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_reconnect_mid_exchange(self):
        """The server drops every connection mid-exchange (and refuses for a
        while): both clients reconnect with backoff, re-claim, re-open and
        re-send, and the exchange finishes with each message once."""
        w1, w2 = self.create(), self.create()
        w1.set_code("5-a-b")
        self.pump()
        self.server.drop_all()
        self.server.up = False
        w1.send_message(b"m0")
        w2.set_code("5-a-b")
        w2.send_message(b"n0")
        self.clock.advance(1)
        self.pump()
        self.clock.advance(1.5)
        self.pump()
        self.server.up = True
        self.clock.advance(2.25)
        self.pump()
        self.assertEqual(self.ok(w2.get_message()), b"m0")
        self.server.drop_all()
        w1.send_message(b"m1")
        # no connection lasted 60 s, so the backoff went on growing
        # (docs/security.md "Mailbox client"): 1, 1.5, 2.25, now 3.375 s
        self.clock.advance(3.375)
        self.pump()
        self.assertEqual(self.ok(w2.get_message()), b"m1")
        self.assertEqual(self.ok(w1.get_message()), b"n0")
        d3 = w1.get_message()
        self.pump()
        self.assertNoResult(d3)  # no duplicates
        self.assertEqual(self.close_both(w1, w2), ("happy", "happy"))
        self.failureResultOf(d3, errors.WormholeClosed)

    def test_close_while_disconnected(self):
        """close() while disconnected finishes once the server is back."""
        w1, w2 = self.create(), self.create()
        w1.set_code("5-a-b")
        w2.set_code("5-a-b")
        self.pump()
        self.server.drop_all()
        d1 = w1.close()
        self.pump()
        self.assertNoResult(d1)
        self.clock.advance(1)
        self.pump()
        self.assertEqual(self.successResultOf(d1), "happy")
        w2.close()
        self.clock.advance(1)
        self.pump()
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_out_of_order_phases(self):
        """Numeric phases are delivered in order whatever the arrival order,
        and a repeated (side, phase) only once."""
        w1 = self.create()
        w2 = self.create()
        w1.set_code("5-a-b")
        w2.set_code("5-a-b")
        self.pump()
        key = self.ok(w2.get_unverified_key())
        conn1 = [c for c in self.server.conns if c.rc is w1._boss._RC][0]
        side2 = [c for c in self.server.conns if c.rc is w2._boss._RC][0].side
        for phase in ["2", "0", "2", "1"]:
            body = encrypt_data(derive_phase_key(key, side2, phase), b"p" + phase.encode())
            self.server._send(conn1, {"type": "message", "side": side2, "phase": phase,
                                      "body": body.hex()})
        ds = [w1.get_message() for i in range(4)]
        self.pump()
        self.assertEqual([self.successResultOf(d) for d in ds[:3]], [b"p0", b"p1", b"p2"])
        self.assertNoResult(ds[3])
        self.close_both(w1, w2)
        self.failureResultOf(ds[3], errors.WormholeClosed)

    def _peer_sends(self, w1, w2, phases, body=b"p"):
        """The peer (w2's side) puts these phases in w1's mailbox."""
        key = self.ok(w2.get_unverified_key())
        conn1 = [c for c in self.server.conns if c.rc is w1._boss._RC][0]
        side2 = [c for c in self.server.conns if c.rc is w2._boss._RC][0].side
        for phase in phases:
            data = encrypt_data(derive_phase_key(key, side2, phase), body + phase.encode())
            self.server._send(conn1, {"type": "message", "side": side2, "phase": phase,
                                      "body": data.hex()})
        self.pump()

    def _paired(self, **kwargs):
        w1, w2 = self.create(**kwargs), self.create()
        w1.set_code("5-a-b")
        w2.set_code("5-a-b")
        self.pump()
        return w1, w2

    def test_unread_messages_bounded(self):
        """docs/security.md, "Mailbox client": a peer sending phase after
        phase that the application never reads. With room for 3 unread
        messages, the 4th closes the wormhole with UnreadOverflow (the exact
        text); from then on every get_message() fails with it, also while
        unread messages were waiting (the reference 0.24's rule after any
        error)."""
        w1, w2 = self._paired(_max_unread=3)
        self._peer_sends(w1, w2, ["0", "1", "2", "3"])
        err = self.closed_with(w1, errors.UnreadOverflow)
        self.assertEqual(str(err.value), (
            "the peer sent 4 messages (8 bytes) that the application has not read; "
            "the limit is 3 messages, 33554432 bytes (docs/security.md)"))
        ds = [w1.get_message() for i in range(2)]
        self.pump()
        for d in ds:
            self.assertIs(self.failureResultOf(d).value, err.value)
        w2.close()
        self.pump()

    def test_read_messages_do_not_count(self):
        """Messages the application has taken (or waits for with a pending
        get_message()) leave the bound: 10 messages through a bound of 2."""
        w1, w2 = self._paired(_max_unread=2)
        got = []
        for i in range(10):
            w1.get_message().addCallback(got.append)
            self._peer_sends(w1, w2, [str(i)])
        self.assertEqual(got, [b"p%d" % i for i in range(10)])
        self.assertEqual((w1._boss._unread.messages, w1._boss._unread.bytes), (0, 0))
        self.close_both(w1, w2)

    def test_unread_bytes_bounded(self):
        """The bound on bytes: 3 messages of 1001 bytes against 3000 bytes."""
        w1, w2 = self._paired(_max_unread_bytes=3000)
        self._peer_sends(w1, w2, ["0", "1", "2"], body=b"x" * 1000)
        err = self.closed_with(w1, errors.UnreadOverflow)
        self.assertEqual(str(err.value), (
            "the peer sent 3 messages (3003 bytes) that the application has not read; "
            "the limit is 1000 messages, 3000 bytes (docs/security.md)"))
        w2.close()
        self.pump()

    def test_out_of_order_count_and_duplicates_ignored(self):
        """Phases waiting for a missing earlier one count too (phase 0 never
        comes); a numeric phase spelled twice ("1", "01") or one already
        delivered ("00" after "0") is ignored, not kept forever."""
        w1, w2 = self._paired(_max_unread=2)
        d = w1.get_message()
        self._peer_sends(w1, w2, ["0", "00", "2", "02"])
        self.assertEqual(self.successResultOf(d), b"p0")
        self.assertEqual(w1._boss._unread.messages, 1)  # "2" waits for "1"
        self._peer_sends(w1, w2, ["3", "4"])
        err = self.closed_with(w1, errors.UnreadOverflow)
        self.assertIn("the peer sent 3 messages", str(err.value))
        w2.close()
        self.pump()

    def test_delegated(self):
        """Delegated mode: the delegate hears every event, in order."""
        dg1, dg2 = Delegate(), Delegate()
        w1 = self.create(delegate=dg1)
        w2 = self.create(delegate=dg2)
        w1.allocate_code(length=3)
        self.pump()
        code = [e[1] for e in dg1.events if e[0] == "code"][0]
        self.assertRegex(code, r"^1-\w+-\w+-\w+$")
        w2.set_code(code)
        # as in the reference 0.24: the delegate has the code before
        # set_code() returns (docs/api.md "Delegated mode")
        self.assertEqual(dg2.events[-1], ("code", code))
        w1.send_message(b"hi")
        self.pump()
        self.assertEqual([e[0] for e in dg2.events],
                         ["welcome", "code", "key", "verifier", "versions", "message"])
        self.assertEqual(dg2.events[-1], ("message", b"hi"))
        self.assertIsNone(w1.close())
        w2.close()
        self.pump()
        self.assertEqual(dg1.events[-1], ("closed", "happy"))
        self.assertEqual(dg2.events[-1], ("closed", "happy"))

    def test_delegate_hears_every_welcome(self):
        """Delegated mode: the delegate hears the welcome of each
        connection to the server, as in the reference 0.24 (the motd is
        printed once)."""
        self.server.welcome = {"motd": "hello"}
        dg = Delegate()
        w = self.create(delegate=dg)
        w.set_code("5-a-b")
        self.pump()
        self.server.drop_all()
        self.clock.advance(1)
        self.pump()
        self.assertEqual([e for e in dg.events if e[0] == "welcome"],
                         [("welcome", {"motd": "hello"})] * 2)
        self.assertEqual(self.stderr.getvalue().count("hello"), 1)
        w.close()
        self.pump()

    def test_delegate_raising_is_logged(self):
        """A delegate method that raises is logged; the wormhole goes on
        (the exception does not unwind the Boss's transition)."""
        class Raising(Delegate):
            def wormhole_got_code(self, code):
                Delegate.wormhole_got_code(self, code)
                raise ZeroDivisionError("the application's bug")
        dg1, dg2 = Raising(), Delegate()
        w1, w2 = self.create(delegate=dg1), self.create(delegate=dg2)
        w1.set_code("5-a-b")
        w2.set_code("5-a-b")
        w2.send_message(b"still works")
        self.pump()
        self.assertEqual(len(self.flushLoggedErrors(ZeroDivisionError)), 1)
        self.assertIn(("message", b"still works"), dg1.events)
        w1.close()
        w2.close()
        self.pump()
        self.assertEqual(dg1.events[-1], ("closed", "happy"))

    def test_delegate_calls_back_inside_event(self):
        """A delegate that closes the wormhole from inside an event (here
        wormhole_got_code, during set_code()) is heard: the close is
        lonely and reported once."""
        class Closer(Delegate):
            def wormhole_got_code(self, code):
                Delegate.wormhole_got_code(self, code)
                w.close()
        dg = Closer()
        w = self.create(delegate=dg)
        w.set_code("5-a-b")
        self.pump()
        self.assertEqual([e[0] for e in dg.events if e[0] != "welcome"], ["code", "closed"])
        self.assertIsInstance(dg.events[-1][1], errors.LonelyError)

    def test_delegated_lonely(self):
        """Delegated mode: a lonely close hands the LonelyError to the delegate."""
        dg = Delegate()
        w = self.create(delegate=dg)
        w.set_code("5-a-b")
        self.pump()
        w.close()
        self.pump()
        self.assertEqual(dg.events[-1][0], "closed")
        self.assertIsInstance(dg.events[-1][1], errors.LonelyError)

    def test_input_code(self):
        """The input helper completes nameplates from the server's list and
        words from the word list, and the code it builds works."""
        w1, w2 = self.create(), self.create()
        w1.allocate_code()
        self.pump()
        code = self.ok(w1.get_code())
        h = w2.input_code()
        self.pump()
        self.assertEqual(h.get_nameplate_completions(""), {"1-"})
        h.choose_nameplate("1")
        self.pump()
        self.ok(h.when_wordlist_is_available())
        words = code.split("-", 1)[1]
        first = words.split("-")[0]
        self.assertIn(first + "-", h.get_word_completions(first[:2]))
        h.choose_words(words)
        self.pump()
        self.assertEqual(self.ok(w2.get_code()), code)
        self.ok(w2.get_verifier())
        self.close_both(w1, w2)

    def test_status_updates(self):
        """on_status_update gets immutable WormholeStatus values, in a
        later turn: connecting, connected, code known, code consumed, closed."""
        from wormhole import _status
        seen = []
        w1 = self.create(on_status_update=seen.append)
        w2 = self.create()
        w1.allocate_code()
        self.pump()
        code = self.ok(w1.get_code())
        w2.set_code(code)
        self.pump()
        self.close_both(w1, w2)
        self.maxDiff = None
        S, C, K = _status.WormholeStatus, _status.Connected(URL), _status
        self.assertEqual(seen, [
            S(_status.Connecting(URL, 0), K.NoKey(), _status.NoCode()),
            S(C, K.NoKey(), _status.NoCode()),
            S(C, K.NoKey(), _status.AllocatedCode()),
            S(C, K.NoKey(), _status.ConsumedCode()),
            S(C, K.AllegedSharedKey(), _status.ConsumedCode()),
            S(C, K.ConfirmedKey(), _status.ConsumedCode()),
            S(_status.Closed(), K.ConfirmedKey(), _status.ConsumedCode()),
        ])

    def test_only_one_code(self):
        """A second way of setting the code raises OnlyOneCodeError."""
        w = self.create()
        w.set_code("5-a-b")
        self.assertRaises(errors.OnlyOneCodeError, w.set_code, "6-a-b")
        self.assertRaises(errors.OnlyOneCodeError, w.allocate_code)
        self.assertRaises(errors.OnlyOneCodeError, w.input_code)
        self.close_lonely(w)

    def test_bad_codes(self):
        """Malformed codes raise KeyFormatError with a readable message."""
        w = self.create()
        for code in ["nohyphen", " 4-a-b", "4-a-b ", "four-a-b", "4 -a-b", "4-", "-a-b",
                     "4-a b"]:
            e = self.assertRaises(errors.KeyFormatError, w.set_code, code)
            self.assertIn("Code", str(e))
        w.set_code("4-a-b")
        self.close_lonely(w)

    def test_bad_relay_url(self):
        """A malformed relay URL is a RelayURLError (ValueError) at create()."""
        for url in ["http://example.org/v1", "ws://", "example.org"]:
            e = self.assertRaises(errors.RelayURLError, wormhole.create, APPID, url, self.clock)
            self.assertIsInstance(e, ValueError)
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_journal_needs_delegate(self):
        """A journal without a delegate is refused at create() (Client API,
        "Wormhole Parameters")."""
        self.assertRaises(ValueError, wormhole.create, APPID, URL, self.clock,
                          journal=wormhole.Journal(lambda: None))
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_derive_key_before_key(self):
        """derive_key before the key exists raises NoKeyError."""
        w = self.create()
        self.assertRaises(errors.NoKeyError, w.derive_key, "p", 32)
        self.assertRaises(TypeError, w.derive_key, b"p", 32)
        self.close_lonely(w)

    def test_dilation_advertised(self):
        """dilation=True puts can-dilate and dilation-abilities into our
        version message (seen as the peer's versions dict internals)."""
        w1 = self.create(dilation=True)
        w2 = self.create()
        w1.set_code("5-a-b")
        w2.set_code("5-a-b")
        self.pump()
        key = self.ok(w2.get_unverified_key())
        side1 = [c for c in self.server.conns if c.rc is w1._boss._RC][0].side
        body = [m for m in self.server.mailboxes["mb5"]["messages"]
                if m["side"] == side1 and m["phase"] == "version"][0]["body"]
        import json

        from wormhole._crypto import decrypt_data
        version = json.loads(decrypt_data(derive_phase_key(key, side1, "version"),
                                          bytes.fromhex(body)))
        self.assertEqual(version["can-dilate"], ["ged"])
        self.assertEqual(version["dilation-abilities"],
                         [{"type": "direct-tcp-v1"}, {"type": "relay-v1"}])
        self.close_both(w1, w2)

    def test_trace(self):
        """debug_set_trace prints client.Machine[old].input -> [new]."""
        out = io.StringIO()
        w = self.create()
        w.debug_set_trace("W1", which="B N", file=out)
        w.set_code("5-a-b")
        self.pump()
        lines = out.getvalue().splitlines()
        self.assertIn("W1.Boss[S0_empty].set_code -> [S1_lonely]", lines)
        self.assertIn("W1.Nameplate[S0A].set_nameplate -> [S1A]", lines)
        self.assertFalse([line for line in lines if ".Mailbox[" in line])
        self.assertRaises(ValueError, w.debug_set_trace, "W1", which="B X")
        self.close_lonely(w)


class JournalModeTests(unittest.TestCase):
    def test_journal(self):
        """Journaled Delegated mode (Journalled mode, "Wormhole Support"): events reach the
        delegate inside the journal's context, and what the delegate sends
        in reaction leaves only after the checkpoint is saved."""
        clock = Clock()
        server = FakeServer(clock)
        checkpoints = []
        sent_at_checkpoint = []
        j = wormhole.Journal(lambda: checkpoints.append(len(server.received)))

        class Replier(Delegate):
            def wormhole_got_message(self, msg):
                Delegate.wormhole_got_message(self, msg)
                sent_at_checkpoint.append(len(server.received))
                w1.send_message(b"reply to " + msg)

        dg1 = Replier()
        w1 = wormhole.create(APPID, URL, clock, delegate=dg1, journal=j,
                             _endpoint_factory=server.endpoint_factory)
        w2 = wormhole.create(APPID, URL, clock, _endpoint_factory=server.endpoint_factory)
        with j.process():
            w1.set_code("5-a-b")
        w2.set_code("5-a-b")
        w2.send_message(b"hi")
        d = w2.get_message()
        server.pump()
        self.assertEqual(self.successResultOf(d), b"reply to hi")
        self.assertIn(("message", b"hi"), dg1.events)
        # the checkpoint after the delegate's reaction saw nothing more sent
        # than the delegate itself saw: the reply was still queued
        self.assertIn(sent_at_checkpoint[0], checkpoints)
        with j.process():
            w1.close()
        d2 = w2.close()
        server.pump()
        self.assertEqual(self.successResultOf(d2), "happy")
        self.assertEqual(dg1.events[-1], ("closed", "happy"))
