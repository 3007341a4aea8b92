"""Our `wormhole` CLI against the reference CLI, text in both directions,
on our server and on the reference server: 2 directions x 2 servers x 2
ways of getting the code (given with --code, allocated by the server),
plus a wrong code each way.

The receiver's stdout is compared byte for byte with what the reference
receiver prints for the same text (harness.cli_text_stdout: non-printable
characters escaped, then one newline; docs/interop.md).
"""
from twisted.internet import defer

from .harness import InteropTestCase, cli_text_stdout, mailbox_moods, our_cli_argv, ref_cli_argv

# non-ASCII (Latin-1, BMP symbol, astral emoji), embedded newlines, a tab,
# a trailing newline and a backslash: everything the escaping touches
TEXT = "Grüße aus Köln ✓ 😀\nzweite Zeile\twith tab \\ end\n"


class CLIText:
    """Mixin; ``start_server`` picks the server."""

    @defer.inlineCallbacks
    def check(self, sender_argv, receiver_argv, allocate):
        srv = yield self.start_server()
        if allocate:
            send, recv, code = yield self.send_allocated_text(
                srv.url, sender_argv, receiver_argv, TEXT)
            self.assertRegex(code, r"^\d+-\w+-\w+$")
        else:
            send, recv = yield self.exchange_text(
                srv.url, sender_argv, receiver_argv, TEXT,
                code="7-guitarist-revenge")
        self.assertExited(send)
        self.assertExited(recv)
        self.assertOursNamedNoProtocol((send, sender_argv), (recv, receiver_argv))
        if recv.stdout != cli_text_stdout(TEXT):
            self.fail("receiver's stdout differs:\n%r\nexpected\n%r\n%s"
                      % (recv.stdout, cli_text_stdout(TEXT),
                         recv.describe()))
        rows = yield self.wait_for_moods(srv, mailbox_moods)
        self.assertEqual(mailbox_moods(rows), ["happy"])

    def test_ours_sends_ref_receives_given_code(self):
        """our send --text --code C -> reference receive C."""
        return self.check(our_cli_argv, ref_cli_argv, allocate=False)

    def test_ref_sends_ours_receives_given_code(self):
        """reference send --text --code C -> our receive C."""
        return self.check(ref_cli_argv, our_cli_argv, allocate=False)

    def test_ours_sends_ref_receives_allocated_code(self):
        """our send --text (server-allocated code) -> reference receive."""
        return self.check(our_cli_argv, ref_cli_argv, allocate=True)

    def test_ref_sends_ours_receives_allocated_code(self):
        """reference send --text (server-allocated code) -> our receive."""
        return self.check(ref_cli_argv, our_cli_argv, allocate=True)


    @defer.inlineCallbacks
    def test_ours_sends_code_length_3(self):
        """our send --code-length 3 gets a three-word code from the server
        that the reference receiver accepts."""
        srv = yield self.start_server()
        send, recv, code = yield self.send_allocated_text(
            srv.url, our_cli_argv, ref_cli_argv, TEXT, "--code-length", "3")
        self.assertExited(send)
        self.assertExited(recv)
        self.assertRegex(code, r"^\d+-[a-z]+-[a-z]+-[a-z]+$")
        self.assertEqual(recv.stdout, cli_text_stdout(TEXT))

    @defer.inlineCallbacks
    def test_long_text_both_ways(self):
        """A 20000-character text crosses intact in both directions (one
        mailbox message each way, far beyond any line buffer)."""
        srv = yield self.start_server()
        long_text = ("0123456789ÄÖÜ✓\n" * 1250)[:20000]
        for n, (snd, rcv) in enumerate(((our_cli_argv, ref_cli_argv),
                                        (ref_cli_argv, our_cli_argv))):
            send, recv = yield self.exchange_text(
                srv.url, snd, rcv, long_text, code="%d-long-text" % (20 + n))
            self.assertExited(send)
            self.assertExited(recv)
            self.assertEqual(recv.stdout, cli_text_stdout(long_text))

    @defer.inlineCallbacks
    def test_text_from_stdin_both_ways(self):
        """send --text - reads the text from stdin to EOF and sends it
        unchanged, trailing newline included, in both directions."""
        srv = yield self.start_server()
        for n, (snd, rcv) in enumerate(((our_cli_argv, ref_cli_argv),
                                        (ref_cli_argv, our_cli_argv))):
            code = "%d-standard-input" % (30 + n)
            send = self.spawn(snd(srv.url, "send", "--text", "-",
                                  "--code", code), "sender",
                              stdin=TEXT.encode("utf-8"))
            recv = self.spawn(rcv(srv.url, "receive", code), "receiver")
            yield self.wait_all([send, recv])
            self.assertExited(send)
            self.assertExited(recv)
            self.assertEqual(recv.stdout, cli_text_stdout(TEXT),
                             (send.describe(), recv.describe()))

    @defer.inlineCallbacks
    def test_code_typed_on_stdin(self):
        """receive without a code reads it from stdin (not a terminal):
        both receivers print the prompt of Command line, "Example" ("Enter receive
        wormhole code: ") on stdout, then the text."""
        srv = yield self.start_server()
        for n, (snd, rcv) in enumerate(((our_cli_argv, ref_cli_argv),
                                        (ref_cli_argv, our_cli_argv))):
            code = "%d-typed-code" % (50 + n)
            send = self.spawn(snd(srv.url, "send", "--text", TEXT,
                                  "--code", code), "sender")
            recv = self.spawn(rcv(srv.url, "receive"), "receiver",
                              stdin=code.encode("ascii") + b"\n")
            yield self.wait_all([send, recv])
            self.assertExited(send)
            self.assertExited(recv)
            self.assertEqual(recv.stdout,
                             b"Enter receive wormhole code: "
                             + cli_text_stdout(TEXT), recv.describe())

    @defer.inlineCallbacks
    def check_wrong_code(self, sender_argv, receiver_argv):
        srv = yield self.start_server()
        send = self.spawn(sender_argv(srv.url, "send", "--text", TEXT,
                                      "--code", "8-guitarist-revenge"),
                          "sender")
        recv = self.spawn(receiver_argv(srv.url, "receive",
                                        "8-guitarist-revengf"), "receiver")
        # both are expected to fail: exit 1 is no reason to stop the other
        yield self.wait_all([send, recv], expected_exit=1)
        for run in (send, recv):
            self.assertExited(run, 1)
            self.assertTrue(run.stderr.strip(), run.describe())
        self.assertEqual(recv.stdout, b"")
        rows = yield self.wait_for_moods(srv, mailbox_moods)
        self.assertEqual(mailbox_moods(rows), ["scary"])

    def test_wrong_code_ours_sends(self):
        """Codes differing in one word, our sender and the reference
        receiver: both exit 1 with an error on stderr, nothing is printed
        as received, and the server records scary.  (Our wording is our
        own: the reference's prose is not copied.)"""
        return self.check_wrong_code(our_cli_argv, ref_cli_argv)

    def test_wrong_code_ref_sends(self):
        """The same with the reference sender and our receiver."""
        return self.check_wrong_code(ref_cli_argv, our_cli_argv)


