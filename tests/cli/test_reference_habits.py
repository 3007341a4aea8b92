"""What users of the reference reach for (docs/cli.md, "Checked against
the reference (`tests/cli/test_reference_habits.py`)"), each with real
``wormhole`` processes against our Mailbox server and the reference's
0.8: receive --allocate, --appid, WORMHOLE_ACCEPT_FILE, --output-file into
an existing directory, a file that grows while it is sent (classic and
transfer-v2), a block device; and what the sender says before the code
and around it, beside the reference 0.24 CLI itself (docs/cli.md,
"Files and directories")."""
import os
import re
import shutil
import subprocess

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole.cli.ui.wording import NOT_A_FILE
from wormhole_relay.testing import start_transit_relay

from ..files._support import sha256_of, write_file
from ..interop.reference import ref_cli_argv
from ._process import CLIProcess, our_cli
from ._servers import OurServer, ReferenceServer

ENV = {"WORMHOLE_TRANSIT_ADDRESSES": "127.0.0.1"}
QR_ROW = re.compile("^[\u2580\u2584\u2588\u00a0 ]+$")


def layout(stderr, code):
    """A sender's stderr up to its instructions: the lines before the
    code, then the code line, "<QR>" for the QR code's rows, and the
    instructions."""
    text = stderr.decode("utf-8")
    end = text.index(f"wormhole receive {code}\n") + len(f"wormhole receive {code}\n")
    lines = []
    for line in text[:end].splitlines():
        if QR_ROW.match(line):
            if lines[-1:] != ["<QR>"]:
                lines.append("<QR>")
            continue
        lines.append(line)
    return lines


