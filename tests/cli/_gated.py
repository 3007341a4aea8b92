"""A sender and a receiver of a 16 MB file held at half its size by a
gate on the relay's way (support for tests/cli/test_cancel and
test_kept; never a test module itself)."""
import os
import time

from twisted.internet import defer, reactor

from wormhole_relay.testing import start_transit_relay

from ..files._support import write_file
from ._gate import start_gate
from ._process import CLIProcess, our_cli
from ._servers import OurServer
from ._support import ref_wormhole

SIZE = 16 * 1000 * 1000
HALF = SIZE // 2
V2 = []
CLASSIC = ["--classic"]
ENV = {"WORMHOLE_TRANSIT_ADDRESSES": "127.0.0.1"}
PROMPT = rb"ok\? \(Y/n\): "
# what the acceptance asks: the peer is done within this, from the signal
BOUND = 5.0


class GatedPair(OurServer):
    """A sender and a receiver whose file is held at half (test_kept too)."""

    @defer.inlineCallbacks
    def start(self, code, protocol, accept, reference=None):
        """Sender and receiver of a 16 MB file, relay-only through a gate
        that holds it at half; ``accept``: the receiver takes it without
        asking (and the bytes reach the gate), else it asks.
        ``reference``: "sender" or "receiver", that side is the reference
        0.24 CLI (classic; ``protocol`` is then ours only)."""
        relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(relay.stop)
        self.gate, gate_port = yield start_gate(self, reactor, relay.port, HALF)
        self.src = src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        write_file(os.path.join(src, "big.bin"), SIZE)
        self.out = os.path.abspath(self.mktemp())
        os.makedirs(self.out)
        common = ["--relay-url", self.url, "--transit-helper", f"tcp:127.0.0.1:{gate_port}"]

        def cli(side, *args):
            if reference == side:
                return [ref_wormhole(), *common, *args]
            return our_cli(*common, *args)
        send_args = protocol if reference != "sender" else []
        self.send = CLIProcess.spawn(
            self, reactor, cli("sender", "send", "--no-qr", "--no-listen", "--hide-progress",
                               *send_args, "--code", code, "big.bin"),
            name="sender", env=ENV, cwd=src)
        recv_args = ["--accept-file"] if accept else []
        # stdin stays open: the question waits for the human
        self.recv = CLIProcess.spawn(
            self, reactor, cli("receiver", "receive", "--no-listen", "--hide-progress",
                               *recv_args, code),
            name="receiver", env=ENV, cwd=self.out)
        if accept:
            yield self.gate.reached
        else:
            yield self.recv.wait_for(PROMPT)


@defer.inlineCallbacks
def interrupt_ours(testcase, ours, theirs, out, release=None):
    """SIGINT to our side, then ``release()`` if given (the gate opened:
    our last records reach the peer). Another implementation as the peer
    fails as on any close, within BOUND of the signal; ours exits 130 and
    nothing is in ``out`` under the final name. The peer's stderr."""
    signalled = time.monotonic()
    ours.transport.signalProcess("INT")
    if release is not None:
        release()
    yield theirs.ended
    seconds = time.monotonic() - signalled
    yield ours.ended
    testcase.assertEqual(ours.status, 130, ours.describe())
    testcase.assertNotEqual(theirs.status, 0, theirs.describe())
    testcase.assertLess(seconds, BOUND, theirs.describe())
    testcase.assertNotIn("big.bin", os.listdir(out))
    return theirs.stderr.decode()
