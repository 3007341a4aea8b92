"""``twistd transitrelay``: its options (the reference relay's, plus our
limits), the service it builds, and a real twistd subprocess relaying."""

import json
import os
import sqlite3
import subprocess

from twisted.application.service import IService
from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.python import usage
from twisted.trial import unittest

from wormhole_ops.listen import with_backlog
from wormhole_relay import _plugin
from wormhole_relay._limits import Limits
from wormhole_relay._splice import splice_available

from ._client import Clients
from ._fakes import SIDE1, SIDE2, TOKEN, handshake
from ._subprocess import our_twistd, reference_twistd, start_twistd

# every option of the reference relay 0.5 (`twistd transitrelay --help`)
REFERENCE_OPTIONS = {"port": "p", "websocket": "w", "websocket-url": "u",
                     "log-fd": None, "blur-usage": None, "usage-db": None}


def parse(*argv):
    o = _plugin.Options()
    o.parseOptions(list(argv))
    return o


class Options(unittest.TestCase):
    def mktemp_dir(self):
        path = self.mktemp()
        os.makedirs(path)
        return path
    def test_defaults(self):
        """No arguments: the reference's default port (all interfaces,
        4001), no WebSocket, no usage db or log, default limits."""
        o = parse()
        self.assertEqual(o["port"], r"tcp:4001:interface=\:\:")
        for name in ("websocket", "websocket-url", "log-fd", "blur-usage",
                     "usage-db"):
            self.assertIsNone(o[name])
        self.assertEqual(o["limits"], Limits())

    def test_reference_names(self):
        """Every reference option parses under its long and short name."""
        o = parse("-p", "tcp:5000", "-w", "tcp:5001", "-u", "ws://x:5001/",
                  "--log-fd", "3", "--blur-usage", "60", "--usage-db", "u.db")
        self.assertEqual((o["port"], o["websocket"], o["websocket-url"],
                          o["log-fd"], o["blur-usage"], o["usage-db"]),
                         ("tcp:5000", "tcp:5001", "ws://x:5001/", 3, 60,
                          "u.db"))

    def test_same_option_names_as_reference(self):
        """Our --help lists every option the reference's --help lists
        (read from the reference's twistd, run as a subprocess)."""
        ref = reference_twistd()
        if not os.path.exists(ref):
            # a missing reference is a failure, never a skip
            self.fail(f"no reference relay at {ref}: run ./dev test")
        # trial --jobs hands its workers a PYTHONPATH with our src/ in
        # it; the reference must not see our packages
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        text = subprocess.run([ref, "transitrelay", "--help"],
                              capture_output=True, text=True, env=env,
                              cwd=self.mktemp_dir(), timeout=60).stdout
        names = {line.split("--", 1)[1].split("=")[0].split()[0]
                 for line in text.splitlines() if "--" in line
                 and line.strip().startswith("-")}
        names -= {"help", "version"}
        self.assertEqual(names, set(REFERENCE_OPTIONS))
        ours = {o[0] for o in _plugin.Options.optParameters}
        self.assertTrue(names <= ours, names - ours)

    def test_limits(self):
        """Our limit options set the Limits; 0 turns a timeout off."""
        o = parse("--handshake-timeout", "5", "--pairing-timeout", "0",
                  "--idle-timeout", "300", "--max-waiting-per-token", "2",
                  "--max-handshake-length", "200", "--close-timeout", "1")
        self.assertEqual(o["limits"], Limits(
            handshake_timeout=5.0, pairing_timeout=None, idle_timeout=300.0,
            max_waiting_per_token=2, max_handshake_length=200,
            close_timeout=1.0))

    def test_bad_values(self):
        """Nonsense values are usage errors that name the option."""
        for argv in (["--handshake-timeout", "soon"],
                     ["--pairing-timeout", "-1"],
                     ["--max-waiting-per-token", "0"],
                     ["--blur-usage", "0"]):
            e = self.assertRaises(usage.UsageError, parse, *argv)
            self.assertIn(argv[0].lstrip("-").split("-")[0], str(e))
        self.assertRaises(usage.UsageError, parse, "--log-fd", "x")

    def test_make_service(self):
        """makeService builds one service with the TCP port, and a second
        port with --websocket (URL derived from the endpoint)."""
        o = parse("--port", "tcp:0:interface=127.0.0.1")
        svc = _plugin.makeService(o, reactor=reactor)
        IService(svc)
        self.assertEqual(len(list(svc)), 2)
        o = parse("--port", "tcp:0:interface=127.0.0.1",
                  "--websocket", "tcp:4002:interface=127.0.0.1")
        svc = _plugin.makeService(o, reactor=reactor)
        self.assertEqual(len(list(svc)), 3)
        self.assertEqual(_plugin._websocket_url("tcp:4002:interface=x"),
                         "ws://localhost:4002/")


