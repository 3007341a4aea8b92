"""Our CLI side by side with the reference CLI (magic-wormhole 0.24, run
as a subprocess from its own venv, never imported), on our in-process
Mailbox server: the same scenario with either side swapped must print the
same bytes on stdout (docs/cli.md "What goes to stdout and stderr").

tests/interop/test_cli_text.py covers text both ways and wrong codes;
this module covers the rest of the CLI's surface: the sender's stdout
(consumed-code note, verifier question), the prompted code, -0, a
rejected verifier, and a file offered to our receiver with --only-text.
"""
import re

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole_mailbox.testing import start_mailbox_server

from ._process import CLIProcess, our_cli
from ._support import NO_TRANSIT, TEXT, ref


def ours(url, *args):
    return our_cli("--relay-url", url, "--transit-helper", NO_TRANSIT, *args)


def mask_verifier(out):
    return re.sub(rb"[0-9a-f]{64}", b"<verifier>", out)


class SideBySide(unittest.TestCase):
    timeout = 90

    @defer.inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(self.srv.stop)

    def spawn(self, argv, stdin=None, name="wormhole"):
        return CLIProcess.spawn(self, reactor, argv, stdin=stdin, name=name)

    @defer.inlineCallbacks
    def pair(self, sender, receiver, send_args, recv_args=(), send_stdin=None,
             recv_stdin=None, code_on_stdin=False):
        """Sender with an allocated code, then the receiver with it (as an
        argument, or typed on stdin at the prompt)."""
        send = self.spawn(sender(self.srv.url, "send", *send_args), stdin=send_stdin,
                          name="sender")
        m = yield send.wait_for(rb"wormhole receive (?:--verify )?(\S+)")
        code = m.group(1)
        if code_on_stdin:
            recv = self.spawn(receiver(self.srv.url, "receive", *recv_args),
                              stdin=code + b"\n", name="receiver")
        else:
            recv = self.spawn(receiver(self.srv.url, "receive", *recv_args,
                                       code.decode()), stdin=recv_stdin, name="receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        return send, recv

    def assertExit(self, run, status):
        self.assertEqual(run.status, status, run.describe())

    @defer.inlineCallbacks
    def test_same_stdout_with_verify(self):
        """--verify answered yes: the sender's stdout (note, verifier
        question) and the receiver's stdout (the escaped text) are the
        same bytes whichever side is ours."""
        a_send, a_recv = yield self.pair(ours, ref, ["--verify", "--text", TEXT],
                                         ["--verify"], send_stdin=b"yes\n")
        b_send, b_recv = yield self.pair(ref, ours, ["--verify", "--text", TEXT],
                                         ["--verify"], send_stdin=b"yes\n")
        for run in (a_send, a_recv, b_send, b_recv):
            self.assertExit(run, 0)
        self.assertEqual(mask_verifier(a_send.stdout), mask_verifier(b_send.stdout))
        self.assertEqual(a_recv.stdout, b_recv.stdout)
        self.assertIn(b"<verifier>. ok? (yes/no): ", mask_verifier(a_send.stdout))

    @defer.inlineCallbacks
    def test_same_stdout_prompted_code_and_stdin_text(self):
        """Text from stdin (--text -) and the code typed at the receiver's
        prompt: same stdout on both sides, ours or theirs."""
        a_send, a_recv = yield self.pair(ours, ref, ["--text", "-"],
                                         send_stdin=TEXT.encode(), code_on_stdin=True)
        b_send, b_recv = yield self.pair(ref, ours, ["--text", "-"],
                                         send_stdin=TEXT.encode(), code_on_stdin=True)
        for run in (a_send, a_recv, b_send, b_recv):
            self.assertExit(run, 0)
        self.assertEqual(a_send.stdout, b_send.stdout)
        self.assertEqual(a_recv.stdout, b_recv.stdout)
        self.assertTrue(b_recv.stdout.startswith(b"Enter receive wormhole code: "))

    @defer.inlineCallbacks
    def test_zeromode_both_ways(self):
        """-0 (the code "0-") works with the reference either way."""
        for sender, receiver in ((ours, ref), (ref, ours)):
            send = self.spawn(sender(self.srv.url, "send", "-0", "--text", "zero"),
                              name="sender")
            yield send.wait_for(rb"wormhole receive -0")
            recv = self.spawn(receiver(self.srv.url, "receive", "-0"), name="receiver")
            yield defer.gatherResults([send.ended, recv.ended])
            self.assertExit(send, 0)
            self.assertExit(recv, 0)
            self.assertEqual(recv.stdout, b"zero\n")

    @defer.inlineCallbacks
    def test_verifier_rejected_by_our_sender(self):
        """Our sender answering "no": the reference receiver gets nothing
        and exits 1; ours exits 3 (declined)."""
        send, recv = yield self.pair(ours, ref, ["--verify", "--text", "x"],
                                     send_stdin=b"no\n")
        self.assertExit(send, 3)
        self.assertExit(recv, 1)
        self.assertEqual(recv.stdout, b"")

    @defer.inlineCallbacks
    def test_verifier_rejected_by_reference_sender(self):
        """The reference sender answering "no": our receiver prints
        nothing on stdout and exits 3 (declined) with the sender's reason."""
        send, recv = yield self.pair(ref, ours, ["--verify", "--text", "x"],
                                     send_stdin=b"no\n")
        self.assertExit(send, 1)
        self.assertExit(recv, 3)
        self.assertEqual(recv.stdout, b"")
        self.assertIn(b"ERROR: the sender declined: sender rejected verification check",
                      recv.stderr)

    @defer.inlineCallbacks
    def test_file_offer_refused(self):
        """A file offered by the reference to our receiver with
        --only-text: refused with "transfer rejected" to the sender, which
        exits 1 (the reference), ours 3 (declined), no traceback."""
        path = self.mktemp()
        with open(path, "w") as f:
            f.write("file data")
        send, recv = yield self.pair(ref, ours, [path], ["--only-text"])
        self.assertExit(send, 1)
        self.assertExit(recv, 3)
        self.assertIn(b"--only-text", recv.stderr)
        self.assertIn(b"transfer rejected", send.stderr)
        self.assertNotIn(b"Traceback", recv.stderr)
