"""Our mailbox server as a drop-in replacement for the reference one:
reference clients only (CLI and library), our server in the middle, and
the server's usage records checked for the moods (Mailbox server protocol, "Mailboxes").
"""
from twisted.internet import defer

from .harness import InteropTestCase, cli_text_stdout, mailbox_moods, ref_cli_argv, ref_peer_argv

TEXT = "drop-in ✓\nreplacement"
KEY_CONFIRMATION = b"Key confirmation failed"


class ReferenceClientsOnOurServer(InteropTestCase):

    @defer.inlineCallbacks
    def test_ref_cli_text_given_code(self):
        """Reference send --code / reference receive through our server:
        the text arrives, both exit 0, our usage records one happy
        mailbox."""
        srv = yield self.start_our_server()
        send, recv = yield self.exchange_text(srv.url, ref_cli_argv,
                                              ref_cli_argv, TEXT)
        self.assertExited(send)
        self.assertExited(recv)
        self.assertEqual(recv.stdout, cli_text_stdout(TEXT))
        rows = yield self.wait_for_moods(srv, mailbox_moods)
        self.assertEqual(mailbox_moods(rows), ["happy"])

    @defer.inlineCallbacks
    def test_ref_cli_allocate_code_length_3(self):
        """Reference send --code-length 3 gets a nameplate allocated by our
        server and a three-word code, and the receiver gets the text."""
        srv = yield self.start_our_server()
        send, recv, code = yield self.send_allocated_text(
            srv.url, ref_cli_argv, ref_cli_argv, TEXT, "--code-length", "3")
        self.assertExited(send)
        self.assertExited(recv)
        self.assertRegex(code, r"^\d+-[a-z]+-[a-z]+-[a-z]+$")
        self.assertEqual(recv.stdout, cli_text_stdout(TEXT))

    @defer.inlineCallbacks
    def test_ref_cli_wrong_code_is_scary(self):
        """Reference CLIs with codes that differ in one word: both exit 1
        with the key-confirmation error, and our server records the
        mailbox's mood as scary."""
        srv = yield self.start_our_server()
        send = self.spawn(ref_cli_argv(srv.url, "send", "--text", TEXT,
                                       "--code", "8-purple-sausages"),
                          "sender")
        recv = self.spawn(ref_cli_argv(srv.url, "receive",
                                       "8-purple-sausagez"), "receiver")
        # both are expected to fail: exit 1 is no reason to stop the other
        yield self.wait_all([send, recv], expected_exit=1)
        for run in (send, recv):
            self.assertExited(run, 1)
            self.assertIn(KEY_CONFIRMATION, run.stderr, run.describe())
        self.assertEqual(recv.stdout, b"")
        rows = yield self.wait_for_moods(srv, mailbox_moods)
        self.assertEqual(mailbox_moods(rows), ["scary"])

    @defer.inlineCallbacks
    def test_ref_library_wrong_code(self):
        """Two reference library peers with different codes: both see
        WrongPasswordError (from get_verifier and again from close), and
        our server records the mailbox's mood as scary."""
        srv = yield self.start_our_server()
        runs = []
        for code in ("9-purple-sausages", "9-purple-sausagez"):
            script = {"relay_url": srv.url, "appid": "example.com/interop",
                      "code": code,
                      "steps": [["verifier", None], ["send", "x"],
                                ["recv", 1]]}
            runs.append(self.spawn(ref_peer_argv(script), "peer " + code))
        yield self.wait_all(runs)
        for run in runs:
            self.assertExited(run)
            events = run.events()
            self.assertEqual(
                [(e["event"], e["type"]) for e in events],
                [("error", "WrongPasswordError"),
                 ("close_error", "WrongPasswordError")], run.describe())
        rows = yield self.wait_for_moods(srv, mailbox_moods)
        self.assertEqual(mailbox_moods(rows), ["scary"])


