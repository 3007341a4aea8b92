"""A real file transfer with ``--dump-timing`` on both sides
(docs/timing.md, "Tests"): the timeline has the Transit connection and the
transfer of the data between the version exchange and the close.

Our CLI processes, our Mailbox server and our Transit relay, all on
127.0.0.1 (--no-listen on both sides: the only hint is the relay's)."""
import json
import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

from tests.cli._process import our_cli
from wormhole_relay.testing import start_transit_relay

from ._support import TimedTransfers

FILE_PHASES = ["connect", "allocate/claim", "PAKE", "version", "transit connect",
               "transfer", "close"]
SIZE = 2 * 1000 * 1000


class FileTransfer(TimedTransfers, unittest.TestCase):

    @defer.inlineCallbacks
    def setUp(self):
        yield TimedTransfers.setUp(self)
        relay = yield start_transit_relay(reactor)
        self.addCleanup(relay.stop)
        self.helper = f"tcp:127.0.0.1:{relay.port}"

    def ours(self, *args):
        return our_cli("--relay-url", self.srv.url, "--transit-helper", self.helper, *args)

    @defer.inlineCallbacks
    def test_file_both_sides(self):
        """Our sender and receiver move a file through the relay; both
        timelines show every phase, Transit included, in order."""
        payload = self.path("payload.bin")
        data = os.urandom(SIZE)
        with open(payload, "wb") as f:
            f.write(data)
        got = self.path("received.bin")
        sb, rb = self.path("sender.json"), self.path("receiver.json")
        # --classic: these phases are the classic protocol's (Transit)
        send = self.spawn(self.ours("--dump-timing", sb, "send", "--classic", "--no-listen",
                                    "--hide-progress", "--code", "9-ab-cd", payload),
                          "sender")
        yield send.wait_for(rb"Wormhole code is")
        recv = self.spawn(self.ours("--dump-timing", rb, "receive", "--classic", "--no-listen",
                                    "--hide-progress", "--accept-file", "-o", got,
                                    "9-ab-cd"), "receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        with open(got, "rb") as f:
            self.assertEqual(f.read(), data)
        for fn in (sb, rb):
            with open(fn) as f:
                timed = [ev for ev in json.load(f) if ev["name"] == "transfer"]
            # the CLI times the bytes: sender until the ack, receiver until it sent it
            self.assertEqual(len(timed), 1, fn)
            self.assertEqual(timed[0]["details"], {"bytes": SIZE})
            self.assertGreaterEqual(timed[0]["stop"], timed[0]["start"])
        phases = yield self.render(sb, rb)
        self.assertPhases(phases, "sender", FILE_PHASES, early_close=True)
        self.assertPhases(phases, "receiver", FILE_PHASES, early_close=True)
