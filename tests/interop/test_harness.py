"""The harness itself, exercised on reference <-> reference.

If these fail, every other interop failure is suspect: they prove the
reference venv, the reference server's start/stop, the CLI runner and the
reference library peer work before anything of ours is involved.
"""
import os

from twisted.internet import defer

from . import harness
from .harness import InteropTestCase, cli_text_stdout, ref_cli_argv

TEXT = "Grüße, wormhole ✓\nzweite Zeile\ttab"


class ReferenceVenv(InteropTestCase):

    def test_missing_reference_fails_with_instructions(self):
        """A missing reference venv raises AssertionError (a test failure,
        never a skip) that tells the reader to run ./dev test."""
        old = os.environ.get(harness.REF_VENV_ENV)
        self.addCleanup(self._restore, old)
        os.environ[harness.REF_VENV_ENV] = os.path.abspath(self.mktemp())
        e = self.assertRaises(AssertionError, harness.reference_venv)
        self.assertIn("./dev test", str(e))

    def _restore(self, old):
        if old is None:
            os.environ.pop(harness.REF_VENV_ENV, None)
        else:
            os.environ[harness.REF_VENV_ENV] = old

    def test_cli_text_stdout_escapes_like_the_reference(self):
        """The expected receiver output escapes non-printables and the
        backslash, and keeps printable non-ASCII as UTF-8."""
        self.assertEqual(cli_text_stdout("a\nb\\c é\x1b"),
                         b"a\\nb\\\\c \xc3\xa9\\x1b\n")


class ReferenceOnReference(InteropTestCase):

    @defer.inlineCallbacks
    def test_ref_cli_text_on_ref_server(self):
        """Reference CLI to reference CLI through the reference server:
        the receiver prints the (escaped) text, both exit 0, and the
        server's usage DB records one happy mailbox."""
        srv = yield self.start_ref_server()
        send, recv = yield self.exchange_text(srv.url, ref_cli_argv,
                                              ref_cli_argv, TEXT)
        self.assertExited(send)
        self.assertExited(recv)
        self.assertEqual(recv.stdout, cli_text_stdout(TEXT))
        rows = yield self.wait_for_moods(
            srv, lambda rows: harness.mailbox_moods(rows))
        self.assertEqual(harness.mailbox_moods(rows), ["happy"])

    @defer.inlineCallbacks
    def test_ref_peer_pair_on_ref_server(self):
        """Two reference library peers (ref_peer.py) exchange a message
        each way and agree on the verifier."""
        srv = yield self.start_ref_server()
        script = {"relay_url": srv.url, "appid": "example.com/interop",
                  "code": "3-harness-test",
                  "steps": [["verifier", None], ["send", "from %s"],
                            ["recv", 1]]}
        runs = []
        for who in ("a", "b"):
            s = dict(script, steps=[list(st) for st in script["steps"]])
            s["steps"][1][1] = "from %s" % who
            runs.append(self.spawn(harness.ref_peer_argv(s), "peer " + who))
        yield self.wait_all(runs)
        a, b = runs
        for run in runs:
            self.assertExited(run)
        ea, eb = a.events(), b.events()
        self.assertEqual([e["text"] for e in ea if e["event"] == "message"],
                         ["from b"])
        self.assertEqual([e["text"] for e in eb if e["event"] == "message"],
                         ["from a"])
        va = [e["hex"] for e in ea if e["event"] == "verifier"]
        vb = [e["hex"] for e in eb if e["event"] == "verifier"]
        self.assertEqual(len(va), 1)
        self.assertEqual(va, vb)
        self.assertEqual(ea[-1], {"event": "closed", "result": "'happy'"})
