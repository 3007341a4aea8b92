"""Our client library (in-process, Deferred mode, Client API)
against the reference library (ref_peer.py, in the reference venv).

Ten messages each way (binary bodies included), equal verifiers, the
app_versions each side offered, and the wrong-code failure, on our server
and on the reference server.
"""
from twisted.internet import defer, reactor

import wormhole  # ours; the reference is only ever a subprocess

from .harness import InteropTestCase, mailbox_moods, ref_peer_argv

APPID = "example.com/interop-library"
N = 10


def ours(i):
    # binary, not UTF-8, with a NUL: the mailbox carries bytes, not text
    return b"ours \x00\xff %d" % i


def theirs(i):
    return "theirs ✓ %d" % i


class LibraryInterop:
    """Mixin; ``start_server`` picks the server."""

    def create(self, srv, **kwargs):
        return wormhole.create(APPID, srv.url, reactor, **kwargs)

    def ref_peer(self, srv, steps, code=None, allocate=None, versions=None):
        script = {"relay_url": srv.url, "appid": APPID, "steps": steps}
        if code is not None:
            script["code"] = code
        else:
            script["allocate"] = allocate
        if versions is not None:
            script["versions"] = versions
        return self.spawn(ref_peer_argv(script), "reference library peer")

    @defer.inlineCallbacks
    def exchange(self, w, peer):
        """Verifier, then ten messages each way, then close; returns our
        (verifier, received, close result) and the peer's events."""
        verifier = yield w.get_verifier()
        for i in range(N):
            w.send_message(ours(i))
        received = []
        for _ in range(N):
            received.append((yield w.get_message()))
        result = yield w.close()
        yield peer.ended()
        self.assertExited(peer)
        return verifier, received, result, peer.events()

    def peer_steps(self):
        return ([["code", None], ["verifier", None], ["versions", None]]
                + [["send", theirs(i)] for i in range(N)]
                + [["recv", N]])

    def check_exchange(self, verifier, received, result, events):
        self.assertEqual(received, [theirs(i).encode("utf-8")
                                    for i in range(N)])
        self.assertEqual([bytes.fromhex(e["hex"]) for e in events
                          if e["event"] == "message"],
                         [ours(i) for i in range(N)])
        self.assertEqual([e["hex"] for e in events
                          if e["event"] == "verifier"], [verifier.hex()])
        self.assertEqual(result, "happy")
        self.assertEqual(events[-1], {"event": "closed",
                                      "result": "'happy'"})

    @defer.inlineCallbacks
    def test_ten_each_way_given_code(self):
        """Both sides set_code: ten messages each way arrive in order,
        verifiers are equal, both close happy, the server records happy."""
        srv = yield self.start_server()
        code = "12-interop-library"
        peer = self.ref_peer(srv, self.peer_steps(), code=code)
        w = self.create(srv)
        w.set_code(code)
        out = yield self.exchange(w, peer)
        self.check_exchange(*out)
        rows = yield self.wait_for_moods(srv, mailbox_moods)
        self.assertEqual(mailbox_moods(rows), ["happy"])

    @defer.inlineCallbacks
    def test_ours_allocates(self):
        """We allocate_code(); the reference peer set_code()s it."""
        srv = yield self.start_server()
        w = self.create(srv)
        w.allocate_code()
        code = yield w.get_code()
        self.assertRegex(code, r"^\d+-[a-z]+-[a-z]+$")
        peer = self.ref_peer(srv, self.peer_steps(), code=code)
        out = yield self.exchange(w, peer)
        self.check_exchange(*out)
        self.assertIn({"event": "code", "code": code}, out[3])

    @defer.inlineCallbacks
    def test_reference_allocates(self):
        """The reference peer allocate_code(3)s; we set_code() what it
        printed."""
        srv = yield self.start_server()
        peer = self.ref_peer(srv, self.peer_steps(), allocate=3)
        m = yield peer.wait_for_line(rb'"code": "([^"]+)"')
        code = m.group(1).decode("ascii")
        self.assertRegex(code, r"^\d+-[a-z]+-[a-z]+-[a-z]+$")
        w = self.create(srv)
        w.set_code(code)
        out = yield self.exchange(w, peer)
        self.check_exchange(*out)

    @defer.inlineCallbacks
    def test_versions_both_ways(self):
        """Each side's get_versions() returns the app_versions the other
        passed to create(versions=...)."""
        srv = yield self.start_server()
        code = "13-interop-versions"
        peer = self.ref_peer(srv, [["versions", None], ["send", "x"],
                                   ["recv", 1]],
                             code=code, versions={"theirs": [1, "a"]})
        w = self.create(srv, versions={"ours": {"b": 2}})
        w.set_code(code)
        versions = yield w.get_versions()
        w.send_message(b"y")
        got = yield w.get_message()
        yield w.close()
        yield peer.ended()
        self.assertExited(peer)
        self.assertEqual(versions, {"theirs": [1, "a"]})
        self.assertEqual(got, b"x")
        self.assertIn({"event": "versions", "versions": {"ours": {"b": 2}}},
                      peer.events())

    @defer.inlineCallbacks
    def test_wrong_code(self):
        """Codes differing in one word: our get_message() and close() fail
        with WrongPasswordError, the reference sees WrongPasswordError too,
        and the server records scary."""
        from wormhole.errors import WrongPasswordError
        srv = yield self.start_server()
        peer = self.ref_peer(srv, [["verifier", None]],
                             code="14-interop-wrong")
        w = self.create(srv)
        w.set_code("14-interop-wrongg")
        w.send_message(b"never readable")
        yield self.assertFailure(w.get_message(), WrongPasswordError)
        yield self.assertFailure(w.close(), WrongPasswordError)
        yield peer.ended()
        self.assertExited(peer)
        self.assertEqual([(e["event"], e["type"]) for e in peer.events()],
                         [("error", "WrongPasswordError"),
                          ("close_error", "WrongPasswordError")])
        rows = yield self.wait_for_moods(srv, mailbox_moods)
        self.assertEqual(mailbox_moods(rows), ["scary"])


