"""``wormhole receive`` logic against a recording fake wormhole and a
Clock."""
import io
import json
import os

from twisted.internet import defer
from twisted.trial import unittest

from wormhole.cli import cmd_receive
from wormhole.cli._config import Config
from wormhole.cli.ui.wording import CLASSIC_USED
from wormhole.errors import (
    KeyFormatError,
    ServerConnectionError,
    TransferError,
    WormholeClosed,
    WrongPasswordError,
)

from ...cli.fakes import FakeFactory, FakeReactor


def j(d):
    return json.dumps(d).encode("utf-8")


class Receive(unittest.TestCase):

    def setUp(self):
        self.factory = FakeFactory()
        self.reactor = FakeReactor()
        self.typed = []
        self.cfg = Config(relay_url="ws://example/v1", create=self.factory.create,
                          stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())

    def fake_input(self, prompt, helper, reactor):
        """Stands in for input_with_completion: the human types a code."""
        self.cfg.stdout.write(prompt)
        result = self.typed.pop(0)
        if isinstance(result, Exception):
            return defer.fail(result)
        code, used_completion = result
        nameplate, words = code.split("-", 1)
        helper.choose_nameplate(nameplate)
        helper.choose_words(words)
        self.factory.wormholes[0].set_code(code)  # what the real helper leads to
        return defer.succeed(used_completion)

    def start(self, **kw):
        for k, v in kw.items():
            setattr(self.cfg, k, v)
        d = cmd_receive.receive(self.reactor, self.cfg, input_with_completion=self._input)
        self.w = self.factory.wormholes[0]
        return d

    def _input(self, prompt, helper, reactor):
        return self.fake_input(prompt, helper, reactor)

    def sent(self):
        return [json.loads(e[1]) for e in self.factory.log if e[0] == "w.send_message"]

    def test_happy(self):
        """With a code: the offered text is printed escaped on stdout (and
        nothing else), acknowledged, and the wormhole closed."""
        d = self.start(code="4-purple-sausages")
        self.assertEqual(self.factory.log[0], ("w.set_code", "4-purple-sausages"))
        self.w.got_key()
        self.w.got_verifier()
        self.w.deliver(j({"offer": {"message": "hi\tthere\n"}}))
        self.successResultOf(d)
        self.assertEqual(self.cfg.stdout.getvalue(), "hi\\tthere\\n\n")
        self.assertEqual(self.sent(), [{"answer": {"message_ack": "ok"}}])
        self.assertEqual(self.factory.log[-1], ("w.close",))
        # the fake announces no transfer-v2 (a classic peer, or our own
        # sender of a text): a text needs no word on the protocol
        self.assertEqual(self.cfg.stderr.getvalue(), "")

    def test_prompted_code(self):
        """No code: the prompt goes to stdout, and a code typed without
        <Tab> earns a hint on stderr."""
        self.typed.append(("4-purple-sausages", False))
        self.start()
        self.assertEqual(self.cfg.stdout.getvalue(), cmd_receive.PROMPT)
        self.assertIn(("h.choose_words", "purple-sausages"), self.factory.log)
        self.assertIn("<Tab>", self.cfg.stderr.getvalue())

    def test_prompted_code_with_completion(self):
        """No hint when completion was used."""
        self.typed.append(("4-purple-sausages", True))
        self.start()
        self.assertEqual(self.cfg.stderr.getvalue(), "")

    def test_prompt_eof(self):
        """End of input at the prompt is a KeyFormatError (readable)."""
        self.typed.append(EOFError())
        d = self.start()
        self.failureResultOf(d, KeyFormatError)
        self.assertEqual(self.factory.log[-1], ("w.close",))

    def test_server_gone_while_asked(self):
        """The wormhole fails while the code question is open (the Mailbox
        server will not serve us): the question is given up and the
        command fails with that error at once, not after a code is typed."""
        asked = []

        def ask(prompt, helper, reactor):
            asked.append(defer.Deferred())
            return asked[-1]
        self._input = ask
        d = self.start()
        self.assertNoResult(d)
        self.w.fail(ServerConnectionError("ws://example/v1", "refused"))
        self.failureResultOf(d, ServerConnectionError)
        self.assertTrue(asked[0].called)  # given up: cancelled
        self.assertEqual(self.factory.log[-1], ("w.close",))

    def test_code_typed_after_close(self):
        """A code typed after the wormhole closed (the helper refuses with
        WormholeClosed): the command fails with why it closed, the error
        a user can read (docs/cli.md, "Messages")."""
        reason = ServerConnectionError("ws://example/v1", "refused")
        self.typed.append(WormholeClosed(reason))
        d = self.start()
        self.assertIs(self.failureResultOf(d, ServerConnectionError).value, reason)

    def test_bad_code(self):
        """set_code's KeyFormatError fails the command after closing."""
        d = self.start(code="x")
        self.failureResultOf(d, KeyFormatError)
        self.assertEqual(self.factory.log[-1], ("w.close",))

    def test_waiting_for_sender(self):
        """One second without the sender's key: "Waiting for sender..."."""
        self.start(code="4-purple-sausages")
        self.reactor.advance(cmd_receive.WAITING_DELAY)
        self.assertEqual(self.cfg.stderr.getvalue(), "Waiting for sender...\n")

    def test_waiting_for_confirmation(self):
        """Key but no verifier after one second: says so."""
        self.start(code="4-purple-sausages")
        self.w.got_key()
        self.reactor.advance(cmd_receive.WAITING_DELAY)
        self.assertEqual(self.cfg.stderr.getvalue(),
                         "Key established, waiting for confirmation...\n")

    def test_no_waiting_notice_when_quick(self):
        """A verifier within the second cancels the notice: what is left
        is the bound on the wait for the offer."""
        self.start(code="4-purple-sausages")
        self.w.got_key()
        self.w.got_verifier()
        self.assertEqual([c.getTime() for c in self.reactor.getDelayedCalls()],
                         [self.cfg.peer_timeout])
        self.assertEqual(self.cfg.stderr.getvalue(), "")

    def test_verify(self):
        """--verify shows the verifier on stderr; the sender decides."""
        self.start(code="4-purple-sausages", verify=True)
        self.w.got_key()
        self.w.got_verifier(b"\x12\x34")
        self.assertEqual(self.cfg.stderr.getvalue(), "Verifier 1234.\n")

    def test_classic_file_offer_names_the_protocol(self):
        """A file offered by a peer announcing no transfer-v2: the line
        saying the classic protocol carries it comes before the offer is
        described (a text gets none: test_happy)."""
        self.cfg.cwd = os.path.abspath(self.mktemp())
        os.mkdir(self.cfg.cwd)
        d = self.start(code="4-purple-sausages", accept_file=True)
        self.w.got_key()
        self.w.got_verifier()
        self.w.deliver(j({"offer": {"file": {"filename": "a.bin", "filesize": 3}}}))
        lines = self.cfg.stderr.getvalue().splitlines()
        self.assertEqual(lines[:2], [CLASSIC_USED, "Receiving file (3 Bytes) into: 'a.bin'"])
        # the fake wormhole has no Transit to offer: the transfer stops there
        d.cancel()
        self.failureResultOf(d)

    def test_remote_error(self):
        """An error from the sender fails with its text; stdout empty."""
        d = self.start(code="4-purple-sausages")
        self.w.got_key()
        self.w.got_verifier()
        self.w.deliver(j({"error": "boom"}))
        f = self.failureResultOf(d, TransferError)
        self.assertIn("boom", str(f.value))
        self.assertEqual(self.cfg.stdout.getvalue(), "")

    def test_sender_never_shows_up(self):
        """Before the sender's key arrives there is no bound: its human
        starts it when they like (only the one-second notice is due)."""
        d = self.start(code="4-purple-sausages")
        self.reactor.advance(cmd_receive.WAITING_DELAY)
        self.assertEqual(self.reactor.getDelayedCalls(), [])
        self.assertNoResult(d)

    def test_sender_stalls_before_confirming(self):
        """Key, then silence: the receiver gives up after --peer-timeout
        seconds with one line, and closes the wormhole."""
        d = self.start(code="4-purple-sausages", peer_timeout=7.0)
        self.w.got_key()
        self.reactor.advance(6.9)
        self.assertNoResult(d)
        self.reactor.advance(0.1)
        f = self.failureResultOf(d, TransferError)
        self.assertEqual(str(f.value), "gave up waiting for the sender's confirmation of "
                         "the key: nothing came for 7 seconds (--peer-timeout)")
        self.assertEqual(self.factory.log[-1], ("w.close",))
        self.assertEqual(self.reactor.getDelayedCalls(), [])

    def test_sender_never_offers(self):
        """Confirmed, then no offer: the wait is bounded too, measured from
        the last message (a transit message restarts it)."""
        d = self.start(code="4-purple-sausages", peer_timeout=10.0)
        self.w.got_key()
        self.w.got_verifier()
        self.reactor.advance(9)
        self.w.deliver(j({"transit": {"abilities-v1": [], "hints-v1": []}}))
        self.reactor.advance(9)
        self.assertNoResult(d)
        self.reactor.advance(1)
        f = self.failureResultOf(d, TransferError)
        self.assertIn("gave up waiting for the sender's offer: nothing came for 10 "
                      "seconds", str(f.value))
        self.assertEqual(self.sent(), [])

    def test_no_peer_timeout(self):
        """peer_timeout=None waits as long as it takes."""
        d = self.start(code="4-purple-sausages", peer_timeout=None)
        self.w.got_key()
        self.w.got_verifier()
        self.assertEqual(self.reactor.getDelayedCalls(), [])
        self.w.deliver(j({"offer": {"message": "late"}}))
        self.successResultOf(d)

    def test_wrong_password(self):
        """A wrong code (WrongPasswordError) is reported as such."""
        d = self.start(code="4-purple-sausages")
        self.w.close_result = WrongPasswordError()
        self.w.fail(WrongPasswordError())
        self.failureResultOf(d, WrongPasswordError)

    def test_zeromode(self):
        """-0 uses the code "0-"."""
        self.start(zeromode=True)
        self.assertEqual(self.factory.log[0], ("w.set_code", "0-"))

    def test_allocate(self):
        """--allocate makes a code and shows it on stderr."""
        self.start(allocate=True)
        self.assertEqual(self.factory.log[0], ("w.allocate_code", 2))
        self.assertIn("4-purple-sausages", self.cfg.stderr.getvalue())

    def test_ctrl_c(self):
        """Ctrl-C closes the wormhole; the command ends without error."""
        d = self.start(code="4-purple-sausages")
        self.successResultOf(self.reactor.shut_down())
        self.assertEqual(self.factory.log[-1], ("w.close",))
        self.w.fail(WrongPasswordError())
        self.successResultOf(d)
