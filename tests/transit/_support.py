"""Helpers for the Transit tests: relays and a reference Transit peer.

The reference (magic-wormhole 0.24, transit relay 0.5) runs only as a
subprocess of its own venv (``$WORMHOLE_REFERENCE_VENV``, default
``<repo>/.venv-ref``); every process started here is stopped by PID in a
cleanup, also when the test fails. Everything binds 127.0.0.1.
"""

import hashlib
import json
import os
import socket
import tempfile

from twisted.internet import defer, interfaces, reactor
from twisted.internet.task import deferLater
from zope.interface import implementer

from .._processes import REPO_ROOT, LineProcess, child_env, free_port, reference_bin  # noqa: F401 (re-exported)

REF_TRANSIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref_transit.py")
LOOPBACK = ["127.0.0.1"]


def _spawn(testcase, argv, cwd=None):
    proto = LineProcess()
    reactor.spawnProcess(proto, argv[0], argv, env=child_env(), path=cwd)
    testcase.addCleanup(proto.stop)
    return proto


@defer.inlineCallbacks
def _wait_for_port(port, proto, what):
    for _ in range(400):
        if proto.ended.called:
            raise AssertionError(f"{what} exited: {proto.stderr.decode(errors='replace')}")
        s = socket.socket()
        try:
            s.connect(("127.0.0.1", port))
            return
        except OSError:
            pass
        finally:
            s.close()
        yield deferLater(reactor, 0.05, lambda: None)
    raise AssertionError(f"{what} never listened on {port}")


@defer.inlineCallbacks
def start_reference_relay(testcase, websocket=False):
    """The reference transit relay 0.5 on 127.0.0.1; returns its hint, or
    (with ``websocket``) its hint and its ``ws://`` URL."""
    port = free_port()
    tmp = tempfile.mkdtemp()
    argv = [reference_bin("twistd"), "-n", "--pidfile=", "--logfile=-",
            "transitrelay", f"--port=tcp:{port}:interface=127.0.0.1"]
    if websocket:
        ws_port = free_port()
        argv += [f"--websocket=tcp:{ws_port}:interface=127.0.0.1",
                 f"--websocket-url=ws://127.0.0.1:{ws_port}/"]
    proto = _spawn(testcase, argv, cwd=tmp)
    yield _wait_for_port(port, proto, "the reference transit relay")
    if not websocket:
        return f"tcp:127.0.0.1:{port}"
    yield _wait_for_port(ws_port, proto, "the reference relay's WebSocket")
    return f"tcp:127.0.0.1:{port}", f"ws://127.0.0.1:{ws_port}/"


@defer.inlineCallbacks
def start_relay(testcase, websocket=False):
    """Our Transit relay on 127.0.0.1 (wormhole_relay.testing); its hint,
    or (with ``websocket``) the running relay (``.hint``, ``.websocket_url``)."""
    from wormhole_relay.testing import start_transit_relay
    r = yield start_transit_relay(reactor, port=0,
                                  websocket_port=0 if websocket else None)
    testcase.addCleanup(r.stop)
    return r if websocket else r.hint


class ReferenceTransit:
    """A reference TransitSender/Receiver driven over stdin/stdout."""

    def __init__(self, proto):
        self._proto = proto

    @classmethod
    @defer.inlineCallbacks
    def start(cls, testcase, role, relay=None, no_listen=True):
        argv = [reference_bin("python"), REF_TRANSIT, role, relay or "-",
                "1" if no_listen else "0"]
        self = cls(_spawn(testcase, argv))
        first = yield self.read()
        self.hints = first["hints"]
        return self

    @defer.inlineCallbacks
    def read(self):
        line = yield self._proto.next_line()
        msg = json.loads(line)
        if "error" in msg:
            raise AssertionError(f"reference transit failed: {msg['error']}")
        return msg

    def send(self, obj):
        self._proto.transport.write(json.dumps(obj).encode() + b"\n")

    @defer.inlineCallbacks
    def start_connecting(self, their_hints, key):
        """Give it our hints and the key; fires once its connect() runs."""
        self.send({"hints": their_hints, "key": key.hex()})
        msg = yield self.read()
        assert msg == {"connecting": True}, msg

    def connected(self):
        """Fires when its connect() fired."""
        return self.read()

    def send_record(self, record):
        self.send({"send": record.hex()})

    @defer.inlineCallbacks
    def receive_records(self, n):
        self.send({"receive": n})
        msg = yield self.read()
        return [bytes.fromhex(r) for r in msg["received"]]

    def close(self):
        self.send({"close": True})
        return self.read()


@implementer(interfaces.IConsumer)
class HashingConsumer:
    """Hashes what it gets; pauses its producer every few writes and
    resumes it on the next reactor turn, to exercise flow control."""

    def __init__(self):
        self.hash = hashlib.sha256()
        self.count = 0
        self.pauses = 0
        self.producer = None

    def registerProducer(self, producer, streaming):
        self.producer = producer

    def unregisterProducer(self):
        self.producer = None

    def write(self, data):
        self.hash.update(data)
        self.count += len(data)
        if self.producer is not None and self.count // 1000000 > self.pauses:
            self.pauses += 1
            p = self.producer
            p.pauseProducing()
            reactor.callLater(0, p.resumeProducing)
