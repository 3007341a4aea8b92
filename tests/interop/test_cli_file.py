"""File and directory transfer between our CLI and the reference CLI
(File-transfer protocol: offer/answer through the mailbox, data through
Transit), both directions, on our mailbox server and our Transit relay.

Both CLIs run with ``--no-listen``: neither offers direct hints (the
reference would advertise every local interface address, and tests here
connect to 127.0.0.1 only), so the data goes through the relay hint
``tcp:127.0.0.1:PORT`` that ``--transit-helper`` gives both sides.
"""
import hashlib
import os

from twisted.internet import defer, reactor

from . import harness
from .harness import InteropTestCase, our_cli_argv, ref_cli_argv

SIZE = 200 * 1000 + 3


def digest_tree(root):
    """{relative path: sha256} of every file under root."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = hashlib.sha256(
                    f.read()).hexdigest()
    return out


class CLIFile(InteropTestCase):

    @defer.inlineCallbacks
    def setup_servers(self):
        from wormhole_relay.testing import start_transit_relay
        srv = yield self.start_our_server()
        relay = yield start_transit_relay(reactor)
        self.addCleanup(relay.stop)
        return srv, "tcp:127.0.0.1:%d" % relay.port

    @defer.inlineCallbacks
    def transfer(self, sender, receiver, what, code):
        """Send ``what`` (a name inside a fresh source dir, made by the
        caller through ``self.src``) and receive it into a fresh dir;
        returns (send run, receive run, output path)."""
        srv, transit = yield self.setup_servers()
        out = os.path.join(harness.new_dir(self), "received")

        def argv(cli, *args):
            if cli is ref_cli_argv:
                return ref_cli_argv(srv.url, *args, transit=transit)
            return [a if a != harness.NO_TRANSIT else transit
                    for a in our_cli_argv(srv.url, *args)]
        send = self.spawn(argv(sender, "send", "--no-listen",
                               "--hide-progress", "--code", code, what),
                          "sender", cwd=self.src)
        recv = self.spawn(argv(receiver, "receive", "--no-listen",
                               "--hide-progress", "--accept-file", "-o",
                               out, code), "receiver")
        yield self.wait_all([send, recv])
        self.assertExited(send)
        self.assertExited(recv)
        self.assertOursFellBack((send, sender), (recv, receiver))
        return send, recv, out

    def make_file(self):
        self.src = harness.new_dir(self)
        data = os.urandom(SIZE)
        with open(os.path.join(self.src, "payload ✓.bin"), "wb") as f:
            f.write(data)
        return "payload ✓.bin", data

    def make_dir(self):
        self.src = harness.new_dir(self)
        top = os.path.join(self.src, "tree")
        os.makedirs(os.path.join(top, "sub", "deeper"))
        files = {"a.txt": b"alpha\n", os.path.join("sub", "b.bin"):
                 os.urandom(50000), os.path.join("sub", "deeper", "c"): b"",
                 "ünïcode.txt": "ü".encode("utf-8")}
        for rel, data in files.items():
            with open(os.path.join(top, rel), "wb") as f:
                f.write(data)
        return "tree", digest_tree(top)

    @defer.inlineCallbacks
    def check_file(self, sender, receiver):
        name, data = self.make_file()
        _, _, out = yield self.transfer(sender, receiver, name,
                                        "40-file-transfer")
        with open(out, "rb") as f:
            got = f.read()
        self.assertEqual(hashlib.sha256(got).hexdigest(),
                         hashlib.sha256(data).hexdigest())

    @defer.inlineCallbacks
    def check_dir(self, sender, receiver):
        name, digests = self.make_dir()
        _, _, out = yield self.transfer(sender, receiver, name,
                                        "41-directory-transfer")
        self.assertEqual(digest_tree(out), digests)

    def test_file_ours_to_reference(self):
        """our send FILE -> reference receive --accept-file -o OUT: the
        bytes arrive unchanged (through our relay)."""
        return self.check_file(our_cli_argv, ref_cli_argv)

    def test_file_reference_to_ours(self):
        """reference send FILE -> our receive --accept-file -o OUT."""
        return self.check_file(ref_cli_argv, our_cli_argv)

    def test_directory_ours_to_reference(self):
        """our send DIR -> reference receive: every file, nested and
        empty ones included, arrives unchanged."""
        return self.check_dir(our_cli_argv, ref_cli_argv)

    def test_directory_reference_to_ours(self):
        """reference send DIR -> our receive."""
        return self.check_dir(ref_cli_argv, our_cli_argv)
