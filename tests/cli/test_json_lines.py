"""``--json`` (docs/cli.md "JSON lines"): ``wormhole send`` and ``wormhole
receive`` driven entirely through JSON lines, with no pty: every stdout
line is validated against docs/json-lines.schema.json, every decision we
write against its ``decision``; a refusal, a wrong code and a Ctrl-C each
give their documented error ``kind``. Our processes, our Mailbox server
on 127.0.0.1, direct connections only."""
import json
import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

from ._gated import ENV
from ._json_schema import DECISION, lines_of
from ._process import CLIProcess, our_cli
from ._servers import OurServer
from ._support import NO_TRANSIT


def of_type(lines, kind):
    return [line for line in lines if line["type"] == kind]


class JSONLines(OurServer, unittest.TestCase):
    timeout = 60

    def cli(self, *args, cwd=None, name="wormhole"):
        argv = our_cli("--relay-url", self.url, "--transit-helper", NO_TRANSIT, *args)
        return CLIProcess.spawn(self, reactor, argv, name=name, env=ENV, cwd=cwd)

    def folder(self):
        path = os.path.abspath(self.mktemp())
        os.makedirs(path)
        return path

    @defer.inlineCallbacks
    def sender(self, *args):
        src = self.folder()
        with open(os.path.join(src, "data.bin"), "wb") as f:
            f.write(b"x" * 300_000)
        sender = self.cli("send", "--json", *args, "data.bin", cwd=src, name="send")
        match = yield sender.wait_for(rb'"code": "([^"]+)"')
        return sender, match.group(1).decode(), src

    def decide(self, process, accept):
        decision = {"type": "decision", "accept": accept}
        DECISION.validate(decision)
        process.write(json.dumps(decision).encode() + b"\n")

    @defer.inlineCallbacks
    def test_send_and_receive(self):
        """The receiver is asked on stdout (where the data goes), answers
        on stdin; both sides' lines tell the transfer, the file arrives."""
        sender, code, src = yield self.sender()
        dst = self.folder()
        receiver = self.cli("receive", "--json", code, cwd=dst, name="receive")
        yield receiver.wait_for(rb'"type": "offer"')
        self.decide(receiver, True)
        self.assertEqual((yield receiver.ended), 0, receiver.describe())
        self.assertEqual((yield sender.ended), 0, sender.describe())
        got, sent = lines_of(receiver), lines_of(sender)
        [offer] = of_type(got, "offer")
        self.assertEqual((offer["name"], offer["size"], offer["target"]),
                         ("data.bin", 300_000, os.path.join(dst, "data.bin")))
        self.assertEqual(of_type(got, "received")[0]["path"], os.path.join(dst, "data.bin"))
        self.assertEqual(of_type(sent, "sent")[0]["size"], 300_000)
        self.assertEqual(of_type(got, "protocol")[0]["protocol"], "transfer-v2")
        for lines in (got, sent):
            [connected] = of_type(lines, "connected")
            self.assertRegex(connected["via"], r"^(->|<-)tcp:127\.0\.0\.1:\d+$")
        self.assertEqual(of_type(got, "totals"), [{"v": 1, "type": "totals", "offers": 1,
                                                   "size": 300_000}])
        self.assertEqual((got[-1]["type"], sent[-1]["type"]), ("finished", "finished"))
        with open(os.path.join(dst, "data.bin"), "rb") as f:
            self.assertEqual(f.read(), b"x" * 300_000)

    @defer.inlineCallbacks
    def test_refusal(self):
        """The receiver declines: both end with kind "declined"."""
        sender, code, src = yield self.sender()
        receiver = self.cli("receive", "--json", code, cwd=self.folder(), name="receive")
        yield receiver.wait_for(rb'"type": "offer"')
        self.decide(receiver, False)
        self.assertNotEqual((yield receiver.ended), 0)
        self.assertNotEqual((yield sender.ended), 0)
        self.assertEqual(of_type(lines_of(receiver), "error")[0]["kind"], "declined")
        self.assertEqual(of_type(lines_of(sender), "error")[0]["kind"], "declined")

    @defer.inlineCallbacks
    def test_wrong_code(self):
        """The receiver's code has the right nameplate and wrong words:
        both end with kind "wrong-code"."""
        sender, code, src = yield self.sender()
        nameplate = code.split("-")[0]
        receiver = self.cli("receive", "--json", f"{nameplate}-wrong-words",
                            cwd=self.folder(), name="receive")
        self.assertEqual((yield receiver.ended), 1, receiver.describe())
        self.assertEqual((yield sender.ended), 1, sender.describe())
        self.assertEqual(of_type(lines_of(receiver), "error")[0]["kind"], "wrong-code")
        self.assertEqual(of_type(lines_of(sender), "error")[0]["kind"], "wrong-code")

    @defer.inlineCallbacks
    def test_ctrl_c(self):
        """The sender is stopped with SIGINT while the receiver decides: it
        says "interrupted" and exits 130; the receiver ends with the
        sender's words, kind "peer-error"."""
        sender, code, src = yield self.sender()
        receiver = self.cli("receive", "--json", code, cwd=self.folder(), name="receive")
        yield receiver.wait_for(rb'"type": "offer"')
        sender.transport.signalProcess("INT")
        self.assertEqual((yield sender.ended), 130, sender.describe())
        self.assertNotEqual((yield receiver.ended), 0)
        [stopped] = of_type(lines_of(sender), "error")
        self.assertEqual(stopped["kind"], "interrupted")
        [peer] = of_type(lines_of(receiver), "error")
        self.assertEqual((peer["kind"], peer["message"]),
                         ("peer-error", "the sender cancelled the transfer (Ctrl-C)"))

    @defer.inlineCallbacks
    def test_receive_output_and_classic(self):
        """``--classic`` on both sides and ``-o``: the classic protocol is
        chosen, and the file lands under the given name."""
        sender, code, src = yield self.sender("--classic")
        dst = self.folder()
        receiver = self.cli("receive", "--json", "--classic", "-o", "renamed.bin", code,
                            cwd=dst, name="receive")
        yield receiver.wait_for(rb'"type": "offer"')
        self.decide(receiver, True)
        self.assertEqual((yield receiver.ended), 0, receiver.describe())
        self.assertEqual((yield sender.ended), 0, sender.describe())
        got = lines_of(receiver)
        self.assertEqual([line["protocol"] for line in of_type(got, "protocol")], ["classic"])
        self.assertEqual(of_type(got, "offer")[0]["target"], os.path.join(dst, "renamed.bin"))
        with open(os.path.join(dst, "renamed.bin"), "rb") as f:
            self.assertEqual(f.read(), b"x" * 300_000)
        self.assertFalse(os.path.exists(os.path.join(dst, "data.bin")))

    @defer.inlineCallbacks
    def test_verify(self):
        """``-v``: both sides write the verifier line, the same one; the
        sender goes on once its decision line says yes."""
        sender, code, src = yield self.sender("--verify")
        receiver = self.cli("receive", "--json", "--verify", "--accept-file", code,
                            cwd=self.folder(), name="receive")
        yield sender.wait_for(rb'"type": "verifier"')
        self.decide(sender, True)
        self.assertEqual((yield receiver.ended), 0, receiver.describe())
        self.assertEqual((yield sender.ended), 0, sender.describe())
        [ours], [theirs] = of_type(lines_of(sender), "verifier"), of_type(lines_of(receiver),
                                                                            "verifier")
        self.assertEqual(ours["verifier"], theirs["verifier"])

    @defer.inlineCallbacks
    def test_verify_declined(self):
        """``-v`` and a no from the sender's program: the receiver hears
        the sender rejected the verification, both end declined."""
        sender, code, src = yield self.sender("--verify")
        receiver = self.cli("receive", "--json", "--accept-file", code, cwd=self.folder(),
                            name="receive")
        yield sender.wait_for(rb'"type": "verifier"')
        self.decide(sender, False)
        self.assertEqual((yield sender.ended), 3, sender.describe())
        self.assertNotEqual((yield receiver.ended), 0, receiver.describe())
        self.assertEqual(of_type(lines_of(sender), "error")[0]["kind"], "declined")
        [error] = of_type(lines_of(receiver), "error")
        self.assertIn("rejected the verification", error["message"])

    def command(self, process, **command):
        process.write(json.dumps(command).encode() + b"\n")

    @defer.inlineCallbacks
    def test_share(self):
        """Two ``share --json``: each offers a file given as an argument,
        one more is offered by an ``offer`` line, each side decides on
        stdin, and ``end`` lines end the session; one side receives
        into ``-o``. Every file arrives; both exit 0."""
        first_dir, second_dir, inbox = self.folder(), self.folder(), self.folder()
        for folder, name in ((first_dir, "one.bin"), (second_dir, "two.bin"),
                             (second_dir, "three.bin")):
            with open(os.path.join(folder, name), "wb") as f:
                f.write(name.encode() * 1000)
        first = self.cli("share", "--json", "one.bin", cwd=first_dir, name="share-1")
        code = (yield first.wait_for(rb'"code": "([^"]+)"')).group(1).decode()
        second = self.cli("share", "--json", "-o", inbox, "--code", code, "two.bin",
                          cwd=second_dir, name="share-2")
        # the second side offers one more once the first offer is decided
        yield second.wait_for(rb'"type": "offer"')
        self.decide(second, True)
        self.command(second, type="offer", path="three.bin")
        # the second offer line's regex matches only once there are two
        for seen in (rb'"type": "offer"', rb'"type": "offer"[\s\S]*"type": "offer"'):
            yield first.wait_for(seen)
            self.decide(first, True)
        yield first.wait_for(rb'"name": "three.bin", "path"')
        yield second.wait_for(rb'"type": "sent", "name": "three.bin"')
        self.command(first, type="end")
        self.command(second, type="end")
        self.assertEqual((yield first.ended), 0, first.describe())
        self.assertEqual((yield second.ended), 0, second.describe())
        ones, twos = lines_of(first), lines_of(second)
        self.assertEqual(sorted(line["name"] for line in of_type(ones, "received")),
                         ["three.bin", "two.bin"])
        self.assertEqual([line["name"] for line in of_type(twos, "received")], ["one.bin"])
        self.assertEqual(sorted(line["name"] for line in of_type(twos, "sent")),
                         ["three.bin", "two.bin"])
        self.assertEqual((ones[-1]["type"], twos[-1]["type"]), ("finished", "finished"))
        for folder, name in ((first_dir, "two.bin"), (first_dir, "three.bin"),
                             (inbox, "one.bin")):
            with open(os.path.join(folder, name), "rb") as f:
                self.assertEqual(f.read(), name.encode() * 1000)

    @defer.inlineCallbacks
    def test_share_declined(self):
        """A ``share --json`` side declines the other's offer and ends:
        the offerer's ``offer-failed`` line says declined, and both end
        with kind "declined"."""
        first_dir = self.folder()
        with open(os.path.join(first_dir, "one.bin"), "wb") as f:
            f.write(b"1" * 1000)
        first = self.cli("share", "--json", "one.bin", cwd=first_dir, name="share-1")
        code = (yield first.wait_for(rb'"code": "([^"]+)"')).group(1).decode()
        second = self.cli("share", "--json", "--code", code, cwd=self.folder(),
                          name="share-2")
        yield second.wait_for(rb'"type": "offer"')
        self.decide(second, False)
        yield first.wait_for(rb'"type": "offer-failed"')
        self.command(first, type="end")
        self.command(second, type="end")
        self.assertEqual((yield first.ended), 3, first.describe())
        self.assertEqual((yield second.ended), 3, second.describe())
        [failed] = of_type(lines_of(first), "offer-failed")
        self.assertEqual((failed["name"], failed["kind"]), ("one.bin", "declined"))
        self.assertEqual(of_type(lines_of(first), "error")[0]["kind"], "declined")
        self.assertEqual(of_type(lines_of(second), "error")[0]["kind"], "declined")
