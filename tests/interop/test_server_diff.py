"""Differential tests of the mailbox server: the same raw message script
(valid and invalid) sent to the reference server and to ours, and the
answers compared after removing what may legitimately differ.

What is normalised away (docs/interop.md, "Server answers, reference vs ours"): timestamps
(``server_tx``/``server_rx``); the ``id`` our server copies into direct
responses (Mailbox server protocol, "WebSocket Transport" asks for it, the
reference 0.8 omits it); the welcome's
contents (``your-address`` differs by connection: test_your_address
compares it); allocated nameplates and
mailbox ids (random).  Everything else -- which messages come back, in
which order, the error strings and their ``orig`` -- must be equal.
Deliberate differences are pinned in their own tests at the end.
"""
from twisted.internet import defer, reactor

from . import rawclient
from .harness import InteropTestCase

BIND = {"type": "bind", "appid": "example.com/diff", "side": "abcdef0123"}
SYNC = "sync"


def normalise(msg):
    m = {k: v for k, v in msg.items() if k not in ("server_tx", "server_rx")}
    if m.get("type") != "ack":
        m.pop("id", None)
    if m.get("type") == "welcome":
        m = {"type": "welcome"}
    if m.get("type") == "allocated":
        m["nameplate"] = "<nameplate>"
    if m.get("type") == "claimed":
        m["mailbox"] = "<mailbox>"
    if m.get("type") == "nameplates":
        m["nameplates"] = ["<%d nameplates>" % len(m["nameplates"])]
    return m


