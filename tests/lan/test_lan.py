"""--lan end to end (docs/lan.md): our CLI, and the reference 0.24 with
the printed --relay-url, on a local network of namespaces where multicast
works and nothing beyond the LAN can be reached (``_net``: any attempt
fails the test)."""
import os
import re
import sys

from twisted.internet import defer, reactor
from twisted.trial import unittest

from ..cli._process import CLIProcess
from ..cli._pty import spawn_in_pty
from ..files._support import ref_bin
from ..nat._peers import sha256_of, write_file
from ._net import SUBNET, Lan

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "src")
ENV = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONUNBUFFERED": "1"}
CODE = re.compile(rb"Wormhole code is: (\S+)")
RELAY_LINE = re.compile(rb"wormhole --relay-url (ws://\S+) --transit-helper '' receive (\S+)")
OURS = [sys.executable, "-m", "wormhole.cli"]


class LanCase(unittest.TestCase):
    timeout = 120

    def setUp(self):
        self.lan = Lan.build(self, ("a", "b", "c", "d"))

    def spawn(self, host, argv, name=None, cwd=None, stdin=None, ours=True):
        # ours: this tree's src (and tests, for tests.lan._mdns); never
        # for the reference, which must import its own package
        env = dict(ENV, PYTHONPATH=SRC + os.pathsep + os.path.dirname(SRC)) if ours else ENV
        return CLIProcess.spawn(self, reactor, self.lan.argv(host, argv), stdin=stdin,
                                name=name or f"{argv[-1]} on {host}", env=env, cwd=cwd)

    def folder(self):
        path = os.path.abspath(self.mktemp())
        os.makedirs(path)
        return path

    @defer.inlineCallbacks
    def both_end(self, *runs):
        yield defer.gatherResults([r.ended for r in runs])
        for r in runs:
            self.assertEqual(r.status, 0, "\n".join(x.describe() for x in runs))

    @defer.inlineCallbacks
    def sent(self, host, args, cwd=None):
        """A --lan sender on ``host``; fires with (run, code)."""
        run = self.spawn(host, OURS + ["send", "--lan", "--no-qr", "--hide-progress", *args],
                         name=f"sender on {host}", cwd=cwd)
        m = yield run.wait_for(CODE)
        return run, m.group(1).decode()


    @defer.inlineCallbacks
    def watched_sender(self, where, text):
        """A browser on ``where`` (``tests/lan/_mdns.py watch``), then a
        sender on host a whose announcement it has seen; fires with
        (watcher, sender, code, nameplate as bytes)."""
        watcher = self.spawn(where, [sys.executable, "-m", "tests.lan._mdns", "watch"],
                             name=f"watcher on {where}")
        yield watcher.wait_for(rb"watching")
        send, code = yield self.sent("a", ["--text", text])
        nameplate = code.split("-")[0].encode()
        yield watcher.wait_for(rb"added " + nameplate)
        return watcher, send, code, nameplate


