"""The progress bar in a real terminal (a pseudo-terminal of a chosen
width): never wider than the terminal, dropping the bar and then the rate
when narrow; the path line names the relay; a final summary line gives
size, time, rate and path. The same for the classic protocol and for
transfer-v2; and transfer-v2's two bars (the session's, the offer's) as
the terminal shows them in the end (pyte). Relay-only through our Transit
relay, against our Mailbox server and the reference's. A resumed
transfer-v2 file: the sender's bar ends at 100%
(docs/cli.md, "Progress and summary")."""
import os
import re

import pyte
from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole.cli.ui.wording import CLASSIC_USED, V2_USED
from wormhole_relay.testing import start_transit_relay

from ..files._support import write_file
from ._gated import ENV, V2, GatedPair
from ._gated import SIZE as GATED_SIZE
from ._process import CLIProcess, our_cli
from ._pty import spawn_in_pty
from ._servers import OurServer, ReferenceServer

SIZE = 3 * 1000 * 1000


def progress_segments(output):
    """Every state the progress line was drawn in (tqdm redraws with \\r)."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output.decode("utf-8", "replace"))
    return [seg for line in text.split("\n") for seg in line.split("\r")
            if re.search(r"\d+%", seg)]


class _Progress:
    timeout = 90

    @defer.inlineCallbacks
    def send_in_terminal(self, columns, code, protocol):
        relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(relay.stop)
        src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        write_file(os.path.join(src, "data.bin"), SIZE)
        out = os.path.abspath(self.mktemp())
        os.makedirs(out)
        common = ["--relay-url", self.url, "--transit-helper", relay.hint]
        send = spawn_in_pty(self, our_cli(*common, "send", "--no-qr", "--no-listen",
                                          *protocol, "--code", code, "data.bin"),
                            "sender", cwd=src, columns=columns)
        recv = CLIProcess.spawn(self, reactor, our_cli(*common, "receive", "--no-listen",
                                                       "--accept-file", code),
                                name="receiver", cwd=out)
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        return send, recv, relay

    @defer.inlineCallbacks
    def check_wide_and_narrow(self, protocol, used):
        """120 columns: tqdm's full line with its bar; 36 columns: no bar,
        no rate, never more than 35 characters. Both: the path line and
        the summary name our relay; the receiver says which protocol
        (``used``) it took."""
        for columns, code in ((120, "41-wide-bar"), (36, "42-narrow-bar")):
            send, recv, relay = yield self.send_in_terminal(columns, code, protocol)
            segments = progress_segments(send.stdout)
            self.assertTrue(segments, send.describe())
            self.assertLessEqual(max(len(s) for s in segments), columns - 1, segments)
            self.assertIn("100%", segments[-1])
            if columns == 120:
                self.assertIn("|", segments[-1])
            else:
                self.assertNotIn("|", segments[-1])
                self.assertNotIn("/s", segments[-1])
            path = f"->relay:{relay.hint}"
            self.assertIn(f"Sending ({path})..".encode(), send.stdout)
            self.assertRegex(send.stdout.decode(),
                             r"Sent 3\.0 MB in \d+\.\d\d s \([\d.]+ [kMG]B/s\) via "
                             + re.escape(path))
            self.assertRegex(recv.stderr.decode(),
                             r"Received 3\.0 MB in \d+\.\d\d s \([\d.]+ [kMG]B/s\) via "
                             + re.escape(path))
            self.assertIn(used.encode(), recv.stderr)

    def test_wide_and_narrow_classic(self):
        """The classic protocol (--classic): bar, path line, summary."""
        return self.check_wide_and_narrow(["--classic"], CLASSIC_USED)

    def test_wide_and_narrow_transfer_v2(self):
        """transfer-v2 (the default between two of ours): the same."""
        return self.check_wide_and_narrow([], V2_USED)


    @defer.inlineCallbacks
    def test_session_bar_transfer_v2(self):
        """Two files over transfer-v2 in 100-column terminals, as the
        screens show them at the end (pyte plays the bytes the terminal
        got): every line whole, nothing written over, each offer's bar
        gone once its summary is there, the session's bar at 100% above
        the last line; on the receiving side too, from the sender's
        "session-totals", with the session's line last."""
        relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(relay.stop)
        src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        for name in ("one.bin", "two.bin"):
            write_file(os.path.join(src, name), SIZE)
        out = os.path.abspath(self.mktemp())
        os.makedirs(out)
        common = ["--relay-url", self.url, "--transit-helper", relay.hint]
        send = spawn_in_pty(self, our_cli(*common, "send", "--no-qr", "--no-listen", "--code",
                                          "43-session-bar", "one.bin", "two.bin"),
                            "sender", cwd=src, columns=100)
        recv = spawn_in_pty(self, our_cli(*common, "receive", "--no-listen", "--accept-file",
                                          "43-session-bar"), "receiver", cwd=out, columns=100)
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        self.check_receiver_screen(recv, out, relay)
        screen = pyte.Screen(100, 40)
        pyte.ByteStream(screen).feed(send.stdout)
        lines = [line.rstrip() for line in screen.display if line.strip()]
        self.assertIn("Offering file 'one.bin' (3.0 MB)", lines, "\n".join(lines))
        start = lines.index("Offering file 'one.bin' (3.0 MB)")
        path = f"->relay:{relay.hint}"
        summary = r"Sent 3\.0 MB in \d+\.\d\d s \([\d.]+ [kMG]B/s\) via " + re.escape(path)
        expected = []
        for name in ("one.bin", "two.bin"):
            expected += [re.escape(f"Offering file '{name}' (3.0 MB)"),
                         re.escape(f"Sending ({path})..") + "$",
                         re.escape(f"Sent file '{name}' (3.0 MB): 1 file confirmed") + "$",
                         summary + "$"]
        expected += [r"total: 100%\|█+\| 6\.00M/6\.00M \[.*\]$", r"Transfer complete\.$"]
        self.assertEqual(len(lines) - start, len(expected), "\n".join(lines))
        for line, pattern in zip(lines[start:], expected, strict=False):
            self.assertRegex(line, "^" + pattern)

    def check_receiver_screen(self, recv, out, relay):
        screen = pyte.Screen(100, 40)
        pyte.ByteStream(screen).feed(recv.stdout)
        # a line that filled the row went on in the next one: join them
        lines, carry = [], ""
        for row in screen.display:
            if len(row.rstrip()) == 100:
                carry += row
                continue
            if (carry + row).strip():
                lines.append((carry + row).rstrip())
            carry = ""
        shown = "\n".join(lines)
        path = re.escape(f"->relay:{relay.hint}")
        summary = r"Received 3\.0 MB in \d+\.\d\d s \([\d.]+ [kMG]B/s\) via " + path + "$"
        start = lines.index(V2_USED)
        expected = [re.escape(V2_USED)]
        for name in ("one.bin", "two.bin"):
            expected += [re.escape(f"Offered file '{name}' (3.0 MB)") + "$",
                         re.escape(f"Receiving (->relay:{relay.hint})..") + "$",
                         re.escape("Received file written to: " + os.path.join(out, name)) + "$",
                         summary]
        expected += [r"total: 100%\|█+\| 6\.00M/6\.00M \[.*\]$",
                     r"Session: 2 of 2 offers received \(2 files\); received 6\.0 MB in "
                     r"\d+\.\d\d s \([\d.]+ [kMG]B/s\) via " + path + "$"]
        self.assertEqual(len(lines) - start, len(expected), shown)
        for line, pattern in zip(lines[start:], expected, strict=False):
            self.assertRegex(line, "^" + pattern)

    @defer.inlineCallbacks
    def test_file_bars_of_a_folder(self):
        """A folder over transfer-v2, both sides in 100-column terminals:
        while it moves, each file has its own bar (its path inside the
        folder) below the offer's, never wider than the terminal; at the
        end (pyte) every line is whole and the file bars are gone."""
        relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(relay.stop)
        src = os.path.abspath(self.mktemp())
        os.makedirs(os.path.join(src, "tree", "sub"))
        for name in ("first.bin", "sub/second.bin"):
            write_file(os.path.join(src, "tree", *name.split("/")), SIZE)
        out = os.path.abspath(self.mktemp())
        os.makedirs(out)
        common = ["--relay-url", self.url, "--transit-helper", relay.hint]
        code = "44-file-bars"
        send = spawn_in_pty(self, our_cli(*common, "send", "--no-qr", "--no-listen", "--code",
                                          code, "tree"), "sender", cwd=src, columns=100)
        recv = spawn_in_pty(self, our_cli(*common, "receive", "--no-listen", "--accept-file",
                                          code), "receiver", cwd=out, columns=100)
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        path = re.escape(f"->relay:{relay.hint}")
        for run, bar, verbs in ((send, "offer", ("Sending", "Sent")),
                                (recv, "receive", ("Receiving", "Received"))):
            segments = progress_segments(run.stdout)
            self.assertLessEqual(max(len(s) for s in segments), 99, segments)
            for name in ("first.bin", "sub/second.bin"):
                self.assertTrue([s for s in segments if s.startswith(f"{name}: ")],
                                run.describe())
            screen = pyte.Screen(100, 40)
            pyte.ByteStream(screen).feed(run.stdout)
            lines = [line.rstrip() for line in screen.display if line.strip()]
            shown = "\n".join(lines)
            self.assertFalse([line for line in lines if ".bin:" in line], shown)
            summary = (rf"{verbs[1]} 6\.0 MB in \d+\.\d\d s \([\d.]+ [kMG]B/s\) via "
                       + path + "$")
            self.assertTrue([line for line in lines if re.match(summary, line)], shown)
            self.assertTrue([line for line in lines if re.match(
                re.escape(f"{verbs[0]} (->relay:{relay.hint})..") + "$", line)], shown)
            self.assertTrue([line for line in lines if re.match(
                rf"{bar}: 100%\|█+\| 6\.00M/6\.00M \[.*\]$", line)], shown)
            # nothing else: every line is one the commands write whole
            whole = (r"Using transfer-v2|Offering directory|Offered directory|Sending|"
                     r"Receiving|Sent|Received|Transfer complete|offer: |receive: |"
                     r"Wormhole code is|wormhole receive|On the other computer|"
                     r"Note: code has been consumed|Waiting for sender")
            # (a long "written to" path wraps: the lines after it are
            # pieces of it, several in a checkout with a long path)
            strays = [line for line in lines if not re.match(whole, line)
                      and line not in os.path.join(out, "tree")]
            self.assertEqual(strays, [], shown)


