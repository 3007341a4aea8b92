"""Our ``wormhole`` processes against our Mailbox server (in-process, on
127.0.0.1): text both ways, stdin, prompted codes, --verify, and every
error a user can meet, with the exact stdout the reference prints."""
import json
import re
import socket

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole.cli.cmd_send import CONSUMED_NOTE
from wormhole_mailbox.testing import start_mailbox_server

from ._process import CLIProcess, our_cli

TEXT = "Grüße ✓ 😀\nzweite\tZeile \\ \x1b[31m it's \"q\"\n"
ESCAPED = (repr(TEXT)[1:-1] + "\n").encode("utf-8")


class EndToEnd(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(self.srv.stop)

    def spawn(self, *args, stdin=None, name="wormhole", url=None):
        argv = our_cli("--relay-url", url or self.srv.url, *args)
        return CLIProcess.spawn(self, reactor, argv, stdin=stdin, name=name)

    @defer.inlineCallbacks
    def allocated(self, *send_args, stdin=None):
        """Start a sender with a server-allocated code; return it and the code."""
        send = self.spawn("send", *send_args, stdin=stdin, name="sender")
        m = yield send.wait_for(rb"Wormhole code is: (\S+)")
        return send, m.group(1).decode("ascii")

    def assertExit(self, run, status):
        self.assertEqual(run.status, status, run.describe())

    @defer.inlineCallbacks
    def test_text_allocated_code(self):
        """send --text (allocated code) -> receive CODE: the receiver's
        stdout is the escaped text and a newline, the sender's stdout only
        the consumed-code note; both exit 0."""
        send, code = yield self.allocated("--text", TEXT)
        self.assertRegex(code, r"^\d+-\w+-\w+$")
        recv = self.spawn("receive", code, name="receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertEqual(recv.stdout, ESCAPED)
        self.assertEqual(send.stdout, (CONSUMED_NOTE + "\n").encode())
        self.assertIn(b"text message sent", send.stderr)

    @defer.inlineCallbacks
    def test_debug_state_and_dump_timing(self):
        """--debug-state prints machine transitions on stdout (after which
        the text still arrives); --dump-timing writes a JSON list of
        timing events and says so on stderr."""
        timing = self.mktemp()
        send = self.spawn("--dump-timing", timing, "send", "--code", "32-a-b",
                          "--debug-state", "B,N", "--text", "traced", name="sender")
        recv = self.spawn("receive", "32-a-b", name="receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertEqual(recv.stdout, b"traced\n")
        self.assertRegex(send.stdout, rb"send\.Boss\[\w+\]\.\w+ -> \[\w+\]")
        self.assertRegex(send.stdout, rb"send\.Nameplate\[")
        self.assertNotRegex(send.stdout, rb"send\.Mailbox\[")
        with open(timing) as f:
            events = json.load(f)
        self.assertIsInstance(events, list)
        self.assertTrue(events)
        self.assertIn(f"Timing data written to {timing}".encode(), send.stderr)

    @defer.inlineCallbacks
    def test_given_code_receiver_first(self):
        """Both sides given the code, receiver started first (it waits)."""
        recv = self.spawn("rx", "31-guitarist-revenge", name="receiver")
        yield recv.wait_for(rb"Waiting for sender")
        send = self.spawn("tx", "--code", "31-guitarist-revenge", "--text", "hi",
                          name="sender")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertEqual(recv.stdout, b"hi\n")

    @defer.inlineCallbacks
    def test_stdin_text_and_prompted_code(self):
        """--text - reads stdin; a receiver without CODE reads it from
        stdin after the prompt."""
        send, code = yield self.allocated("--text", "-", stdin=TEXT.encode("utf-8"))
        recv = self.spawn("receive", stdin=code.encode() + b"\n", name="receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertEqual(recv.stdout, b"Enter receive wormhole code: " + ESCAPED)
        self.assertIn(b"Reading text message from stdin..", send.stderr)

    @defer.inlineCallbacks
    def test_verify_yes(self):
        """--verify: both print the same verifier; "yes" sends the text."""
        send, code = yield self.allocated("--verify", "--text", "checked", stdin=b"yes\n")
        recv = self.spawn("receive", "--verify", code, name="receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertEqual(recv.stdout, b"checked\n")
        v_send = re.search(rb"Verifier ([0-9a-f]{64})\. ok\? \(yes/no\): ", send.stdout)
        v_recv = re.search(rb"Verifier ([0-9a-f]{64})\.", recv.stderr)
        self.assertTrue(v_send and v_recv, send.describe() + recv.describe())
        self.assertEqual(v_send.group(1), v_recv.group(1))

    @defer.inlineCallbacks
    def test_verify_no(self):
        """--verify answered "no": nothing is received, both exit 3 (a
        human declined) with a message."""
        send, code = yield self.allocated("--verify", "--text", "secret", stdin=b"no\n")
        recv = self.spawn("receive", code, name="receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertExit(send, 3)
        self.assertExit(recv, 3)
        self.assertEqual(recv.stdout, b"")
        self.assertIn(b"rejected the verification", send.stderr)
        self.assertIn(b"rejected the verification", recv.stderr)

    @defer.inlineCallbacks
    def test_wrong_code(self):
        """A wrong code: both exit 1 with the wrong-code message, nothing
        is printed as received, no traceback."""
        send, code = yield self.allocated("--text", "secret")
        nameplate = code.split("-")[0]
        recv = self.spawn("receive", nameplate + "-wrong-code", name="receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        for run in (send, recv):
            self.assertExit(run, 1)
            self.assertIn(b"ERROR: ", run.stderr)
            self.assertIn(b"code", run.stderr)
            self.assertNotIn(b"Traceback", run.stderr)
        self.assertEqual(recv.stdout, b"")

    @defer.inlineCallbacks
    def test_malformed_code(self):
        """A code without a numeric nameplate: exit 1, readable."""
        recv = self.spawn("receive", "purple-sausages")
        yield recv.ended
        self.assertExit(recv, 1)
        self.assertIn(b"ERROR: that is not a valid wormhole code", recv.stderr)
        self.assertNotIn(b"Traceback", recv.stderr)

    @defer.inlineCallbacks
    def test_malformed_relay_url(self):
        """A relay URL that is not ws:// or wss://: exit 1, readable."""
        send = self.spawn("send", "--text", "x", url="http//oops")
        yield send.ended
        self.assertExit(send, 1)
        self.assertIn(b"ERROR: bad --relay-url 'http//oops'", send.stderr)
        self.assertNotIn(b"Traceback", send.stderr)

    @defer.inlineCallbacks
    def test_unreachable_server(self):
        """Nobody listens at the URL: exit 1, "cannot connect to the
        mailbox server at URL: ..."."""
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # a port nobody listens on
        url = f"ws://127.0.0.1:{port}/v1"
        recv = self.spawn("receive", "4-purple-sausages", url=url)
        yield recv.ended
        self.assertExit(recv, 1)
        self.assertIn(f"ERROR: cannot connect to the mailbox server at {url}: ".encode(),
                      recv.stderr)
        self.assertNotIn(b"Traceback", recv.stderr)

    @defer.inlineCallbacks
    def test_sending_a_missing_file(self):
        """wormhole send NOSUCHFILE: named in the error, exit 1, no wormhole."""
        send = self.spawn("send", "no-such-file.bin")
        yield send.ended
        self.assertExit(send, 1)
        self.assertIn(b"ERROR: Cannot send: no file or directory named 'no-such-file.bin'",
                      send.stderr)


class WelcomeErrorEndToEnd(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def test_welcome_error(self):
        """A server that refuses every client (welcome error): exit 1,
        the server's words on stderr."""
        srv = yield start_mailbox_server(reactor, port=0, signal_error="closed for repairs")
        self.addCleanup(srv.stop)
        run = CLIProcess.spawn(self, reactor, our_cli("--relay-url", srv.url, "send",
                                                      "--text", "x"))
        yield run.ended
        self.assertEqual(run.status, 1, run.describe())
        self.assertIn(b"closed for repairs", run.stderr)
        self.assertNotIn(b"Traceback", run.stderr)