class LibraryOnOurServer(LibraryInterop, InteropTestCase):

    def start_server(self):
        return self.start_our_server()


class LibraryOnReferenceServer(LibraryInterop, InteropTestCase):

    def start_server(self):
        return self.start_ref_server()


class OurLibraryAcrossReferenceServerRestart(InteropTestCase):
    """Our client's reconnection against the reference server's
    persistence (Mailbox server protocol, "Persistence"; reconnection:
    "WebSocket Transport")."""

    @defer.inlineCallbacks
    def test_restart_between_the_two_sides(self):
        """Our client claims, opens and adds its pake; the reference server
        is stopped (SIGTERM); our client retries while it is down; the
        server is restarted on the same port and database; our client
        gets back by itself; the reference peer arrives only now, and ten
        messages each way still cross, in order."""
        from .wiretap import WireTap
        srv = yield self.start_ref_server()
        tap = WireTap.start(reactor, srv.url)
        self.addCleanup(tap.stop)
        w = wormhole.create(APPID, tap.url, reactor)
        w.set_code("15-restart-library")

        def pake_acked():
            adds = [m["id"] for m in tap.messages("c2s", "add", 0)
                    if m["phase"] == "pake"]
            acks = [m["id"] for m in tap.messages("s2c", "ack", 0)]
            return any(i in acks for i in adds)
        yield self.poll_until(pake_acked, "our pake to be acked")
        yield srv.stop()
        # our client tries again while the server is down (the tap hangs
        # up on it, as a missing server would) ...
        yield self.poll_until(lambda: tap.connections >= 2,
                              "our client to retry while the server is down")
        yield self.start_ref_server(port=srv.port, basedir=srv.basedir)
        # ... and keeps trying until the restarted server answers
        peer = self.spawn(ref_peer_argv(
            {"relay_url": srv.url, "appid": APPID,
             "code": "15-restart-library",
             "steps": ([["verifier", None]]
                       + [["send", theirs(i)] for i in range(N)]
                       + [["recv", N]])}), "reference library peer")
        out = yield LibraryInterop.exchange(self, w, peer)
        LibraryInterop.check_exchange(self, *out)
