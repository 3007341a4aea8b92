"""The p2p-node command and the twistd plugin: key file creation, peer
text escaping, and a real `p2p-node run` that one-shot commands join."""

import os
import stat
import sys

from twisted.internet import defer, reactor, utils
from twisted.trial.unittest import SynchronousTestCase, TestCase

from p2pmesh import _keys, _plugin, _service

from .._processes import LineProcess, child_env, free_port

P2P_NODE = os.path.join(os.path.dirname(sys.executable), "p2p-node")


class KeyFile(SynchronousTestCase):

    def test_created_0600_and_reused(self):
        """First run creates the key with mode 0600; the next run loads
        the same key."""
        path = os.path.join(self.mktemp(), "sub", "key.pem")
        first = _service.load_or_create_key(path)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        second = _service.load_or_create_key(path)
        self.assertEqual(_keys.public_der(first), _keys.public_der(second))
        self.assertEqual(
            [n for n in os.listdir(os.path.dirname(path))], ["key.pem"])

    def test_wrong_size_refused(self):
        """A key of another β than the subnet's is refused."""
        path = os.path.join(self.mktemp() + "-k.pem")
        _service.load_or_create_key(path, beta=2048)
        self.assertRaises(ValueError, _service.load_or_create_key, path,
                          beta=3072)


class Display(SynchronousTestCase):

    def test_control_characters_escaped(self):
        """Peer text cannot move the cursor or ring the bell."""
        shown = _service.display({"t": "a\x1b[2J\x07b", "b": b"\x00\xff"})
        self.assertNotIn("\x1b", shown)
        self.assertNotIn("\x07", shown)
        self.assertIn("\\u001b", shown)
        self.assertIn('"hex": "00ff"', shown)

    def test_parse_peer(self):
        """host:port, with the port checked."""
        self.assertEqual(_service.parse_peer("127.0.0.1:4000"),
                         ("127.0.0.1", 4000))
        self.assertEqual(_service.parse_peer("[::1]:5"), ("::1", 5))
        for bad in ("nohost", ":4", "h:0", "h:70000"):
            self.assertRaises(ValueError, _service.parse_peer, bad)


class Plugin(TestCase):

    @defer.inlineCallbacks
    def test_service_starts_and_stops(self):
        """twistd p2p-node's service listens on 127.0.0.1 and stops
        cleanly."""
        options = _plugin.Options()
        options.parseOptions([
            "--listen", "tcp:0:interface=127.0.0.1",
            "--key-file", self.mktemp(),
            "--bootstrap", "127.0.0.1:1", "--ell", "2"])
        service = _plugin.makeService(options, reactor)
        service.startService()
        yield service._started
        host, port = service.node.advertised()
        self.assertEqual(host, "127.0.0.1")
        self.assertGreater(port, 0)
        yield service.stopService()


class Command(TestCase):

    timeout = 90

    @defer.inlineCallbacks
    def one_shot(self, *args):
        out, err, code = yield utils.getProcessOutputAndValue(
            P2P_NODE, args, env=child_env())
        self.assertEqual(code, 0, err.decode(errors="replace"))
        return out.decode().strip()

    @defer.inlineCallbacks
    def test_run_then_set_get_shout_whisper(self):
        """`p2p-node run` serves; one-shot set/get/shout/whisper join it."""
        folder = self.mktemp()
        os.makedirs(folder)
        port = free_port()
        server_key = os.path.join(folder, "server.pem")
        server_hex = yield self.one_shot("key", "--key-file", server_key)
        proc = LineProcess()
        reactor.spawnProcess(
            proc, P2P_NODE,
            [P2P_NODE, "run", "--key-file", server_key, "--listen",
             "tcp:%d:interface=127.0.0.1" % port, "--ell", "2"],
            env=child_env())
        self.addCleanup(proc.stop)
        line = yield proc.next_line()
        self.assertIn(b"listening at", line)
        peer = ["--bootstrap", "127.0.0.1:%d" % port, "--ell", "2",
                "--key-file", os.path.join(folder, "client.pem")]
        acks = yield self.one_shot("set", *peer, "colour", "blue")
        self.assertEqual(acks, "1")
        value = yield self.one_shot("get", *peer, "colour")
        self.assertEqual(value, '"blue"')
        yield self.one_shot("shout", *peer, "hi\x1b[31m")
        line = yield proc.next_line()
        self.assertTrue(line.startswith(b"SHOUT from "), line)
        self.assertIn(b'"hi\\u001b[31m"', line)
        acked = yield self.one_shot("whisper", *peer, server_hex, "secret")
        self.assertEqual(acked, '"acknowledged"')
        line = yield proc.next_line()
        self.assertIn(b'WHISPER from', line)
        self.assertIn(b'"secret"', line)
