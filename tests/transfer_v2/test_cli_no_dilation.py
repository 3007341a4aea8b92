"""A peer that announces transfer-v2 in its ``app_versions`` but whose
version message has no ``can-dilate`` version we share (our library
created without ``dilation=True``, playing the classic protocol by hand):
our CLI falls back to classic on the same wormhole instead of failing,
and says so (docs/transfer-v2.md "The CLI")."""
import json
import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

import wormhole
from wormhole import transfer_v2 as T
from wormhole.cli._config import APPID
from wormhole.cli.ui.wording import CANNOT_DILATE, V2_USED
from wormhole_mailbox.testing import start_mailbox_server

from ..cli._process import CLIProcess, our_cli
from ..cli._support import NO_TRANSIT

ENV = {"WORMHOLE_TRANSIT_ADDRESSES": "127.0.0.1"}
CODE = "7-no-dilation"


class NoDilation(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(self.srv.stop)

    def peer(self, mode):
        """Our library as a peer that lists transfer-v2 and cannot dilate."""
        w = wormhole.create(APPID, self.srv.url, reactor, versions=T.app_versions(mode))
        self.addCleanup(lambda: w.close().addErrback(lambda f: None))
        w.set_code(CODE)
        return w

    def ours(self, *args, cwd=None):
        argv = our_cli("--relay-url", self.srv.url, "--transit-helper", NO_TRANSIT, *args)
        return CLIProcess.spawn(self, reactor, argv, name=args[0], env=ENV, cwd=cwd)

    @defer.inlineCallbacks
    def next_offer(self, w):
        """The sender's next classic message that holds an offer."""
        while True:
            message = json.loads((yield w.get_message()))
            if "offer" in message:
                return message["offer"]

    def assertFellBack(self, run):
        self.assertIn(CANNOT_DILATE.encode(), run.stderr, run.describe())
        self.assertNotIn(V2_USED.encode(), run.stderr, run.describe())

    @defer.inlineCallbacks
    def test_send_text(self):
        """``wormhole send --text``: the text goes as classic's offer on a
        wormhole that announces no transfer-v2 (nothing to dilate for one
        message), the peer's ack ends it, exit 0."""
        send = self.ours("send", "--code", CODE, "--text", "hello classic")
        w = self.peer("receive")
        versions = yield w.get_versions()
        self.assertNotIn("transfer-v2", versions)
        self.assertEqual((yield self.next_offer(w)), {"message": "hello classic"})
        w.send_message(json.dumps({"answer": {"message_ack": "ok"}}).encode())
        yield send.ended
        self.assertEqual(send.status, 0, send.describe())
        self.assertNotIn(CANNOT_DILATE.encode(), send.stderr, send.describe())

    @defer.inlineCallbacks
    def test_send_file(self):
        """``wormhole send FILE``: classic's file offer (name and size),
        which the peer declines: exit 3, as with any classic receiver that
        says no."""
        src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        with open(os.path.join(src, "data.bin"), "wb") as f:
            f.write(b"x" * 1234)
        send = self.ours("send", "--code", CODE, "data.bin", cwd=src)
        w = self.peer("receive")
        offer = yield self.next_offer(w)
        self.assertEqual(offer, {"file": {"filename": "data.bin", "filesize": 1234}})
        w.send_message(json.dumps({"error": "transfer rejected"}).encode())
        yield send.ended
        self.assertEqual(send.status, 3, send.describe())
        self.assertFellBack(send)

    @defer.inlineCallbacks
    def test_receive_text(self):
        """``wormhole receive`` from such a sender: its classic text offer
        (which the transfer-v2 attempt read from the mailbox first) is
        printed and acknowledged, exit 0."""
        w = self.peer("send")
        recv = self.ours("receive", CODE)
        yield w.get_versions()
        w.send_message(json.dumps({"offer": {"message": "hello from classic"}}).encode())
        answer = json.loads((yield w.get_message()))
        self.assertEqual(answer, {"answer": {"message_ack": "ok"}})
        yield recv.ended
        self.assertEqual(recv.status, 0, recv.describe())
        self.assertEqual(recv.stdout, b"hello from classic\n")
        self.assertFellBack(recv)