class ServerDifferential(InteropTestCase):

    @defer.inlineCallbacks
    def run_script(self, url, steps):
        """Send the steps on one connection; SYNC waits for every answer so
        far.  Returns the normalised answers, one list per SYNC (plus the
        final one).  "<allocated>" and "<claimed>" in a step stand for the
        nameplate and mailbox the server last announced."""
        c = yield rawclient.connect(reactor, url)
        self.addCleanup(c.close)
        groups, seen = [], {}
        for step in steps + [SYNC]:
            if step == SYNC:
                got = yield c.sync()
                for m in got:
                    if m.get("type") == "allocated":
                        seen["<allocated>"] = m["nameplate"]
                    if m.get("type") == "claimed":
                        seen["<claimed>"] = m["mailbox"]
                groups.append([normalise(m) for m in got])
                continue
            if isinstance(step, dict):
                step = {k: seen.get(v, v) if isinstance(v, str) else v
                        for k, v in step.items()}
            c.send(step)
        return groups

    @defer.inlineCallbacks
    def compare(self, steps, **our_options):
        from wormhole_mailbox.testing import start_mailbox_server
        ref = yield self.start_ref_server()
        ours = yield start_mailbox_server(reactor, port=0, **our_options)
        self.addCleanup(ours.stop)
        theirs = yield self.run_script(ref.url, steps)
        mine = yield self.run_script(ours.url, steps)
        if mine != theirs:
            self.fail("our server answers differently\nreference: %r\nours:"
                      "      %r" % (theirs, mine))
        return theirs

    @defer.inlineCallbacks
    def test_bind(self):
        """bind: welcome, then an ack per message."""
        got = yield self.compare([BIND])
        self.assertEqual(got, [[{"type": "welcome"},
                                {"type": "ack", "id": None},
                                {"type": "ack", "id": None}]])

    def test_claim_before_bind(self):
        """claim before bind: error "must bind first" with orig."""
        return self.compare([{"type": "claim", "nameplate": "1"}])

    def test_unknown_type(self):
        """An unknown type after bind: error "unknown type"."""
        return self.compare([BIND, {"type": "frobnicate"}])

    def test_bind_twice(self):
        """A second bind: error "already bound"."""
        return self.compare([BIND, BIND])

    def test_bind_without_appid(self):
        """bind without appid: error "bind requires 'appid'"."""
        return self.compare([{"type": "bind", "side": "abcdef0123"}])

    def test_bind_without_side(self):
        """bind without side: error "bind requires 'side'"."""
        return self.compare([{"type": "bind", "appid": "example.com/diff"}])

    def test_add_before_open(self):
        """add before open: error "must open mailbox before adding"."""
        return self.compare([BIND, {"type": "add", "phase": "1",
                                    "body": "00"}])

    def test_claim_without_nameplate(self):
        """claim without nameplate: error "claim requires 'nameplate'"."""
        return self.compare([BIND, {"type": "claim"}])

    def test_open_twice(self):
        """A second open on one connection: error "only one open per
        connection"."""
        return self.compare([BIND, {"type": "open", "mailbox": "abc"},
                             {"type": "open", "mailbox": "abd"}])

    def test_close_unopened(self):
        """close without mailbox before any open: error."""
        return self.compare([BIND, {"type": "close", "mood": "happy"}])

    def test_release_unclaimed(self):
        """release of a nameplate never claimed: answered "released"."""
        return self.compare([BIND, {"type": "release", "nameplate": "7"}])

    def test_ping_without_number(self):
        """ping without a number: error "ping requires 'ping'"."""
        return self.compare([{"type": "ping"}])

    @defer.inlineCallbacks
    def test_whole_flow(self):
        """allocate, list, claim, open, add (echoed), release, close: the
        same answers in the same order, acks carrying the client's ids
        (both list nameplates by default)."""
        got = yield self.compare(
            [dict(BIND, id="0001"), {"type": "allocate", "id": "0002"}, SYNC,
             {"type": "list"}, {"type": "claim", "nameplate": "<allocated>"},
             SYNC, {"type": "open", "mailbox": "<claimed>"},
             {"type": "add", "phase": "1", "body": "00", "id": "0003"},
             {"type": "release"}, {"type": "close", "mood": "happy"}])
        self.assertIn({"type": "message", "side": BIND["side"], "phase": "1",
                       "body": "00"}, got[2])

    # deliberate differences

    @defer.inlineCallbacks
    def test_not_json_gets_an_error_not_a_hangup(self):
        """A text frame that is not JSON: the reference drops the
        connection without a word; ours answers with an error naming the
        problem and keeps the connection (docs/server.md, "Wire differences
        from the reference (decided here)")."""
        from wormhole_mailbox.testing import start_mailbox_server
        ref = yield self.start_ref_server()
        ours = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(ours.stop)
        steps = [BIND, "this is not json"]
        theirs = yield self.run_script(ref.url, steps)
        mine = yield self.run_script(ours.url, steps)
        self.assertEqual(theirs[0][-1], {"type": "(connection closed)"})
        errors = [m for m in mine[0] if m["type"] == "error"]
        self.assertEqual(len(errors), 1)
        self.assertIn("not JSON", errors[0]["error"])
        self.assertNotIn({"type": "(connection closed)"}, mine[0])

    @defer.inlineCallbacks
    def test_submit_permissions_before_bind(self):
        """submit-permissions (Mailbox server protocol, "Permission to Use the
        Server", newer than the reference server):
        the reference 0.8 refuses it as "must bind first"; ours, with no
        permissions configured, accepts it silently and then the bind."""
        from wormhole_mailbox.testing import start_mailbox_server
        ref = yield self.start_ref_server()
        ours = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(ours.stop)
        steps = [{"type": "submit-permissions", "method": "none"}, BIND]
        theirs = yield self.run_script(ref.url, steps)
        mine = yield self.run_script(ours.url, steps)
        self.assertEqual([m.get("error") for m in theirs[0]
                          if m["type"] == "error"], ["must bind first"])
        self.assertEqual([m for m in mine[0] if m["type"] == "error"], [])

    @defer.inlineCallbacks
    def test_message_without_type(self):
        """A message without "type": both answer an error beginning
        "missing 'type'" with the message as orig (ours adds advice, and
        acks it first; the reference sends no ack for it)."""
        from wormhole_mailbox.testing import start_mailbox_server
        ref = yield self.start_ref_server()
        ours = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(ours.stop)
        steps = [BIND, {"foo": 1}]
        for url in (ref.url, ours.url):
            got = yield self.run_script(url, steps)
            errors = [m for m in got[0] if m["type"] == "error"]
            self.assertEqual(len(errors), 1, got)
            self.assertTrue(errors[0]["error"].startswith("missing 'type'"))
            self.assertEqual(errors[0]["orig"], {"foo": 1})


