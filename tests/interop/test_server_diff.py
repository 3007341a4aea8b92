"""Differential tests of the mailbox server: the same raw message script
(valid and invalid) sent to the reference server and to ours, and the
answers compared after removing what may legitimately differ.

What is normalised away (docs/interop.md, "Server answers"): timestamps
(``server_tx``/``server_rx``); the ``id`` our server copies into direct
responses (spec 003 asks for it, the reference 0.8 omits it); the welcome's
contents (the reference adds ``your-address``); allocated nameplates and
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
        from wormhole.server.testing import start_mailbox_server
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
        same answers in the same order, acks carrying the client's ids.
        (Ours lists nameplates only with allow_list, which the reference
        does by default.)"""
        got = yield self.compare(
            [dict(BIND, id="0001"), {"type": "allocate", "id": "0002"}, SYNC,
             {"type": "list"}, {"type": "claim", "nameplate": "<allocated>"},
             SYNC, {"type": "open", "mailbox": "<claimed>"},
             {"type": "add", "phase": "1", "body": "00", "id": "0003"},
             {"type": "release"}, {"type": "close", "mood": "happy"}],
            allow_list=True)
        self.assertIn({"type": "message", "side": BIND["side"], "phase": "1",
                       "body": "00"}, got[2])

    # deliberate differences

    @defer.inlineCallbacks
    def test_not_json_gets_an_error_not_a_hangup(self):
        """A text frame that is not JSON: the reference drops the
        connection without a word; ours answers with an error naming the
        problem and keeps the connection (DESIGN.md, "Errors are values
        users can read")."""
        from wormhole.server.testing import start_mailbox_server
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
        """submit-permissions (spec 003, newer than the reference server):
        the reference 0.8 refuses it as "must bind first"; ours, with no
        permissions configured, accepts it silently and then the bind."""
        from wormhole.server.testing import start_mailbox_server
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
        from wormhole.server.testing import start_mailbox_server
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
