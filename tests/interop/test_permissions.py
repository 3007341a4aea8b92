"""How the reference 0.24 client meets spec 003 "Permission to Use the
Server" (hashcash), observed against a scripted server.

The answer (docs/interop.md, "Permissions"): it does not implement it.  It
binds at once, never sends ``submit-permissions``, fails cleanly only on a
welcome ``error``, and treats an ``error`` reply plus a closed connection
as a network problem: it reconnects and binds again.  So a server that
demands hashcash cannot serve 0.24 clients; the kind way to refuse them is
the welcome ``error``.
"""
from twisted.internet import defer, reactor

from .harness import InteropTestCase, ref_cli_argv
from .scripted_server import ScriptedServer

HASHCASH = {"permission-required": {
    "hashcash": {"bits": 6, "resource": "interop-test"}}}


class ReferenceClientPermissions(InteropTestCase):

    def start_scripted(self, welcome, on_bind=None):
        srv = ScriptedServer.start(reactor, welcome, on_bind)
        self.addCleanup(srv.stop)
        return srv

    def send_text(self, url):
        return self.spawn(ref_cli_argv(url, "send", "--text", "hi",
                                       "--code", "4-purple-sausages"),
                          "reference sender")

    @defer.inlineCallbacks
    def test_ignores_permission_required(self):
        """Offered only hashcash, the reference client still sends a plain
        bind and goes on to claim: no submit-permissions, ever."""
        srv = self.start_scripted(HASHCASH)
        send = self.send_text(srv.url)
        got = yield srv.wait_for(
            lambda rs: any(m["type"] == "claim" for _, m in rs))
        yield send.kill()
        kinds = [m["type"] for _, m in got]
        self.assertEqual(kinds[:2], ["bind", "claim"])
        self.assertNotIn("submit-permissions", kinds)

    @defer.inlineCallbacks
    def test_binds_before_welcome_claims_after(self):
        """With the welcome withheld, the reference client still sends its
        bind (spec 003's "older clients" case: a server cannot expect
        submit-permissions before bind); its claim comes only after the
        welcome has been sent."""
        srv = self.start_scripted(None)
        send = self.send_text(srv.url)
        yield srv.wait_for(
            lambda rs: any(m["type"] == "bind" for _, m in rs))
        srv.send_welcome({})
        got = yield srv.wait_for(
            lambda rs: any(m["type"] == "claim" for _, m in rs))
        yield send.kill()
        self.assertEqual([m["type"] for _, m in got][:3],
                         ["bind", "(sent welcome)", "claim"])

    @defer.inlineCallbacks
    def test_welcome_error_ends_the_cli_with_the_message(self):
        """A welcome ``error`` (next to permission-required) makes the
        reference CLI print the server's text on stderr and exit 1."""
        welcome = dict(HASHCASH, error="this server requires hashcash")
        srv = self.start_scripted(welcome)
        send = self.send_text(srv.url)
        yield send.ended()
        self.assertExited(send, 1)
        self.assertIn(b"this server requires hashcash", send.stderr)

    @defer.inlineCallbacks
    def test_error_then_close_makes_it_reconnect(self):
        """An ``error`` reply to bind followed by closing the connection is
        not fatal to the reference client: it reconnects and binds again
        with the same side."""
        srv = self.start_scripted(HASHCASH, on_bind="error-close")
        send = self.send_text(srv.url)
        got = yield srv.wait_for(
            lambda rs: len([m for _, m in rs if m["type"] == "bind"]) >= 2)
        yield send.kill()
        binds = [(n, m["side"]) for n, m in got if m["type"] == "bind"]
        self.assertEqual([n for n, _ in binds[:2]], [0, 1])
        self.assertEqual(binds[0][1], binds[1][1])