class UsageDifferential(InteropTestCase):
    """The usage records (Mailbox server protocol, "Mailboxes": moods) both
    servers keep for the same scripted pairs of clients."""

    @defer.inlineCallbacks
    def pair(self, url, moods, release=True):
        """Sides a and b claim nameplate 5, open its mailbox, release, and
        close with ``moods`` (one side only if one mood is given)."""
        clients = []
        for n, _mood in enumerate(moods):
            c = yield rawclient.connect(reactor, url)
            self.addCleanup(c.close)
            c.send(dict(BIND, side="side%06d" % n))
            c.send({"type": "claim", "nameplate": "5"})
            got = yield c.sync()
            mailbox = [m["mailbox"] for m in got if m["type"] == "claimed"]
            self.assertEqual(len(mailbox), 1, got)
            c.send({"type": "open", "mailbox": mailbox[0]})
            yield c.sync()
            clients.append(c)
        for c in clients:
            if release:
                c.send({"type": "release"})
            yield c.sync()
        for c, mood in zip(clients, moods, strict=False):
            c.send({"type": "close", "mood": mood})
            got = yield c.sync()
            self.assertIn("closed", [m["type"] for m in got])

    @defer.inlineCallbacks
    def compare(self, moods, release=True):
        from wormhole_mailbox.testing import start_mailbox_server
        ref = yield self.start_ref_server()
        ours = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(ours.stop)
        results = []
        for srv in (ref, ours):
            yield self.pair(srv.url, moods, release)
            rows = yield self.wait_for_moods(
                srv, lambda rows: len(rows) >= (2 if release else 1))
            results.append(sorted((r["kind"], r["result"]) for r in rows))
        theirs, mine = results
        self.assertEqual(mine, theirs)
        return theirs

    @defer.inlineCallbacks
    def test_happy_pair(self):
        """Both close happy: mailbox happy, nameplate happy."""
        got = yield self.compare(["happy", "happy"])
        self.assertEqual(got, [("mailbox", "happy"), ("nameplate", "happy")])

    @defer.inlineCallbacks
    def test_one_scary(self):
        """One side scary: the mailbox is scary."""
        got = yield self.compare(["happy", "scary"])
        self.assertIn(("mailbox", "scary"), got)

    @defer.inlineCallbacks
    def test_one_errory(self):
        """One side "errory" (the Mailbox server protocol's name): the mailbox is errory."""
        got = yield self.compare(["errory", "happy"])
        self.assertIn(("mailbox", "errory"), got)

    @defer.inlineCallbacks
    def test_one_lonely(self):
        """One side lonely (the other happy): the mailbox is lonely."""
        got = yield self.compare(["happy", "lonely"])
        self.assertIn(("mailbox", "lonely"), got)

    @defer.inlineCallbacks
    def test_alone(self):
        """A single side that claims, opens, releases and closes lonely:
        mailbox and nameplate are lonely."""
        got = yield self.compare(["lonely"])
        self.assertEqual(got, [("mailbox", "lonely"),
                               ("nameplate", "lonely")])

    @defer.inlineCallbacks
    def crowd(self, srv):
        """Sides 0 and 1 claim nameplate 6, side 2 tries too; then each
        releases "6".  Returns (side 2's claim answers, the three release
        answers), normalised."""
        clients = []
        for n in range(3):
            c = yield rawclient.connect(reactor, srv.url)
            self.addCleanup(c.close)
            c.send(dict(BIND, side="side%06d" % n))
            c.send({"type": "claim", "nameplate": "6"})
            got = yield c.sync()
            clients.append(c)
        claim = [normalise(m) for m in got]
        releases = []
        for c in clients:
            c.send({"type": "release", "nameplate": "6"})
            got = yield c.sync()
            releases.append([normalise(m) for m in got])
        return claim, releases

    @defer.inlineCallbacks
    def test_third_side_is_crowded(self):
        """A third side claiming a nameplate two sides hold gets the error
        "crowded" from both servers; once everyone released, both record
        the nameplate as crowded."""
        from wormhole_mailbox.testing import start_mailbox_server
        ref = yield self.start_ref_server()
        ours = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(ours.stop)
        results = []
        for srv in (ref, ours):
            claim, _ = yield self.crowd(srv)
            rows = yield self.wait_for_moods(srv, lambda rows: rows)
            results.append((claim, sorted((r["kind"], r["result"])
                                          for r in rows)))
        self.assertEqual(results[1], results[0])
        claim, usage = results[0]
        self.assertIn({"type": "error", "error": "crowded",
                       "orig": {"type": "claim", "nameplate": "6"}}, claim)
        self.assertEqual(usage, [("nameplate", "crowded")])

    @defer.inlineCallbacks
    def test_release_after_crowded_claim(self):
        """The side refused as crowded may still release that nameplate:
        the reference answers "released" (its refused claim still names
        the connection's nameplate), not an error."""
        from wormhole_mailbox.testing import start_mailbox_server
        ref = yield self.start_ref_server()
        ours = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(ours.stop)
        _, theirs = yield self.crowd(ref)
        _, mine = yield self.crowd(ours)
        self.assertIn({"type": "released"}, theirs[2])
        self.assertEqual(mine, theirs)
