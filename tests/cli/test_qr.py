"""``wormhole send`` shows its code as a QR code of the
``wormhole-transfer:`` URI, and ``wormhole receive`` takes that URI in
place of a code: real processes, the printed QR code read back by zbar
(tests/cli/_qrdecode.py), against our Mailbox server and the reference's."""
from qrcode import QRCode
from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole.cli import _uri

from ._process import CLIProcess, our_cli
from ._pty import spawn_in_pty
from ._qrdecode import decode, qr_lines
from ._servers import OurServer, ReferenceServer


class _QR:
    timeout = 60

    def spawn(self, *args, name, env=None, relay=True):
        argv = our_cli(*(("--relay-url", self.url) if relay else ()), *args)
        return CLIProcess.spawn(self, reactor, argv, name=name, env=env)

    @defer.inlineCallbacks
    def test_qr_scans_to_the_uri_and_receive_takes_it(self):
        """The sender's QR code (on stderr, between the code line and the
        instructions, as the reference 0.24 draws it) scans to
        wormhole-transfer:CODE?rendezvous=<our server>; a receiver given
        only that URI (no --relay-url) finds the server and gets the text."""
        send = self.spawn("send", "--text", "scanned", name="sender")
        m = yield send.wait_for(rb"Wormhole code is: (\S+)\n")
        code = m.group(1).decode()
        # the whole QR code, then the instructions
        yield self.wait_for_qr(send)
        yield send.wait_for(f"wormhole receive {code}\n".encode())
        before, rest = send.stderr.decode().split(f"Wormhole code is: {code}\n")
        rows, instructions = rest.split("On the other computer, please run:\n")
        self.assertEqual(qr_lines(before + instructions), [], send.describe())
        scanned = decode(rows)
        self.assertEqual(scanned, [_uri.transfer_uri(code, self.url)])
        self.assertIn("?rendezvous=", scanned[0])
        recv = self.spawn("receive", scanned[0], name="receiver", relay=False)
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0),
                         send.describe() + recv.describe())
        self.assertEqual(recv.stdout, b"scanned\n")

    @defer.inlineCallbacks
    def wait_for_qr(self, run):
        # qrcode writes the code in one go and flushes: once the border row
        # (blank) after a block row is there, the code is complete
        yield run.wait_for("[\u2580\u2584\u2588][^\n]*\n[ \u00a0]+\n".encode())
        text = run.stderr.decode()
        self.assertGreater(len(qr_lines(text)), 10, run.describe())
        return text

    @defer.inlineCallbacks
    def test_qr_in_a_terminal(self):
        """On a terminal the QR code is drawn white on black with colour
        codes (qrcode's tty mode): it scans too, once read as light-on-dark."""
        send = spawn_in_pty(self, our_cli("--relay-url", self.url, "send", "--code",
                                          "63-tty-qr", "--text", "t"), "sender")
        uri = _uri.transfer_uri("63-tty-qr", self.url)
        # every row ends with a colour reset: wait for all of them
        qr = QRCode(border=1)
        qr.add_data(uri)
        qr.make()
        rows = (qr.modules_count + 2 + 1) // 2
        yield send.wait_for(rb"(?s)(?:\x1b\[0m\r\n.*?){%d}" % rows)
        self.assertIn(b"\x1b[48;5;232m", send.stdout)
        self.assertEqual(decode(send.stdout.decode(), inverted=True), [uri])
        recv = self.spawn("receive", "63-tty-qr", name="receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual(recv.stdout, b"t\n")

    @defer.inlineCallbacks
    def test_no_qr(self):
        """--no-qr and WORMHOLE_QR=0 draw nothing."""
        runs = [self.spawn("send", "--no-qr", "--code", "61-no-qr", "--text", "a",
                           name="--no-qr"),
                self.spawn("send", "--code", "62-no-qr", "--text", "b", name="env",
                           env={"WORMHOLE_QR": "0"})]
        for run in runs:
            yield run.wait_for(rb"wormhole receive \S+\n")
        for code, run in zip(("61-no-qr", "62-no-qr"), runs, strict=False):
            recv = self.spawn("receive", code, name="receiver")
            yield defer.gatherResults([run.ended, recv.ended])
            self.assertEqual(run.status, 0, run.describe())
            self.assertEqual(qr_lines(run.stderr.decode()), [], run.describe())

    @defer.inlineCallbacks
    def test_leader_uri_refused(self):
        """A URI asking its reader to send (role=leader) is refused by
        receive with a usage error (exit 2) that says why."""
        recv = self.spawn("receive", "wormhole-transfer:5-x-y?role=leader", name="receiver")
        yield recv.ended
        self.assertEqual(recv.status, 2, recv.describe())
        self.assertIn(b"role=leader", recv.stderr)
        self.assertIn(b"only receives", recv.stderr)


class QROurServer(OurServer, _QR, unittest.TestCase):
    pass


class QRReferenceServer(ReferenceServer, _QR, unittest.TestCase):
    pass