class ReferenceClientsOnOurTwistdServer(InteropTestCase):
    """Our server started the way operators start the reference one:
    ``twistd -n wormhole-mailbox --port ... --channel-db ... --usage-db``."""

    @defer.inlineCallbacks
    def test_same_command_line_serves_reference_clients(self):
        """The reference's command line, with our twistd, serves a
        reference text transfer, and the usage DB records it as happy."""
        srv = yield self.start_our_twistd_server()
        send, recv = yield self.exchange_text(srv.url, ref_cli_argv,
                                              ref_cli_argv, TEXT)
        self.assertExited(send)
        self.assertExited(recv)
        self.assertEqual(recv.stdout, cli_text_stdout(TEXT))
        rows = yield self.wait_for_moods(srv, mailbox_moods)
        self.assertEqual(mailbox_moods(rows), ["happy"])

    @defer.inlineCallbacks
    def test_motd_reaches_the_reference_cli(self):
        """--motd is put in the welcome and the reference CLI shows it on
        stderr (Mailbox server protocol, "Connection-Specific
        (Client-to-Server) Messages": welcome ``motd``)."""
        srv = yield self.start_our_twistd_server(
            ["--motd", "interop says hello"])
        send, recv = yield self.exchange_text(srv.url, ref_cli_argv,
                                              ref_cli_argv, TEXT)
        self.assertExited(send)
        self.assertExited(recv)
        self.assertIn(b"interop says hello", send.stderr)

    @defer.inlineCallbacks
    def test_signal_error_fails_the_reference_cli(self):
        """--signal-error makes the reference CLI exit 1 showing the
        operator's text (a welcome ``error``)."""
        srv = yield self.start_our_twistd_server(
            ["--signal-error", "closed for maintenance"])
        send = self.spawn(ref_cli_argv(srv.url, "send", "--text", "x",
                                       "--code", "4-purple-sausages"),
                          "sender")
        yield self.wait_all([send])
        self.assertExited(send, 1)
        self.assertIn(b"closed for maintenance", send.stderr)


class ReferenceClientsAcrossOurServerRestart(InteropTestCase):
    """Mailbox server protocol, "Persistence": what a client added survives a restart of
    the server, and the reference client reconnects and carries on."""

    @defer.inlineCallbacks
    def test_restart_between_the_two_sides(self):
        """Reference peer A claims, opens and adds its pake; our server
        (SQLite channel DB) is stopped; A retries while it is down; the
        server is restarted on the same port; A gets back by itself; peer
        B arrives only now, and both finish the exchange happily."""
        import os

        from twisted.internet import reactor

        from wormhole_mailbox.testing import start_mailbox_server
        db = os.path.join(os.path.abspath(self.mktemp()) + ".sqlite")
        srv = yield start_mailbox_server(reactor, channel_db=db, port=0)
        stopped = [srv]
        self.addCleanup(lambda: stopped[-1].stop())
        tap = self.start_tap(srv.url)

        def script(me):
            return {"relay_url": tap.url, "appid": "example.com/interop",
                    "code": "11-persistent-mailbox",
                    "steps": [["send", "from " + me], ["recv", 1]]}
        a = self.spawn(ref_peer_argv(script("a")), "peer a")

        def a_pake_acked():
            adds = [m["id"] for m in tap.messages("c2s", "add", 0)
                    if m["phase"] == "pake"]
            acks = [m["id"] for m in tap.messages("s2c", "ack", 0)]
            return any(i in acks for i in adds)
        yield self.poll_until(a_pake_acked, "peer a's pake to be acked")
        yield srv.stop()
        # peer a tries again while the server is down (the tap hangs up on
        # it, as a missing server would), then gets back once it is up
        yield self.poll_until(lambda: tap.connections >= 2,
                              "peer a to retry while the server is down")
        srv2 = yield start_mailbox_server(reactor, channel_db=db,
                                          port=srv.port)
        stopped.append(srv2)
        b = self.spawn(ref_peer_argv(script("b")), "peer b")
        yield self.wait_all([a, b])
        for run, other in ((a, "b"), (b, "a")):
            self.assertExited(run)
            texts = [e["text"] for e in run.events()
                     if e["event"] == "message"]
            self.assertEqual(texts, ["from " + other], run.describe())
        rows = yield self.wait_for_moods(srv2, mailbox_moods)
        self.assertEqual(mailbox_moods(rows), ["happy"])