class _Habits:
    timeout = 60

    @defer.inlineCallbacks
    def setUp(self):
        yield super().setUp()
        relay = yield start_transit_relay(reactor, port=0)
        self.addCleanup(relay.stop)
        self.transit = relay.hint
        self.src = os.path.abspath(self.mktemp())
        self.out = os.path.abspath(self.mktemp())
        os.makedirs(self.src)
        os.makedirs(self.out)

    def spawn(self, *args, name, cwd=None, env=None, stdin=None):
        argv = our_cli("--relay-url", self.url, "--transit-helper", self.transit, *args)
        return CLIProcess.spawn(self, reactor, argv, name=name, cwd=cwd,
                                env=dict(ENV, **(env or {})), stdin=stdin)

    @defer.inlineCallbacks
    def both(self, send, recv):
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0),
                         send.describe() + recv.describe())

    @defer.inlineCallbacks
    def test_receive_allocate(self):
        """receive --allocate makes the code and says to run send --code;
        the sender given that code sends, the text arrives."""
        recv = self.spawn("receive", "--allocate", name="receiver")
        m = yield recv.wait_for(rb"wormhole send --code (\S+) \.\.\.")
        send = self.spawn("send", "--no-qr", "--code", m.group(1).decode(), "--text",
                        "allocated here", name="sender")
        yield self.both(send, recv)
        self.assertEqual(recv.stdout, b"allocated here\n")

    @defer.inlineCallbacks
    def test_appid(self):
        """--appid on both sides: the transfer happens in that application's
        namespace (a file, so the Transit key derives from it too)."""
        digest = write_file(os.path.join(self.src, "a.bin"), 50000)
        app = ["--appid", "example.org/issue-13"]
        send = self.spawn(*app, "send", "--no-qr", "--code", "71-app-id", "a.bin",
                        name="sender", cwd=self.src)
        recv = self.spawn(*app, "receive", "--accept-file", "71-app-id", name="receiver",
                        cwd=self.out)
        yield self.both(send, recv)
        self.assertEqual(sha256_of(os.path.join(self.out, "a.bin")), digest)

    @defer.inlineCallbacks
    def test_accept_file_from_environment(self):
        """WORMHOLE_ACCEPT_FILE=1 accepts without asking: nothing on
        stdout, the file is written."""
        write_file(os.path.join(self.src, "b.bin"), 1000)
        send = self.spawn("send", "--no-qr", "--code", "72-env-yes", "b.bin", name="sender",
                        cwd=self.src)
        recv = self.spawn("receive", "72-env-yes", name="receiver", cwd=self.out,
                        env={"WORMHOLE_ACCEPT_FILE": "1"})
        yield self.both(send, recv)
        self.assertEqual(recv.stdout, b"")
        self.assertEqual(os.listdir(self.out), ["b.bin"])

    @defer.inlineCallbacks
    def test_output_file_into_existing_directory(self):
        """-o DIR where DIR exists puts the file inside it, under the
        sender's name, as the reference does."""
        digest = write_file(os.path.join(self.src, "c.bin"), 1000)
        os.makedirs(os.path.join(self.out, "inbox"))
        send = self.spawn("send", "--no-qr", "--code", "73-into-dir", "c.bin", name="sender",
                        cwd=self.src)
        recv = self.spawn("receive", "--accept-file", "-o", "inbox", "73-into-dir",
                        name="receiver", cwd=self.out)
        yield self.both(send, recv)
        self.assertEqual(os.listdir(os.path.join(self.out, "inbox")), ["c.bin"])
        self.assertEqual(sha256_of(os.path.join(self.out, "inbox", "c.bin")), digest)
        # transfer-v2: the offer's line says where it goes
        self.assertIn(b"Offered file 'c.bin' (1.0 kB) into 'inbox/c.bin'\n", recv.stderr)

    @defer.inlineCallbacks
    def send_growing(self, code, *protocol):
        """A file appended to after the offer (a log being written)."""
        path = os.path.join(self.src, "log.txt")
        with open(path, "wb") as f:
            f.write(b"first part\n" * 1000)
        send = self.spawn("send", "--no-qr", *protocol, "--code", code, "log.txt",
                          name="sender", cwd=self.src)
        yield send.wait_for(rb"Wormhole code is")
        with open(path, "ab") as f:
            f.write(b"written later\n" * 1000)
        recv = self.spawn("receive", "--accept-file", code, name="receiver", cwd=self.out)
        yield defer.gatherResults([send.ended, recv.ended])
        return send, recv

    @defer.inlineCallbacks
    def test_growing_file_classic(self):
        """Classic: the offered bytes arrive intact, the sender warns
        that the rest did not go (the reference's habit)."""
        send, recv = yield self.send_growing("74-growing-log", "--classic")
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        with open(os.path.join(self.out, "log.txt"), "rb") as f:
            self.assertEqual(f.read(), b"first part\n" * 1000)
        self.assertIn(b"Warning: 'log.txt' grew while it was sent: only its first "
                      b"11.0 kB (its size when offered) went", send.stderr)

    @defer.inlineCallbacks
    def test_growing_file_transfer_v2(self):
        """transfer-v2: the spec makes the sender compare size and mtime
        with the offer's ("Making an Offer"): the offer fails with one
        line saying the file changed, both exit 1, and nothing is left
        under the final name (docs/cli.md)."""
        send, recv = yield self.send_growing("76-growing-log")
        self.assertEqual((send.status, recv.status), (1, 1), send.describe() + recv.describe())
        self.assertIn(b"ERROR: 'log.txt' changed after it was offered", send.stderr)
        self.assertNotIn("log.txt", os.listdir(self.out))

    @defer.inlineCallbacks
    def test_block_device(self):
        """A block device (a loop device over a 1 MB file) is sent as a
        file of its size, as the reference does (by the classic protocol:
        transfer-v2 offers regular files and directories)."""
        backing = os.path.join(self.src, "disk.img")
        digest = write_file(backing, 1 << 20)
        losetup = shutil.which("losetup")
        if losetup is None or os.geteuid() != 0:
            raise AssertionError("this test needs losetup(8) and root")
        device = subprocess.run([losetup, "--find", "--show", "--read-only", backing],
                                check=True, capture_output=True, text=True).stdout.strip()
        self.addCleanup(subprocess.run, [losetup, "--detach", device], check=False)
        send = self.spawn("send", "--no-qr", "--code", "75-block-device", device,
                        name="sender", cwd=self.src)
        recv = self.spawn("receive", "--accept-file", "75-block-device", name="receiver",
                        cwd=self.out)
        yield self.both(send, recv)
        name = os.path.basename(device)
        self.assertIn(f"Sending 1.0 MB file named '{name}'".encode(), send.stderr)
        self.assertIn(NOT_A_FILE.format(device).encode(), send.stderr)
        self.assertEqual(sha256_of(os.path.join(self.out, name)), digest)


    @defer.inlineCallbacks
    def senders_say(self, code, *what):
        """The layouts of the reference's sender and ours sending ``what``
        (QR codes drawn, the default of both), up to the instructions;
        no receiver comes, both are stopped there."""
        layouts = []
        for name, argv in (("reference", ref_cli_argv(self.url, "send", "--code", code, *what,
                                                       transit=self.transit)),
                           ("ours", our_cli("--relay-url", self.url, "--transit-helper",
                                            self.transit, "send", "--code", code, *what))):
            run = CLIProcess.spawn(self, reactor, argv, name=name, cwd=self.src, env=ENV)
            yield run.wait_for(f"wormhole receive {code}\n".encode())
            layouts.append(layout(run.stderr, code))
            yield run.kill()
        return layouts

    def assert_order(self, layout, code, announcement):
        """What to send, the code, its QR code, then the instructions."""
        self.assertEqual(layout[-6:], [announcement, f"Wormhole code is: {code}", "<QR>",
                                       "On the other computer, please run:", "",
                                       f"wormhole receive {code}"], layout)

    @defer.inlineCallbacks
    def test_file_announced_before_the_code_as_the_reference(self):
        """A file: the reference's line, word for word, before the code,
        then the code, the QR code and the instructions in its order."""
        write_file(os.path.join(self.src, "B.bin"), 31_500)
        theirs, ours = yield self.senders_say("81-announce-file", "B.bin")
        self.assertEqual(ours, theirs)
        self.assert_order(ours, "81-announce-file", "Sending 31.5 kB file named 'B.bin'")

    @defer.inlineCallbacks
    def test_text_announced_before_the_code_as_the_reference(self):
        theirs, ours = yield self.senders_say("82-announce-text", "--text", "hello there")
        self.assertEqual(ours, theirs)
        self.assert_order(ours, "82-announce-text", "Sending text message (11 Bytes)")

    @defer.inlineCallbacks
    def test_directory_announced_before_the_code_as_the_reference(self):
        """A directory: the reference's "Sending directory (...) named 'D'"
        form before the code (it zips first, so says how big the zipfile
        is; transfer-v2 sends the files as they are: how many, how big)."""
        os.makedirs(os.path.join(self.src, "album", "inner"))
        write_file(os.path.join(self.src, "album", "one.jpg"), 1000)
        write_file(os.path.join(self.src, "album", "inner", "two.jpg"), 2000)
        theirs, ours = yield self.senders_say("83-announce-dir", "album")
        self.assertEqual(theirs[0], "Building zipfile..")
        self.assertRegex(theirs[1], r"^Sending directory \(.+ compressed\) named 'album'$")
        self.assertEqual(ours[1:], theirs[2:])
        self.assert_order(ours, "83-announce-dir",
                          "Sending directory (2 files, 3.0 kB) named 'album'")

    @defer.inlineCallbacks
    def test_several_paths_announced_before_the_code(self):
        """Several paths (which the reference cannot send): one line sums
        them up before the code; the receiver says which arrived as a
        directory, and counts in the singular say so."""
        write_file(os.path.join(self.src, "a.bin"), 1000)
        write_file(os.path.join(self.src, "b.bin"), 1000)
        os.makedirs(os.path.join(self.src, "c"))
        write_file(os.path.join(self.src, "c", "d.bin"), 1000)
        code = "84-announce-many"
        send = self.spawn("send", "--code", code, "a.bin", "b.bin", "c", name="sender",
                          cwd=self.src)
        yield send.wait_for(f"wormhole receive {code}\n".encode())
        self.assert_order(layout(send.stderr, code), code,
                          "Sending 3 paths: 2 files and 1 directory (3.0 kB)")
        recv = self.spawn("receive", "--accept-file", code, name="receiver", cwd=self.out)
        yield self.both(send, recv)
        said = recv.stderr.decode()
        self.assertIn("Offered directory 'c' (1 file, 1.0 kB)\n", said)
        self.assertIn(f"Received directory written to: {os.path.join(self.out, 'c')}\n", said)
        self.assertIn(f"Received file written to: {os.path.join(self.out, 'a.bin')}\n", said)
        self.assertIn(b"Sent directory 'c' (1 file, 1.0 kB): 1 file confirmed\n", send.stderr)


class HabitsOurServer(_Habits, OurServer, unittest.TestCase):
    pass


class HabitsReferenceServer(_Habits, ReferenceServer, unittest.TestCase):
    pass
