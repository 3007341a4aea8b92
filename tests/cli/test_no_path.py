"""A transfer with no way through (docs/cli.md, "Messages"): the Transit
relay unreachable and no direct path. Both sides fail, exit 1, in one line
naming the leg, in about the time classic takes -- not after the 60 s
transfer-v2 waits for an unreachable peer. Real ``wormhole`` processes
against our Mailbox server; ``wormhole.session.FirstConnection``, which
decides it, with a fake clock and a fake relay probe."""
import os
import socket
import time

from twisted.internet import defer, reactor
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole._status import (
    ConnectedPeer,
    ConnectingPeer,
    DilationHint,
    DilationStatus,
    NoPeer,
    WormholeStatus,
)
from wormhole.cli._v2_session import PEER_TIMEOUT
from wormhole.errors import NoPath
from wormhole.session import CHECK_AFTER, LOOKS, FirstConnection

from ._process import CLIProcess, our_cli
from ._servers import OurServer

ENV = {"WORMHOLE_TRANSIT_ADDRESSES": "127.0.0.1"}


def closed_port():
    """A 127.0.0.1 port nothing listens on (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class NoPathProcesses(OurServer, unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def run_pair(self, code, *protocol):
        """Sender and receiver, both --no-listen, whose relay refuses
        connections; fires with (sender, receiver, seconds until both
        ended, counted from the receiver's start)."""
        src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        with open(os.path.join(src, "a.bin"), "wb") as f:
            f.write(b"x" * 1000)
        dst = os.path.abspath(self.mktemp())
        os.makedirs(dst)
        common = ["--relay-url", self.url, "--transit-helper", f"tcp:127.0.0.1:{closed_port()}"]
        send = CLIProcess.spawn(self, reactor, our_cli(
            *common, "send", "--no-qr", "--no-listen", "--hide-progress", *protocol,
            "--code", code, "a.bin"), name="sender", env=ENV, cwd=src)
        yield send.wait_for(rb"wormhole receive")
        started = time.monotonic()
        recv = CLIProcess.spawn(self, reactor, our_cli(
            *common, "receive", "--no-listen", "--hide-progress", "--accept-file", code),
            name="receiver", env=ENV, cwd=dst)
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual(os.listdir(dst), [])
        return send, recv, time.monotonic() - started

    def error_line(self, run):
        self.assertEqual(run.status, 1, run.describe())
        self.assertNotIn(b"Traceback", run.stderr, run.describe())
        errors = [line for line in run.stderr.decode().splitlines() if line.startswith("ERROR")]
        self.assertEqual(len(errors), 1, run.describe())
        return errors[0]

    @defer.inlineCallbacks
    def test_transfer_v2(self):
        """Both sides name the relay and the missing direct path, well
        before the 60 s an unreachable peer is given."""
        send, recv, seconds = yield self.run_pair("31-no-path")
        for run in (send, recv):
            line = self.error_line(run)
            self.assertRegex(line, r"^ERROR: no path to the peer for the transfer: the Transit "
                                   r"relay tcp:127\.0\.0\.1:\d+ cannot be reached \(.*refused.*\), "
                                   r"and no direct connection can be made \(we do not listen")
        self.assertLess(seconds, PEER_TIMEOUT / 2)

    @defer.inlineCallbacks
    def test_classic(self):
        """Classic Transit says the same leg in its own words."""
        send, recv, seconds = yield self.run_pair("32-no-path", "--classic")
        for run in (send, recv):
            self.assertRegex(self.error_line(run),
                             r"^ERROR: no connection to the other side for the transfer "
                             r"\(.*->relay:tcp:127\.0\.0\.1:\d+: .*refused.*\): .* nor the "
                             r"Transit relay tcp:127\.0\.0\.1:\d+ reaches it$")
        self.assertLess(seconds, PEER_TIMEOUT / 2)

    @defer.inlineCallbacks
    def test_a_text_needs_no_path(self):
        """A text travels in the mailbox (docs/transfer-v2.md "Text"): the
        same unreachable relay and no direct path, and it arrives, exit 0
        on both sides, as with the reference."""
        common = ["--relay-url", self.url, "--transit-helper", f"tcp:127.0.0.1:{closed_port()}"]
        send = CLIProcess.spawn(self, reactor, our_cli(
            *common, "send", "--no-qr", "--no-listen", "--code", "33-no-path",
            "--text", "still gets through"), name="sender", env=ENV)
        yield send.wait_for(rb"wormhole receive")
        recv = CLIProcess.spawn(self, reactor, our_cli(
            *common, "receive", "--no-listen", "33-no-path"), name="receiver", env=ENV)
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        self.assertEqual(recv.stdout, b"still gets through\n")


class _Session:
    def __init__(self):
        self.closed = 0

    def close(self):
        self.closed += 1


def _status(peer, hints=()):
    return DilationStatus(WormholeStatus(), 1, peer, set(hints))


RELAY_HINT = DilationHint("127.0.0.1:4001", False)
DIRECT_HINT = DilationHint("192.0.2.7:5000", True)


class FirstConnectionRules(unittest.TestCase):
    """What FirstConnection decides, CHECK_AFTER seconds after both sides
    began dilating, from what could still work."""

    def make(self, listen=False, helper="tcp:127.0.0.1:4001", refused=True):
        self.clock = Clock()
        self.probed = []

        def probe(reactor, host, port):
            self.probed.append((host, port))
            return defer.succeed("Connection refused" if refused else None)
        first = FirstConnection(self.clock, listen=listen, transit_helper=helper, probe=probe,
                                hints=(": --no-listen", " (--transit-helper)"))
        self.session = _Session()
        first.watch(self.session)
        return first

    def test_relay_refused_and_no_direct_path(self):
        first = self.make()
        first.status_update(_status(NoPeer()))
        first.status_update(_status(ConnectingPeer(0), [RELAY_HINT]))
        self.clock.advance(CHECK_AFTER - 0.1)
        self.assertEqual(self.session.closed, 0)
        self.clock.advance(0.1)
        self.assertEqual(self.session.closed, 1)
        self.assertIsInstance(first.error, NoPath)
        self.assertEqual(first.error.leg, "relay")
        self.assertIn("the Transit relay tcp:127.0.0.1:4001 cannot be reached "
                      "(Connection refused)", str(first.error))
        # ours and the peer's are one relay: probed once
        self.assertEqual(self.probed, [("127.0.0.1", 4001)])
        self.assertIs(first.explain(RuntimeError("closed")), first.error)

    def test_the_peers_relay_is_probed_too(self):
        first = self.make(helper=None)
        first.status_update(_status(ConnectingPeer(0), [RELAY_HINT]))
        self.clock.advance(CHECK_AFTER)
        self.assertEqual(self.probed, [("127.0.0.1", 4001)])
        self.assertEqual(first.error.leg, "relay")

    def test_a_relay_that_answers_leaves_it_to_dilation(self):
        first = self.make(refused=False)
        first.status_update(_status(ConnectingPeer(0), [RELAY_HINT]))
        self.clock.advance(CHECK_AFTER)
        self.assertEqual(self.session.closed, 0)
        self.assertIsNone(first.error)

    def test_a_direct_path_leaves_it_to_dilation(self):
        for first in (self.make(listen=True), self.make()):
            first.status_update(_status(ConnectingPeer(0), [RELAY_HINT, DIRECT_HINT]))
            self.clock.advance(CHECK_AFTER * LOOKS)
            self.assertEqual((self.session.closed, self.probed), (0, []))

    def test_no_relay_and_no_listener(self):
        first = self.make(helper=None)
        first.status_update(_status(ConnectingPeer(0)))
        for _ in range(LOOKS - 1):
            self.clock.advance(CHECK_AFTER)
            self.assertEqual(self.session.closed, 0)  # the peer's hints may come
        self.clock.advance(CHECK_AFTER)
        self.assertEqual(first.error.leg, "direct")
        self.assertIn("no Transit relay", str(first.error))

    def test_connected_first(self):
        first = self.make()
        first.status_update(_status(ConnectingPeer(0), [RELAY_HINT]))
        first.status_update(_status(ConnectedPeer(1, None, "->relay:127.0.0.1:4001"),
                                    [RELAY_HINT]))
        self.clock.advance(CHECK_AFTER * LOOKS)
        self.assertEqual((self.session.closed, self.probed), (0, []))
        error = RuntimeError("something else")
        self.assertIs(first.explain(error), error)

    def test_the_peer_is_named_when_the_peer_timeout_ends_it(self):
        first = self.make(refused=False)
        first.status_update(_status(ConnectingPeer(0), [RELAY_HINT]))
        self.clock.advance(CHECK_AFTER)
        error = first.explain(RuntimeError("could not reach the peer's Dilation within 60.0 s"))
        self.assertEqual(error.leg, "peer")
        self.assertIn("no connection to the peer for the transfer", str(error))
