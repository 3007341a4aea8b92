"""What the servers log: one line per finished session, the options at
start-up, and never a client's IP address: checked by grepping the logs of
`twistd wormhole-mailbox` and `twistd transitrelay` (and the Mailbox
server's usage database) after real transfers and malformed connections
over 127.0.0.1 and ::1."""

import base64
import os
import re
import socket
import sqlite3

from twisted.internet import defer, reactor
from twisted.internet.endpoints import (
    TCP4ClientEndpoint,
    TCP6ClientEndpoint,
    connectProtocol,
)
from twisted.internet.protocol import Protocol

from .._processes import free_port
from ..interop.harness import (
    InteropTestCase,
    mailbox_moods,
    our_cli_argv,
    our_twistd,
    start_twistd,
    wait_until_listening,
)
from ..relay._client import Clients
from ._client import happy_exchange

ADDRESS = re.compile(rb"\b(?:\d{1,3}\.){3}\d{1,3}\b|::1\b|::ffff:")
V6_PORT = "tcp6:0:interface=\\:\\:1"


def _upgrade(path=b"/v1"):
    key = base64.b64encode(os.urandom(16))
    return (b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: " + key +
            b"\r\nSec-WebSocket-Version: 13\r\n\r\n")


class _Raw(Protocol):
    def __init__(self, data):
        self.data = data
        self.closed = defer.Deferred()

    def connectionMade(self):
        for chunk in self.data:
            self.transport.write(chunk)

    def connectionLost(self, reason):
        self.closed.callback(None)


@defer.inlineCallbacks
def misbehave(host, port, scripts):
    """One connection per script (a list of byte strings sent at once);
    each ends when the server closes it (or after 5 s)."""
    endpoint = (TCP6ClientEndpoint if ":" in host
                else TCP4ClientEndpoint)(reactor, host, port)
    for script in scripts:
        proto = yield connectProtocol(endpoint, _Raw(script))
        timer = reactor.callLater(5, proto.transport.abortConnection)
        yield proto.closed
        if timer.active():
            timer.cancel()


# autobahn warns naming the peer on each of these
MAILBOX_ABUSE = [
    [b"garbage\r\n\r\n"],
    [_upgrade(b"/elsewhere")],
    [_upgrade(), b"\x81\x05hello"],  # an unmasked client frame
]
RELAY_ABUSE = [[b"garbage\n"], [b"please relay " + b"a" * 64 + b"\n"]]


def has_ipv6_loopback():
    try:
        s = socket.socket(socket.AF_INET6)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False


class NoAddresses(InteropTestCase):
    def assertNoAddress(self, text, what):
        found = ADDRESS.findall(text)
        self.assertEqual(found, [], f"{what} names an address:\n"
                         + text.decode(errors="replace")[-3000:])

    @defer.inlineCallbacks
    def test_mailbox(self):
        """A real `wormhole` transfer over 127.0.0.1, a full rendezvous
        over ::1, and malformed connections over both: the log names no
        address, has one session line per finished nameplate and mailbox,
        and the start-up line; the usage database holds no address."""
        self.assertTrue(has_ipv6_loopback(), "this test needs ::1")
        server = yield self.start_our_twistd_server()
        yield self.exchange_text(server.url, our_cli_argv, our_cli_argv,
                                 "hello", code="4-purple-sausages")
        yield self.wait_for_moods(
            server, lambda rows: len(mailbox_moods(rows)) >= 1)
        yield misbehave("127.0.0.1", server.port, MAILBOX_ABUSE)

        run6, port6 = yield start_twistd(
            self, reactor, our_twistd(), "wormhole-mailbox", "::1 server",
            server.basedir, ["--port", V6_PORT, "--channel-db", ":memory:"],
            probe=False)
        yield happy_exchange(reactor, f"ws://[::1]:{port6}/v1")
        yield misbehave("::1", port6, MAILBOX_ABUSE)

        yield server.stop()
        yield run6.kill()
        for run in (server._run, run6):
            log = run.stdout + run.stderr
            self.assertNoAddress(log, run.name)
            self.assertIn(b"wormhole-mailbox starting with options", log)
            self.assertIn(b"interface=<not logged>", log)
            self.assertEqual(len(re.findall(
                rb"mailbox session ended: kind=mailbox .*result=happy", log)),
                1, log.decode(errors="replace"))
        # autobahn's warnings are there, without the address
        self.assertIn(b"dropping connection to peer a client (address not "
                      b"logged", server._run.stdout)
        db = sqlite3.connect(server.usage_db)
        dump = "\n".join(db.iterdump()).encode()
        db.close()
        self.assertIn(b"happy", dump)
        self.assertNoAddress(dump, "the usage database")

    @defer.inlineCallbacks
    def test_logfile(self):
        """With twistd's --logfile the same lines go to the file: the
        start-up options, a session line per finished mailbox, no
        address."""
        basedir = os.path.abspath(self.mktemp())
        os.makedirs(basedir)
        logfile = os.path.join(basedir, "server.log")
        port = free_port()
        run = self.spawn([our_twistd(), "-n", "--pidfile=",
                          f"--logfile={logfile}", "wormhole-mailbox",
                          "--port", f"tcp:{port}:interface=127.0.0.1",
                          "--channel-db", ":memory:"], "logfile server")
        yield wait_until_listening(reactor, port)
        yield happy_exchange(reactor, f"ws://127.0.0.1:{port}/v1")
        yield misbehave("127.0.0.1", port, MAILBOX_ABUSE[:1])
        def log():
            if not os.path.exists(logfile):
                return b""
            with open(logfile, "rb") as f:
                return f.read()
        yield self.poll_until(lambda: b"kind=mailbox" in log(),
                              "the session line in the log file")
        yield run.kill()
        log = log()
        self.assertNoAddress(log, "the --logfile")
        self.assertIn(b"wormhole-mailbox starting with options", log)
        self.assertIn(b"dropping connection to peer a client", log)

    @defer.inlineCallbacks
    def test_relay(self):
        """A relayed pair and malformed connections over 127.0.0.1 and ::1
        (TCP), and over a WebSocket port: the relay's log names no address
        and has one session line per relayed pair."""
        self.assertTrue(has_ipv6_loopback(), "this test needs ::1")
        basedir = self.mktemp()
        os.makedirs(basedir)
        runs = []
        ws_port = free_port()
        for host, args in (
                ("127.0.0.1", ["--port", "tcp:0:interface=127.0.0.1",
                               "--websocket",
                               f"tcp:{ws_port}:interface=127.0.0.1"]),
                ("::1", ["--port", V6_PORT])):
            run, port = yield start_twistd(
                self, reactor, our_twistd(), "transitrelay",
                f"relay on {host}", basedir, args, probe=False)
            runs.append(run)
            yield Clients(reactor, self).relay_pair(port, "c" * 64, 1000,
                                                    host=host)
            # written when the pair's usage record is
            yield self.poll_until(
                lambda run=run: b"relay session ended" in run.stdout,
                f"the session line of the pair over {host}")
            yield misbehave(host, port, RELAY_ABUSE)
        yield misbehave("127.0.0.1", ws_port, MAILBOX_ABUSE)
        for run in runs:
            yield run.kill()
            log = run.stdout + run.stderr
            self.assertNoAddress(log, run.name)
            self.assertIn(b"transitrelay starting with options", log)
            self.assertEqual(len(re.findall(
                rb"relay session ended: .*mood=happy", log)), 1,
                log.decode(errors="replace"))
        self.assertIn(b"dropping connection to peer a client (address not "
                      b"logged", runs[0].stdout)