class Transfers(LanCase):
    @defer.inlineCallbacks
    def text(self, args):
        send, code = yield self.sent("a", [*args, "--text", "over the LAN"])
        recv = self.spawn("b", OURS + ["receive", "--lan", *args, code])
        yield self.both_end(send, recv)
        self.assertEqual(recv.stdout, b"over the LAN\n")
        return send, recv

    def test_text(self):
        return self.text(())

    def test_text_classic(self):
        return self.text(("--classic",))

    @defer.inlineCallbacks
    def file_and_folder(self, args):
        src = self.folder()
        digest = write_file(os.path.join(src, "data.bin"), 200_000)
        os.makedirs(os.path.join(src, "dir", "sub"))
        inner = write_file(os.path.join(src, "dir", "sub", "x.bin"), 50_000)
        for what, check in (("data.bin", digest), ("dir", inner)):
            out = self.folder()
            send, code = yield self.sent("a", [*args, what], cwd=src)
            recv = self.spawn("b", OURS + ["receive", "--lan", "--accept-file",
                                           "--hide-progress", *args, code], cwd=out)
            yield self.both_end(send, recv)
            got = os.path.join(out, what) if what == "data.bin" else os.path.join(
                out, "dir", "sub", "x.bin")
            self.assertEqual(sha256_of(got), check)
            # direct, on the LAN (no relay was offered at all)
            ways = re.findall(rb" via (\S+)", send.stderr + recv.stderr)
            self.assertTrue(ways and all(b"tcp:10.77.0." in w for w in ways), ways)

    def test_file_and_folder_v2(self):
        return self.file_and_folder(())

    def test_file_and_folder_classic(self):
        return self.file_and_folder(("--classic",))

    @defer.inlineCallbacks
    def test_share(self):
        """``share --lan`` on both sides: each gets the other's file."""
        src_a, src_b = self.folder(), self.folder()
        da = write_file(os.path.join(src_a, "from-a.bin"), 30_000)
        db = write_file(os.path.join(src_b, "from-b.bin"), 30_000)
        a = self.spawn("a", OURS + ["share", "--lan", "--accept-file", "--hide-progress",
                                    "from-a.bin"], name="share on a", cwd=src_a, stdin=b"")
        m = yield a.wait_for(CODE)
        b = self.spawn("b", OURS + ["share", "--lan", "--accept-file", "--hide-progress",
                                    "--code", m.group(1).decode(), "from-b.bin"],
                       name="share on b", cwd=src_b, stdin=b"")
        yield self.both_end(a, b)
        self.assertEqual(sha256_of(os.path.join(src_b, "from-a.bin")), da)
        self.assertEqual(sha256_of(os.path.join(src_a, "from-b.bin")), db)

    @defer.inlineCallbacks
    def test_code_typed_at_the_prompt(self):
        """``receive --lan`` without a code: the one sender announcing is
        found first, then the code is asked for (here on a pipe)."""
        send, code = yield self.sent("a", ["--text", "typed"])
        recv = self.spawn("b", OURS + ["receive", "--lan"], stdin=code.encode() + b"\n")
        yield self.both_end(send, recv)
        self.assertEqual(recv.stdout, b"Enter receive wormhole code: typed\n")

    @defer.inlineCallbacks
    def test_tab_completes_from_the_found_server(self):
        """In a terminal, <Tab> on the empty prompt gives the found
        sender's nameplate: completion asks the sender's own server."""
        send, code = yield self.sent("a", ["--text", "tabbed"])
        nameplate, words = code.split("-", 1)
        env = {"PYTHONPATH": SRC, "PYTHONUNBUFFERED": "1"}
        recv = spawn_in_pty(self, self.lan.argv("b", OURS + ["receive", "--lan"]),
                            "receiver in a terminal", env=env)
        yield recv.wait_for(rb"Enter receive wormhole code: ")
        recv.write(b"\t")
        yield recv.wait_for(re.escape(f"code: {nameplate}-".encode()))
        recv.write(words.encode() + b"\r")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        self.assertIn(b"tabbed\r\n", recv.stdout)

    @defer.inlineCallbacks
    def test_two_senders_at_once(self):
        """Two senders on one network hold different nameplates (mDNS
        probing), and each receiver gets its own sender's text."""
        s1, c1 = yield self.sent("a", ["--text", "one"])
        s2, c2 = yield self.sent("c", ["--text", "two"])
        self.assertNotEqual(c1.split("-")[0], c2.split("-")[0])
        r1 = self.spawn("b", OURS + ["receive", "--lan", c1])
        r2 = self.spawn("d", OURS + ["receive", "--lan", c2])
        yield self.both_end(s1, s2, r1, r2)
        self.assertEqual((r1.stdout, r2.stdout), (b"one\n", b"two\n"))


