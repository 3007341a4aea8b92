"""``--json`` (docs/cli.md "JSON lines"): ``wormhole send`` and ``wormhole
receive`` driven entirely through JSON lines, with no pty: every stdout
line is validated against docs/json-lines.schema.json, every decision we
write against its ``decision``; a refusal, a wrong code and a Ctrl-C each
give their documented error ``kind``. Our processes, our Mailbox server
on 127.0.0.1, direct connections only."""
import json
import os

import jsonschema
from twisted.internet import defer, reactor
from twisted.trial import unittest

from .._processes import REPO_ROOT
from ._gated import ENV
from ._process import CLIProcess, our_cli
from ._servers import OurServer
from ._support import NO_TRANSIT

with open(os.path.join(REPO_ROOT, "docs", "json-lines.schema.json")) as _f:
    SCHEMA = json.load(_f)
LINE = jsonschema.Draft202012Validator(SCHEMA)
DECISION = jsonschema.Draft202012Validator(SCHEMA["$defs"]["decision"])


def lines_of(process):
    """Every stdout line, parsed and checked against the schema."""
    out = []
    for raw in process.stdout.decode("utf-8").splitlines():
        line = json.loads(raw)
        LINE.validate(line)
        out.append(line)
    return out


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
