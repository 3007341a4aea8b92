"""How the reference 0.24 client meets Mailbox server protocol, "Permission
to Use the Server" (hashcash), observed against a scripted server.

The answer (docs/interop.md, "Permissions / hashcash"): it does not implement it.  It
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
        bind (the "older clients" case of Mailbox server protocol,
        "Connection-Specific (Client-to-Server) Messages": a server cannot expect
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


class ReferenceClientOnOurPermissionServer(InteropTestCase):
    """The reference client against our server started with
    ``permissions=`` (Mailbox server protocol, "Permission to Use the Server")."""

    @defer.inlineCallbacks
    def start_with(self, permissions):
        from wormhole_mailbox.testing import start_mailbox_server
        srv = yield start_mailbox_server(reactor, port=0,
                                         permissions=permissions)
        self.addCleanup(srv.stop)
        return srv

    @defer.inlineCallbacks
    def test_none_plus_hashcash_serves_old_clients(self):
        """Offering none next to hashcash, our server lets the 0.24 client
        (which binds without submit-permissions) transfer text."""
        srv = yield self.start_with("none+hashcash:6")
        tap = self.start_tap(srv.url)
        send, recv = yield self.exchange_text(tap.url, ref_cli_argv,
                                              ref_cli_argv, "permitted")
        self.assertExited(send)
        self.assertExited(recv)
        self.assertEqual(recv.stdout, b"permitted\n")
        welcome = tap.messages("s2c", "welcome")[0]["welcome"]
        self.assertEqual(set(welcome["permission-required"]),
                         {"none", "hashcash"})
        self.assertEqual(welcome["permission-required"]["hashcash"]["bits"],
                         6)

    @defer.inlineCallbacks
    def test_hashcash_only_refuses_old_clients(self):
        """Demanding hashcash, our server answers the 0.24 client's bare
        bind with a "permission denied" error and closes; the client, not
        knowing permissions, reconnects and binds again with the same side,
        and never transfers."""
        srv = yield self.start_with("hashcash:6")
        tap = self.start_tap(srv.url)
        send = self.send_text(tap.url)
        yield self.poll_until(lambda: len(tap.messages("c2s", "bind")) >= 2,
                              "the reference client's second bind")
        yield send.kill()
        errors = tap.messages("s2c", "error", connection=0)
        self.assertEqual(len(errors), 1)
        self.assertIn("permission denied", errors[0]["error"])
        self.assertEqual(errors[0]["orig"]["type"], "bind")
        binds = tap.messages("c2s", "bind")
        self.assertEqual(binds[0]["side"], binds[1]["side"])
        self.assertNotIn("claimed", [m["type"] for m in
                                     tap.messages("s2c")])

    def send_text(self, url):
        return self.spawn(ref_cli_argv(url, "send", "--text", "hi",
                                       "--code", "4-purple-sausages"),
                          "reference sender")