class CLITextOnOurServer(CLIText, InteropTestCase):

    def start_server(self):
        return self.start_our_server()


class CLITextOnReferenceServer(CLIText, InteropTestCase):

    def start_server(self):
        return self.start_ref_server()


class OurCLIWelcome(InteropTestCase):
    """Our CLI reading the reference server's welcome (Mailbox server
    protocol, "Connection-Specific (Client-to-Server) Messages": motd, error)."""

    @defer.inlineCallbacks
    def test_motd_is_shown(self):
        """The reference server's --motd text appears on our CLI's stderr
        (never on stdout, which carries the received text), and the
        transfer still works."""
        srv = yield self.start_ref_server(["--motd", "interop motd ✓"])
        send, recv = yield self.exchange_text(srv.url, our_cli_argv,
                                              our_cli_argv, "after motd")
        self.assertExited(send)
        self.assertExited(recv)
        self.assertIn("interop motd ✓".encode("utf-8"), send.stderr)
        self.assertEqual(recv.stdout, b"after motd\n")

    @defer.inlineCallbacks
    def test_signal_error_fails_with_the_text(self):
        """The reference server's --signal-error makes our CLI exit 1
        showing the operator's text on stderr."""
        srv = yield self.start_ref_server(["--signal-error",
                                           "closed for maintenance"])
        send = self.spawn(our_cli_argv(srv.url, "send", "--text", "x",
                                       "--code", "4-purple-sausages"),
                          "sender")
        yield self.wait_all([send], expected_exit=1)
        self.assertExited(send, 1)
        self.assertIn(b"closed for maintenance", send.stderr)
