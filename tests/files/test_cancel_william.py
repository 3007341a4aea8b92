"""Ctrl-C mid-file between our CLI and wormhole-william 1.0.6, over the
classic protocol (docs/transfer.md "Cancelling"): what ours tells its peer
over Transit (a sender's empty record and reason, a receiver's
``{"error": REASON}`` in the ack's place) is a plain failure there,
within the bound the CLI's acceptance sets (5 s from the signal), and
nothing lands under the final name.

The file is held at half its size by a gate in front of our Transit relay
(``tests/cli/_gate.py``, here a process of its own, ``_half_gate.py``).
Everything runs in a loopback-only namespace where wormhole-william's
public relay name points at 127.0.0.1 and a TCP connection to any port
but the servers' and the gates' is refused: wormhole-william advertises
its own listener (it has no ``--no-listen``), and our side would go round
the gate to it. When wormhole-william sends, its relay connection also
goes through ``_ww_gate.py`` (its relay race, test_interop_william)."""
import os
import shutil
import subprocess
import sys
from urllib.parse import urlparse

from twisted.internet import defer
from twisted.trial import unittest

from ..cli._gated import interrupt_ours
from . import _support as s

SIZE = 16 * 1000 * 1000
HALF = SIZE // 2
WW_GATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ww_gate.py")


def refuse_all_but(ns, ports):
    """In ``ns``, a TCP connection to any port but ``ports`` is refused."""
    iptables = shutil.which("iptables") or "/usr/sbin/iptables"
    subprocess.run(ns.argv([iptables, "-w", "-A", "OUTPUT", "-p", "tcp", "--syn", "-m",
                            "multiport", "!", "--dports", ",".join(map(str, ports)),
                            "-j", "REJECT", "--reject-with", "tcp-reset"]), check=True)


def port_of(hint):
    """The port of a ``tcp:HOST:PORT`` hint or a ``ws://HOST:PORT/v1`` URL."""
    if "://" in hint:
        return urlparse(hint).port
    return int(hint.rsplit(":", 1)[1])


class CancelWithWilliam(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def start(self, sender, code):
        """The sender ("ours" or "ww") and the receiver (the other) of a
        16 MB file, held at half by the gate; returns (sender, receiver)."""
        s.wormhole_william()  # fail early, with the installation hint
        send, recv, reached = yield self.held_at_half(sender, code)
        if not reached:
            self.fail("the transfer ended before half the file:\n"
                      + send.describe() + "\n" + recv.describe())
        return send, recv

    @defer.inlineCallbacks
    def held_at_half(self, sender, code):
        """(sender, receiver, whether the gate held the file at half, or
        the two ended before that)."""
        ns = s.Namespace.create(self, hosts=[s.PUBLIC_TRANSIT_HOST])
        servers = yield s.Servers.start(self, ns=ns, relay="ours", relay_port=0)
        relay_port = port_of(servers.transit)
        # wormhole-william dials the public relay's port: the gate is
        # there, or (when it sends) the gate that orders its handshake
        first = 0 if sender == "ww" else s.PUBLIC_TRANSIT_PORT
        self.gate = s.spawn(self, [sys.executable, "-m", "tests.files._half_gate",
                                   str(first), str(relay_port), str(HALF)],
                            "half gate", ns=ns, cwd=s.REPO_ROOT)
        half_port = int((yield self.gate.wait_for(rb"gate starting on (\d+)")).group(1))
        ports = [port_of(servers.url), relay_port, half_port, s.PUBLIC_TRANSIT_PORT]
        if sender == "ww":
            ww_gate = s.spawn(self, [sys.executable, WW_GATE, str(s.PUBLIC_TRANSIT_PORT),
                                     str(half_port)], "ww gate", ns=ns)
            yield ww_gate.wait_for(rb"gate starting on")
        servers.transit = f"tcp:127.0.0.1:{s.PUBLIC_TRANSIT_PORT}"
        refuse_all_but(ns, ports)
        src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        s.write_file(os.path.join(src, "big.bin"), SIZE)
        self.out = os.path.abspath(self.mktemp())
        os.makedirs(self.out)
        receiver = "ww" if sender == "ours" else "ours"
        ours = ["--no-listen"]
        send = s.spawn(self, s.ARGV[sender](servers, "send", "--hide-progress", "--code", code,
                                            *(ours + ["--no-qr"] if sender == "ours" else []),
                                            "big.bin"),
                       f"{sender} sender", ns=ns, env=s._env(sender), cwd=src)
        if receiver == "ww":
            argv, stdin = s.ww_argv(servers, "receive", "--hide-progress", code), b"y\n"
        else:
            argv = s.our_argv(servers, "receive", "--hide-progress", "--accept-file", *ours,
                              code)
            stdin = None
        recv = s.spawn(self, argv, f"{receiver} receiver", ns=ns, env=s._env(receiver),
                       cwd=self.out, stdin=stdin)
        reached = self.gate.wait_for(rb"gate reached")
        yield defer.DeferredList([reached, send.ended, recv.ended], fireOnOneCallback=True)
        if reached.called:
            return send, recv, True
        send.kill()
        recv.kill()
        yield defer.DeferredList([send.ended, recv.ended])
        return send, recv, False

    def interrupt_ours(self, ours, theirs, release=False):
        return interrupt_ours(self, ours, theirs, self.out,
                              (lambda: self.gate.write(b"release\n")) if release else None)

    @defer.inlineCallbacks
    def test_our_sender_to_william(self):
        """The empty record and the reason reach wormhole-william's
        receiver: it takes them as file bytes, then the close before the
        announced size, fails as on any close, and keeps nothing."""
        send, recv = yield self.start("ours", "61-cancel-go")
        err = yield self.interrupt_ours(send, recv, release=True)
        self.assertIn("Receive file error: unexpected EOF", err)
        self.assertEqual(os.listdir(self.out), [])

    @defer.inlineCallbacks
    def test_our_receiver_to_william(self):
        """``{"error": ...}`` in the ack's place: wormhole-william's sender,
        still sending (the gate holds its bytes), sees the close."""
        send, recv = yield self.start("ww", "62-cancel-go")
        err = yield self.interrupt_ours(recv, send)
        self.assertIn("Send error: ", err)