class Peers(LanCase):
    @defer.inlineCallbacks
    def test_reference_receiver_with_the_printed_relay_url(self):
        """The reference 0.24 cannot browse: the sender's --relay-url line
        (no relay either) reaches the same server, for a text and a file,
        and the reference dials nothing beyond the LAN."""
        ref = ref_bin("wormhole")
        src = self.folder()
        digest = write_file(os.path.join(src, "data.bin"), 100_000)
        received = []
        for what in (["--text", "to the reference"], ["data.bin"]):
            out = self.folder()
            send, _ = yield self.sent("a", what, cwd=src)
            m = yield send.wait_for(RELAY_LINE)
            url, code = m.group(1).decode(), m.group(2).decode()
            recv = self.spawn("b", [ref, "--relay-url", url, "--transit-helper", "", "receive",
                                    "--accept-file", code],
                              name="reference on b", ours=False, cwd=out)
            yield self.both_end(send, recv)
            received.append(recv.stdout)
        self.assertEqual(received[0], b"to the reference\n")
        self.assertEqual(sha256_of(os.path.join(out, "data.bin")), digest)

    @defer.inlineCallbacks
    def test_forged_announcement_is_refused(self):
        """A second announcement for the sender's nameplate: the receiver
        refuses clearly; the sender is unharmed, and its text still reaches
        a receiver that uses the printed --relay-url."""
        send, code = yield self.sent("a", ["--text", "kept safe"])
        m = yield send.wait_for(RELAY_LINE)
        forger = self.spawn("c", [sys.executable, "-m", "tests.lan._mdns", "forge",
                                  code.split("-")[0], "4999", self.lan.address["c"]],
                            name="forger on c")
        yield forger.wait_for(rb"forging")
        refused = self.spawn("b", OURS + ["receive", "--lan", code])
        yield refused.ended
        self.assertEqual(refused.status, 1, refused.describe())
        self.assertIn(b"two different senders announce nameplate", refused.stderr)
        recv = self.spawn("d", OURS + ["--relay-url", m.group(1).decode(), "receive", code])
        yield self.both_end(send, recv)
        self.assertEqual(recv.stdout, b"kept safe\n")

    @defer.inlineCallbacks
    def test_killed_sender_misleads_nobody(self):
        """SIGKILL: no goodbye; a later receiver finds no sender (no cache
        of its own outlives it) and says so."""
        send, code = yield self.sent("a", ["--text", "never"])
        send.transport.signalProcess("KILL")
        yield send.ended
        recv = self.spawn("b", OURS + ["receive", "--lan", code])
        yield recv.ended
        self.assertEqual(recv.status, 1, recv.describe())
        self.assertIn(f"no sender on this network offers nameplate {code.split('-')[0]}"
                      .encode(), recv.stderr)

    @defer.inlineCallbacks
    def test_ctrl_c_says_goodbye(self):
        """SIGINT: the announcement is withdrawn (a goodbye, TTL 0) and
        another host's browser sees it go."""
        watcher, send, code, nameplate = yield self.watched_sender("b", "interrupted")
        send.transport.signalProcess("INT")
        yield send.ended
        yield watcher.wait_for(rb"removed " + nameplate)

    @defer.inlineCallbacks
    def test_unreachable_mailbox_suggests_lan(self):
        """Without --lan, a Mailbox server that cannot be reached (here:
        no host at that LAN address) ends in an error that names --lan."""
        recv = self.spawn("b", OURS + ["--relay-url", f"ws://{SUBNET}.99:4000/v1",
                                       "receive", "1-guitarist-revenge"])
        yield recv.ended
        self.assertEqual(recv.status, 1, recv.describe())
        self.assertIn(b"cannot connect to the mailbox server", recv.stderr)
        self.assertIn(b"(on a local network without it: --lan)", recv.stderr)

    @defer.inlineCallbacks
    def test_goodbye_after_a_transfer(self):
        """A sender that completed its transfer withdraws its
        announcement too (before its server stops)."""
        watcher, send, code, nameplate = yield self.watched_sender("c", "done")
        recv = self.spawn("b", OURS + ["receive", "--lan", code])
        yield self.both_end(send, recv)
        yield watcher.wait_for(rb"removed " + nameplate)

