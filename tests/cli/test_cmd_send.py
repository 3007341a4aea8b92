"""``wormhole send`` logic against a recording fake wormhole and a Clock:
what goes to the peer, to stdout, to stderr, in which order."""
import hashlib
import io
import json
import os

from twisted.internet import defer
from twisted.trial import unittest

from wormhole.cli import cmd_send
from wormhole.cli._config import Config
from wormhole.cli.ui.wording import CLASSIC_USED
from wormhole.errors import TransferError, WrongPasswordError

from .fakes import FakeFactory, FakeReactor, FakeTransits


def j(d):
    return json.dumps(d).encode("utf-8")


class Send(unittest.TestCase):

    def setUp(self):
        self.factory = FakeFactory()
        self.reactor = FakeReactor()
        self.answers = []
        self.cfg = Config(relay_url="ws://example/v1", create=self.factory.create,
                          stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(),
                          read_line=self.read_line, qr=False)

    def read_line(self, reactor, prompt):
        self.cfg.stdout.write(prompt)
        return defer.succeed(self.answers.pop(0))

    def start(self, **kw):
        for k, v in kw.items():
            setattr(self.cfg, k, v)
        d = cmd_send.send(self.reactor, self.cfg)
        self.w = self.factory.wormholes[0] if self.factory.wormholes else None
        return d

    def sent(self):
        return [json.loads(e[1]) for e in self.factory.log if e[0] == "w.send_message"]

    def test_happy(self):
        """Allocates a code of the asked length, prints the instructions
        on stderr, offers the text, waits for the ack, closes; stdout gets
        only the consumed-code note."""
        d = self.start(text="hello", code_length=3)
        self.assertEqual(self.factory.log[0], ("w.allocate_code", 3))
        self.assertEqual(self.sent(), [{"offer": {"message": "hello"}}])
        self.assertNoResult(d)
        self.w.got_key()
        self.w.got_verifier()
        self.w.deliver(j({"answer": {"message_ack": "ok"}}))
        self.successResultOf(d)
        self.assertEqual(self.factory.log[-1], ("w.close",))
        self.assertEqual(self.cfg.stdout.getvalue(), cmd_send.CONSUMED_NOTE + "\n")
        self.assertEqual(self.cfg.stderr.getvalue(),
                         "Sending text message (5 Bytes)\n"
                         "Wormhole code is: 4-purple-sausages\n"
                         "On the other computer, please run:\n\n"
                         "wormhole receive 4-purple-sausages\n\n"
                         "text message sent\n")
        # a text is classic's text offer whatever the peer speaks: the
        # wormhole announces no transfer-v2 (docs/transfer-v2.md "Text")
        self.assertEqual(self.factory.create_kwargs[0]["versions"], {})
        self.assertEqual(self.factory.create_kwargs[0]["appid"],
                         "lothar.com/wormhole/text-or-file-xfer")

    def test_unsendable_names_the_option(self):
        """What cannot be sent in a directory stops the send before a code
        exists, and the error names the option that skips it."""
        tree = os.path.join(self.mktemp(), "tree")
        os.makedirs(tree)
        os.symlink("/no/such/target", os.path.join(tree, "dangling"))
        f = self.failureResultOf(self.start(what=tree, classic=True), TransferError)
        self.assertIn("dangling", str(f.value))
        self.assertIn("(use --ignore-unsendable-files to skip", str(f.value))
        self.assertEqual(self.factory.wormholes, [])

    def test_unsendable_stops_transfer_v2_too(self):
        """Sent by default (transfer-v2 first), what cannot be sent stops
        the send before a code exists too, naming it and the option (it
        was skipped with a warning, the option unread)."""
        tree = os.path.join(self.mktemp(), "tree")
        os.makedirs(tree)
        os.symlink("/no/such/target", os.path.join(tree, "dangling"))
        f = self.failureResultOf(self.start(what=tree), TransferError)
        self.assertIn("dangling", str(f.value))
        self.assertIn("(use --ignore-unsendable-files to skip", str(f.value))
        self.assertEqual(self.factory.wormholes, [])

    def test_unsendable_skipped_with_the_option(self):
        """With --ignore-unsendable-files it is skipped, one warning line
        in classic's words, and the rest is announced and offered."""
        self._file_setup()  # fake Transit for the classic fallback
        tree = os.path.join(self.mktemp(), "tree")
        os.makedirs(tree)
        os.symlink("/no/such/target", os.path.join(tree, "dangling"))
        with open(os.path.join(tree, "kept"), "wb") as f:
            f.write(b"kept")
        self.start(what=tree, ignore_unsendable_files=True, hide_progress=True)
        self.assertEqual(len(self.factory.wormholes), 1)
        dangling = os.path.join(tree, "dangling")
        self.assertEqual(self.before_code(),
                         [f"Warning: {dangling}: No such file or directory (skipped)",
                          "Sending directory (1 file, 4 Bytes) named 'tree'"])
        self.w.got_key()
        self.assertEqual(list(self.sent()[1]["offer"]), ["directory"])

    def test_qr(self):
        """With qr (the default), the QR code of
        wormhole-transfer:CODE?rendezvous=..., which zbar reads, comes
        between the code line and the instructions (the reference's order)."""
        from ._qrdecode import decode
        self.start(text="hello", qr=True)
        out = self.cfg.stderr.getvalue()
        code_line = "Wormhole code is: 4-purple-sausages\n"
        instructions = ("On the other computer, please run:\n\n"
                        "wormhole receive 4-purple-sausages\n\n")
        self.assertIn(code_line, out)
        self.assertIn(instructions, out)
        between = out.split(code_line)[1].split(instructions)[0]
        self.assertEqual(decode(between),
                         ["wormhole-transfer:4-purple-sausages?rendezvous=ws%3A%2F%2Fexample"])
        self.assertNotIn("\u2584", out.split(instructions)[1])

    def test_qr_not_in_zeromode(self):
        """-0 has no code to show: no QR code."""
        self.start(text="hello", qr=True, zeromode=True)
        self.assertNotIn("\u2584", self.cfg.stderr.getvalue())

    def test_given_code(self):
        """--code sets the code instead of allocating one."""
        self.start(text="x", code="7-a-b")
        self.assertEqual(self.factory.log[0], ("w.set_code", "7-a-b"))
        self.assertIn("wormhole receive 7-a-b\n", self.cfg.stderr.getvalue())

    def test_zeromode(self):
        """-0 uses the code "0-" and tells the peer to run receive -0,
        without a "Wormhole code is" line."""
        self.start(text="x", zeromode=True)
        self.assertEqual(self.factory.log[0], ("w.set_code", "0-"))
        err = self.cfg.stderr.getvalue()
        self.assertIn("wormhole receive -0\n", err)
        self.assertNotIn("Wormhole code is", err)

    def test_stdin(self):
        """--text - reads all of stdin (newlines kept)."""
        self.cfg.stdin = io.StringIO("line1\nline2")
        self.start(text="-")
        self.assertEqual(self.sent(), [{"offer": {"message": "line1\nline2"}}])
        self.assertTrue(self.cfg.stderr.getvalue().startswith(
            "Reading text message from stdin..\n"))

    def test_prompted_text(self):
        """Neither WHAT nor --text: one line is asked for on stdout."""
        self.answers.append("typed")
        self.start()
        self.assertEqual(self.sent(), [{"offer": {"message": "typed"}}])
        self.assertEqual(self.cfg.stdout.getvalue(), "Text to send: ")

    def _file_setup(self, data=b"file contents\n" * 5000):
        self.transits = FakeTransits(self.factory.log)
        self.cfg.transit_sender = self.transits
        self.cfg.transit_helper = "tcp:relay.example:4001"
        path = os.path.join(self.mktemp() + "-dir", "report.txt")
        os.makedirs(os.path.dirname(path))
        with open(path, "wb") as f:
            f.write(data)
        return path, data

    def test_file(self):
        """A file: our transit message (abilities, hints), then the offer
        {"file": {"filename", "filesize"}}; the receiver's hints go to
        Transit; after file_ack the key is set, Transit connects, the
        bytes go as records, and the receiver's ack with the right sha256
        completes the transfer."""
        path, data = self._file_setup()
        d = self.start(what=path, hide_progress=True)
        self.w.got_key()
        [transit] = self.transits.made
        self.assertEqual(self.sent(), [
            {"transit": {"abilities-v1": [{"type": "direct-tcp-v1"}, {"type": "relay-v1"}],
                         "hints-v1": [{"type": "direct-tcp-v1", "hostname": "127.0.0.1",
                                       "port": 1234, "priority": 0.0}]}},
            {"offer": {"file": {"filename": "report.txt", "filesize": len(data)}}}])
        self.assertIn(("transit.new", "tcp:relay.example:4001", False), self.factory.log)
        theirs = [{"type": "relay-v1", "hints": []}]
        self.w.deliver(j({"transit": {"abilities-v1": [], "hints-v1": theirs}}))
        self.assertIn(("transit.add_connection_hints", theirs), self.factory.log)
        self.assertNotIn(("transit.connect",), self.factory.log)
        self.w.deliver(j({"answer": {"file_ack": "ok"}}))
        self.assertIn(("transit.connect",), self.factory.log)
        self.assertEqual(b"".join(transit.pipe.sent), data)
        self.assertNoResult(d)
        transit.pipe.feed(j({"ack": "ok", "sha256": hashlib.sha256(data).hexdigest()}))
        self.successResultOf(d)
        self.assertTrue(transit.pipe.closed)
        self.assertEqual(self.factory.log[-1], ("w.close",))
        err = self.cfg.stderr.getvalue()
        self.assertIn(f"Sending {len(data) / 1000:.1f} kB file named 'report.txt'", err)
        self.assertIn("Confirmation received. Transfer complete.", err)

    def before_code(self):
        """The stderr lines before the code line (the announcement)."""
        err = self.cfg.stderr.getvalue()
        self.assertIn("Wormhole code is: ", err)
        return err.split("Wormhole code is: ")[0].splitlines()

    def test_file_announced_once_before_the_code(self):
        """Sent by default (transfer-v2 first), the file is announced in
        the reference's words before the code; the classic fallback (the
        fake peer has no transfer-v2) does not say it again."""
        path, data = self._file_setup()
        self.start(what=path, hide_progress=True)
        self.w.got_key()
        line = f"Sending {len(data) / 1000:.1f} kB file named 'report.txt'"
        self.assertEqual(self.before_code(), [line])
        self.assertEqual(self.cfg.stderr.getvalue().count("named 'report.txt'"), 1)
        self.assertIn(CLASSIC_USED, self.cfg.stderr.getvalue())

    def test_directory_announced_once_before_the_code(self):
        """A directory: its files and size before the code; the classic
        fallback builds its zipfile after the code and names it no more."""
        path, data = self._file_setup()
        folder = os.path.dirname(path)
        self.start(what=folder, hide_progress=True)
        self.w.got_key()
        name = os.path.basename(folder)
        self.assertEqual(self.before_code(),
                         [f"Sending directory (1 file, {len(data) / 1000:.1f} kB) named '{name}'"])
        err = self.cfg.stderr.getvalue()
        self.assertEqual(err.count(f"named '{name}'"), 1)
        self.assertIn("Building zipfile..", err.split("Wormhole code is: ")[1])

    def test_classic_directory_announced_before_the_code(self):
        """--classic: the reference's zipfile line and words, before the code."""
        path, data = self._file_setup()
        folder = os.path.dirname(path)
        self.start(what=folder, hide_progress=True, classic=True)
        lines = self.before_code()
        self.assertEqual(lines[0], "Building zipfile..")
        self.assertRegex(lines[1], r"^Sending directory \(\d+ Bytes compressed\) named '")
        self.assertEqual(len(lines), 2)

    def test_several_paths_summed_up_before_the_code(self):
        """Several paths: one line before the code sums them up."""
        path, data = self._file_setup()
        other = os.path.join(os.path.dirname(path), "other.txt")
        with open(other, "wb") as f:
            f.write(b"12")
        self.cfg.paths = [path, other]
        d = self.start(what=path, hide_progress=True)
        self.assertEqual(self.before_code(),
                         [f"Sending 2 paths: 2 files ({(len(data) + 2) / 1000:.1f} kB)"])
        # the fake peer is classic: the two paths are refused after the code
        self.w.got_key()
        self.failureResultOf(d, TransferError)

    def test_file_closes_wormhole_before_transit(self):
        """File-transfer protocol, "Transit": once the file_ack is in, the
        wormhole is closed (nameplate and mailbox freed on the server)
        before Transit connects and while the bytes flow; the transfer
        still completes, and the final close at the end waits for that
        same close."""
        path, data = self._file_setup()
        d = self.start(what=path, hide_progress=True)
        self.w.got_key()
        [transit] = self.transits.made
        self.assertNotIn(("w.close",), self.factory.log)
        self.w.deliver(j({"answer": {"file_ack": "ok"}}))
        log = self.factory.log
        self.assertLess(log.index(("w.close",)), log.index(("transit.connect",)))
        self.assertNoResult(d)
        transit.pipe.feed(j({"ack": "ok", "sha256": hashlib.sha256(data).hexdigest()}))
        self.successResultOf(d)
        self.assertEqual(log.count(("w.close",)), 2)

    def test_file_rejected_closes_only_at_the_end(self):
        """A refused offer never reaches the early close: the wormhole is
        closed once, by the command's cleanup."""
        path, data = self._file_setup()
        d = self.start(what=path, hide_progress=True)
        self.w.got_key()
        self.w.deliver(j({"error": "transfer rejected"}))
        self.failureResultOf(d)
        self.assertEqual(self.factory.log.count(("w.close",)), 1)
        self.assertNotIn(("transit.connect",), self.factory.log)

    def test_file_wrong_hash(self):
        """An ack whose sha256 differs from what we sent fails the send."""
        path, data = self._file_setup()
        d = self.start(what=path, hide_progress=True)
        self.w.got_key()
        self.w.deliver(j({"answer": {"file_ack": "ok"}}))
        self.transits.made[0].pipe.feed(j({"ack": "ok", "sha256": "00" * 32}))
        f = self.failureResultOf(d, TransferError)
        self.assertIn("different bytes", str(f.value))

    def test_file_no_ack(self):
        """The connection closing before the ack fails the send."""
        path, data = self._file_setup()
        d = self.start(what=path, hide_progress=True)
        self.w.got_key()
        self.w.deliver(j({"answer": {"file_ack": "ok"}}))
        self.transits.made[0].pipe.lose()
        f = self.failureResultOf(d, TransferError)
        self.assertIn("before it confirmed the transfer", str(f.value))

    def test_file_rejected(self):
        """The receiver's error ends the send before any Transit connection."""
        path, data = self._file_setup()
        d = self.start(what=path, hide_progress=True)
        self.w.got_key()
        self.w.deliver(j({"error": "transfer rejected"}))
        f = self.failureResultOf(d, TransferError)
        self.assertIn("transfer rejected", str(f.value))
        self.assertNotIn(("transit.connect",), self.factory.log)

    def test_file_verify_rejected(self):
        """--verify answered no: an error goes instead of transit and
        offer, and Transit never connects."""
        path, data = self._file_setup()
        self.answers.append("no")
        d = self.start(what=path, hide_progress=True, verify=True)
        self.w.got_key()
        self.w.got_verifier()
        self.failureResultOf(d, TransferError)
        self.assertEqual([list(m) for m in self.sent()], [["error"]])
        self.assertNotIn(("transit.connect",), self.factory.log)

    def test_bad_transit_helper(self):
        """A malformed --transit-helper is one readable error."""
        path, data = self._file_setup()
        self.cfg.transit_sender = __import__("wormhole.transit").transit.TransitSender
        d = self.start(what=path, hide_progress=True, transit_helper="nonsense")
        f = self.failureResultOf(d, TransferError)
        self.assertIn("bad --transit-helper 'nonsense'", str(f.value))
        self.assertEqual(self.factory.wormholes, [])

    def test_ctrl_c_removes_temporary_zipfile(self):
        """Ctrl-C while a directory is being offered removes the
        temporary zipfile."""
        path, data = self._file_setup()
        tmpdir = os.path.abspath(self.mktemp())
        os.makedirs(tmpdir)
        d = self.start(what=os.path.dirname(path), hide_progress=True, tmpdir=tmpdir)
        self.w.got_key()
        self.assertEqual(list(self.sent()[1]["offer"]), ["directory"])
        self.assertEqual(len(os.listdir(tmpdir)), 1)
        self.reactor.shut_down()
        self.assertEqual(os.listdir(tmpdir), [])
        self.assertNoResult(d)

    def test_file_no_listen(self):
        """--no-listen reaches Transit as no_listen=True."""
        path, data = self._file_setup()
        self.start(what=path, hide_progress=True, listen=False)
        self.assertIn(("transit.new", "tcp:relay.example:4001", True), self.factory.log)

    def test_missing_file(self):
        """A WHAT that does not exist is named in the error."""
        d = self.start(what="/no/such/file")
        f = self.failureResultOf(d, TransferError)
        self.assertIn("/no/such/file", str(f.value))

    def test_verify_yes(self):
        """--verify asks on stdout after the verifier, and sends the offer
        only after "yes"."""
        self.answers.append("yes")
        d = self.start(text="x", verify=True)
        self.assertEqual(self.sent(), [])
        self.w.got_key()
        self.w.got_verifier(b"\xab\xcd")
        self.assertEqual(self.sent(), [{"offer": {"message": "x"}}])
        self.assertEqual(self.cfg.stdout.getvalue(),
                         cmd_send.CONSUMED_NOTE + "\nVerifier abcd. ok? (yes/no): ")
        self.assertIn("wormhole receive --verify 4-purple-sausages",
                      self.cfg.stderr.getvalue())
        self.w.deliver(j({"answer": {"message_ack": "ok"}}))
        self.successResultOf(d)

    def test_verify_no(self):
        """"no" sends an error to the peer instead of the offer, and fails."""
        self.answers.append("no")
        d = self.start(text="x", verify=True)
        self.w.got_verifier()
        self.assertEqual(list(self.sent()[0]), ["error"])
        self.failureResultOf(d, TransferError)
        self.assertEqual(self.factory.log[-1], ("w.close",))

    def test_remote_error(self):
        """An error from the receiver fails the send after closing."""
        d = self.start(text="x")
        self.w.deliver(j({"error": "nope"}))
        f = self.failureResultOf(d, TransferError)
        self.assertIn("nope", str(f.value))
        self.assertEqual(self.factory.log[-1], ("w.close",))
        self.assertNotIn("text message sent", self.cfg.stderr.getvalue())

    def test_wrong_password(self):
        """The wormhole's own failure (wrong code) is what the command
        reports, even though close() fails too."""
        d = self.start(text="x")
        self.w.close_result = WrongPasswordError()
        self.w.fail(WrongPasswordError())
        self.failureResultOf(d, WrongPasswordError)
        self.assertEqual(self.factory.log[-1], ("w.close",))

    def test_debug_state(self):
        """--debug-state traces the named machines on stdout."""
        self.start(text="x", debug_state="B N")
        self.assertIn(("w.debug_set_trace", "send", "B N", self.cfg.stdout), self.factory.log)

    def test_ctrl_c(self):
        """Ctrl-C (reactor shutdown) closes the wormhole and the command
        ends quietly: no error, no "sent"."""
        d = self.start(text="x")
        closed = self.reactor.shut_down()
        self.assertEqual(self.factory.log[-1], ("w.close",))
        self.successResultOf(closed)
        self.w.fail(WrongPasswordError())  # what a closing wormhole might do
        self.successResultOf(d)
        self.assertNotIn("text message sent", self.cfg.stderr.getvalue())
        self.assertNotIn("ERROR", self.cfg.stderr.getvalue())