class Backlog(unittest.TestCase):
    def test_with_backlog(self):
        """A tcp/tcp6 endpoint without backlog= gets backlog=1024; one
        with it, and other kinds of endpoint, are left alone."""
        w = with_backlog
        self.assertEqual(w("tcp:4001"), "tcp:4001:backlog=1024")
        self.assertEqual(w(r"tcp:4001:interface=\:\:"),
                         r"tcp:4001:interface=\:\::backlog=1024")
        self.assertEqual(w("tcp6:4001"), "tcp6:4001:backlog=1024")
        self.assertEqual(w("tcp:4001:backlog=7"), "tcp:4001:backlog=7")
        self.assertEqual(w("unix:/tmp/x"), "unix:/tmp/x")

    def ports(self, *argv):
        svc = _plugin.makeService(parse(*argv), reactor=reactor)
        return [s for s in svc if hasattr(s, "endpoint")]

    def test_listen_queue(self):
        """The relay listens with a queue of 1024 unless the operator's
        endpoint says otherwise (100 pairs connecting at once overflow
        Twisted's 50, docs/performance.md), on both ports."""
        ports = self.ports("--port", "tcp:0:interface=127.0.0.1",
                           "--websocket", "tcp:4002:interface=127.0.0.1")
        self.assertEqual([p.endpoint._backlog for p in ports], [1024, 1024])
        [port] = self.ports("--port", "tcp:0:backlog=5")
        self.assertEqual(port.endpoint._backlog, 5)

    def test_no_splice(self):
        """--no-splice keeps every TCP pair on the plain path."""
        [port] = self.ports("--port", "tcp:0")
        self.assertEqual(port.factory.splice, splice_available())
        [port] = self.ports("--port", "tcp:0", "--no-splice")
        self.assertFalse(port.factory.splice)


class Subprocess(unittest.TestCase):
    timeout = 120

    @inlineCallbacks
    def test_twistd_relays_a_pair(self):
        """`twistd -n transitrelay` (ours, a real subprocess): a pair
        relays; on SIGTERM it stops, and the pair's record is in the JSON
        lines of --log-fd and in --usage-db."""
        db = os.path.abspath(self.mktemp())
        proc, port = yield start_twistd(
            self, our_twistd(), ["--usage-db", db, "--log-fd", "3"],
            log_fd=True)
        clients = Clients(reactor, self)
        a = yield clients.connect(port)
        b = yield clients.connect(port)
        a.send(handshake(TOKEN, SIDE1))
        b.send(handshake(TOKEN, SIDE2))
        self.assertEqual((yield a.when_received(3)), b"ok\n")
        self.assertEqual((yield b.when_received(3)), b"ok\n")
        a.send(b"through a real relay")
        got = yield b.when_received(3 + 20)
        self.assertEqual(got, b"ok\nthrough a real relay")
        a.transport.loseConnection()
        yield b.closed
        yield a.closed
        code = yield proc.stop()
        self.assertIn(code, [(0, None), (None, 15)])
        self.assertNotIn(b"Traceback", proc.output[1] + proc.output[2])
        records = [json.loads(line) for line in proc.log_lines()]
        happy = [r for r in records if r["mood"] == "happy"]
        self.assertEqual(len(happy), 1)
        self.assertEqual(happy[0]["total_bytes"], 20)
        conn = sqlite3.connect(db)
        rows = conn.execute("SELECT result, total_bytes FROM usage"
                            " WHERE result='happy'").fetchall()
        conn.close()
        self.assertEqual(rows, [("happy", 20)])

    @inlineCallbacks
    def test_twistd_websocket(self):
        """`--websocket` (URL derived from the endpoint): a WebSocket client
        and a TCP client pair through the twistd subprocess."""
        from autobahn.twisted.websocket import WebSocketClientFactory
        from twisted.internet.defer import Deferred
        from twisted.internet.endpoints import TCP4ClientEndpoint

        from ._subprocess import free_port, wait_listening
        from ._support import WSClient
        ws_port = free_port()
        proc, port = yield start_twistd(
            self, our_twistd(),
            ["--websocket", f"tcp:{ws_port}:interface=127.0.0.1"])
        yield wait_listening(ws_port, proc)
        f = WebSocketClientFactory(f"ws://127.0.0.1:{ws_port}/",
                                   reactor=reactor)
        f.protocol = WSClient
        f.opened = Deferred()
        ws = yield TCP4ClientEndpoint(reactor, "127.0.0.1",
                                      ws_port).connect(f)
        yield f.opened
        self.addCleanup(lambda: None if ws.gone else (
            ws.transport.abortConnection(), ws.closed)[1])
        clients = Clients(reactor, self)
        b = yield clients.connect(port)
        ws.send(handshake(TOKEN, SIDE1))
        b.send(handshake(TOKEN, SIDE2))
        self.assertEqual((yield ws.when_received(3)), b"ok\n")
        self.assertEqual((yield b.when_received(3)), b"ok\n")
        ws.send(b"over websocket")
        self.assertEqual((yield b.when_received(3 + 14)),
                         b"ok\nover websocket")