class ProgressOurServer(OurServer, _Progress, unittest.TestCase):
    pass


class ProgressReferenceServer(ReferenceServer, _Progress, unittest.TestCase):
    pass


class ResumedSender(GatedPair, unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def test_sender_bar_reaches_the_end(self):
        """A receive interrupted at half (SIGINT; the gate of
        test_cancel holds the file there), then the same file sent again
        from a terminal: the receiver resumes, and the sender's bar counts
        the kept bytes as done once the receiver answered, before any byte
        moves, and its last drawing shows the whole file (it used to stop
        at the share sent)."""
        yield self.start("45-resumed-bar", V2, accept=True)
        self.recv.transport.signalProcess("INT")
        yield self.recv.ended
        yield self.send.kill()
        yield self.send.ended
        send = spawn_in_pty(self, our_cli("--relay-url", self.url, "send", "--no-qr",
                                          "--code", "46-resumed-bar", "big.bin"),
                            "sender", env=ENV, cwd=self.src, columns=100)
        recv = CLIProcess.spawn(self, reactor, our_cli(
            "--relay-url", self.url, "receive", "--hide-progress", "--accept-file",
            "46-resumed-bar"), name="receiver", env=ENV, cwd=self.out)
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        resumed = re.search(rb"resumed at byte ([1-9]\d*), ", send.stdout)
        self.assertIsNotNone(resumed, send.describe())
        segments = [s for s in progress_segments(send.stdout) if s.startswith("offer:")]
        self.assertTrue(segments, send.describe())
        total = f"{GATED_SIZE / 1e6:.1f}M"
        self.assertRegex(segments[-1], rf"^offer: 100%.* {total}/{total} ")
        # 0% while the receiver decides, then at once the kept bytes (done
        # before the first byte moves), never less, then up to the end
        kept_percent = int(resumed.group(1)) * 100 // GATED_SIZE
        percents = [int(re.match(r"offer:\s+(\d+)%", s).group(1)) for s in segments]
        self.assertEqual(percents, sorted(percents), segments)
        self.assertFalse([p for p in percents if 0 < p < kept_percent], segments)
