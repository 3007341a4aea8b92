"""A peer that goes away in the middle of a file transfer: the other
side says so in one line (who closed, how far the transfer got), exits 1,
and never prints a traceback (docs/cli.md, "Errors"). Real ``wormhole``
processes, relay-only through our Transit relay behind a gate that holds
the file at half its size, so the peer is killed at ~50% without timing;
against our Mailbox server and the reference's; for the classic protocol
and for transfer-v2 (where Dilation would wait for the peer to come back:
the side left gives up after ``--peer-timeout``, short here)."""
import os
import re

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole_relay.testing import start_transit_relay

from ..files._support import write_file
from ._gate import start_gate
from ._process import CLIProcess, our_cli
from ._servers import OurServer, ReferenceServer

# the half left when the gate holds must not fit in the kernel's socket
# buffers, or the sender would have "sent" everything: the sender's send
# buffer grows to 4 MB at most (tcp_wmem), the gate's receive buffer is
# fixed small (_gate.py)
SIZE = 16 * 1000 * 1000
HALF = SIZE // 2
# transfer-v2: how long the side left waits for the peer to come back
V2_PEER_TIMEOUT = "3"
CLASSIC = ["--classic"]
TRANSFER_V2 = ["--peer-timeout", V2_PEER_TIMEOUT]


class _PeerLeaves:
    timeout = 90

    @defer.inlineCallbacks
    def start_transfer(self, protocol):
        """Sender and receiver of a 16 MB file, relay-only through the
        gate; fires once 8 MB went from the sender towards the relay."""
        relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(relay.stop)
        gate, gate_port = yield start_gate(self, reactor, relay.port, HALF)
        src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        write_file(os.path.join(src, "big.bin"), SIZE)
        out = os.path.abspath(self.mktemp())
        os.makedirs(out)
        common = ["--relay-url", self.url, "--transit-helper", f"tcp:127.0.0.1:{gate_port}"]
        code = "17-peer-leaves"
        env = {"WORMHOLE_TRANSIT_ADDRESSES": "127.0.0.1"}
        self.send = CLIProcess.spawn(
            self, reactor, our_cli(*common, "send", "--no-listen", "--hide-progress",
                                   *protocol, "--code", code, "big.bin"),
            name="sender", env=env, cwd=src)
        self.recv = CLIProcess.spawn(
            self, reactor, our_cli(*common, "receive", "--no-listen", "--hide-progress",
                                   *protocol, "--accept-file", code),
            name="receiver", env=env, cwd=out)
        self.out = out
        self.gate = gate
        forwarded = yield gate.reached
        self.assertEqual(forwarded, HALF)

    def assertOneErrorLine(self, run, pattern):
        self.assertEqual(run.status, 1, run.describe())
        self.assertNotIn(b"Traceback", run.stderr, run.describe())
        errors = [line for line in run.stderr.decode().splitlines()
                  if line.startswith("ERROR")]
        self.assertEqual(len(errors), 1, run.describe())
        self.assertRegex(errors[0], pattern)
        return errors[0]

    def assertWaitedPeerTimeout(self, line):
        """The offer was cancelled after --peer-timeout: the peer sent
        nothing, or Dilation could not reach it, for that long."""
        self.assertRegex(line, rf"cancelled: .*\b{V2_PEER_TIMEOUT}(\.0)? s(econds)?\b")

    @defer.inlineCallbacks
    def receiver_killed_at_half(self, protocol, how):
        """The receiver is killed at ~50%: the sender prints one ERROR
        line saying the receiver ``how`` (closed the connection, went
        away) and how much of the 16 MB was sent, exit 1, no traceback;
        the receiver left no file under the final name."""
        yield self.start_transfer(protocol)
        self.recv.kill()
        yield self.send.ended
        line = self.assertOneErrorLine(
            self.send, rf"^ERROR: the receiver {how} after "
                       r"[\d.]+ MB of 16\.0 MB were sent( \(.+\))?$")
        sent = float(re.search(r"after ([\d.]+) MB", line).group(1))
        # what left the sender: at least what passed the gate, less than all
        self.assertGreaterEqual(sent, HALF / 1e6)
        self.assertLess(sent, SIZE / 1e6)
        self.assertNotIn("big.bin", os.listdir(self.out))
        return line

    @defer.inlineCallbacks
    def sender_killed_at_half(self, protocol, how):
        """The sender is killed at ~50%: the receiver prints one ERROR
        line saying the sender ``how`` and how much of the 16 MB arrived,
        exit 1; nothing is left under the final name."""
        yield self.start_transfer(protocol)
        self.send.kill()
        yield self.send.ended
        self.gate.drain()
        yield self.recv.ended
        line = self.assertOneErrorLine(
            self.recv, rf"^ERROR: the sender {how} after "
                       r"[\d.]+ MB of 16\.0 MB arrived( \(.+\))?$")
        self.assertNotIn("big.bin", os.listdir(self.out))
        return line

    @defer.inlineCallbacks
    def test_receiver_killed_at_half_classic(self):
        """Classic: the Transit connection closes, the sender says so."""
        line = yield self.receiver_killed_at_half(CLASSIC, "closed the connection")
        self.assertTrue(line.endswith("were sent"), line)

    @defer.inlineCallbacks
    def test_sender_killed_at_half_classic(self):
        """Classic: the receiver says so and keeps no file at all."""
        line = yield self.sender_killed_at_half(CLASSIC, "closed the connection")
        self.assertTrue(line.endswith("arrived"), line)
        self.assertEqual(os.listdir(self.out), [])

    @defer.inlineCallbacks
    def test_receiver_killed_at_half_transfer_v2(self):
        """transfer-v2: Dilation waits for the receiver to come back; after
        --peer-timeout the sender says it went away, and why."""
        line = yield self.receiver_killed_at_half(TRANSFER_V2, "went away")
        self.assertWaitedPeerTimeout(line)

    @defer.inlineCallbacks
    def test_sender_killed_at_half_transfer_v2(self):
        """transfer-v2: the receiver says the sender went away; what
        arrived is kept only as resumable bytes (a hidden partial name),
        never under the final name."""
        line = yield self.sender_killed_at_half(TRANSFER_V2, "went away")
        self.assertWaitedPeerTimeout(line)
        self.assertTrue(all(n.startswith(".wormhole-partial-") for n in os.listdir(self.out)),
                        os.listdir(self.out))


class PeerLeavesOurServer(OurServer, _PeerLeaves, unittest.TestCase):
    pass


class PeerLeavesReferenceServer(ReferenceServer, _PeerLeaves, unittest.TestCase):
    pass
