"""Our wormhole dilating with a reference 0.24 peer, inside a network
namespace that has only loopback (run by test_interop under ``unshare -n``;
the reference advertises every local address, which here is 127.0.0.1).

Usage (inside the namespace):
  python -m tests.dilation.netns_interop ROLE RELAY [ping]
ROLE: leader|follower (ours); RELAY: none (direct only), ours (our
Transit relay offered too), only (both sides no_listen: every byte goes
through our relay), ref-only (the same through the reference relay 0.5).
ping: both sides dilate with ping_interval=0.5 and the run lasts 3 s
longer; "generation" in the result shows whether anyone reconnected.
idle: only our side dilates with ping_interval=0.5 (our keepalive ticks
every 0.5 s and drops a peer silent for 1 s; the reference keeps its
default 30 s, so its Leader does not PING during the run and its Follower
never does) and the run idles 5 s: "generation" says whether our silence
check dropped a healthy, idle connection.
Prints one JSON line: {"ok": true, ...} or {"ok": false, "error": ...}.
"""

import hashlib
import json
import os
import sys

from twisted.internet import defer, protocol, task

import wormhole
from wormhole_mailbox.testing import start_mailbox_server

from ._support import run_cleanups, spawn_reference_peer

APPID = "example.com/dilation-interop"


class Collect(protocol.Protocol):
    def connectionMade(self):
        self.buf = []
        self.factory.made.append(self)

    def dataReceived(self, data):
        self.buf.append(data)
        if (self.factory.want and sum(map(len, self.buf)) >= self.factory.want
                and not self.factory.enough.called):
            self.factory.enough.callback(b"".join(self.buf))

    def connectionLost(self, reason):
        if not self.factory.lost.called:
            self.factory.lost.callback(b"".join(self.buf))


def factory(want=None):
    f = protocol.Factory.forProtocol(Collect)
    f.made, f.want = [], want
    f.enough, f.lost = defer.Deferred(), defer.Deferred()
    return f


class _Cleanups:
    """Enough of a TestCase for tests.transit._support helpers."""

    def __init__(self, cleanups):
        self._cleanups = cleanups

    def addCleanup(self, f, *args):
        self._cleanups.append(lambda: f(*args))


@defer.inlineCallbacks
def exchange(reactor, role, relay_mode, ping=None):
    cleanups = []
    result = {"ok": False}
    try:
        srv = yield start_mailbox_server(reactor)
        cleanups.append(srv.stop)
        relay = None
        if relay_mode in ("ours", "only"):
            from wormhole_relay.testing import start_transit_relay
            r = yield start_transit_relay(reactor, port=0)
            cleanups.append(r.stop)
            relay = r.hint
        elif relay_mode == "ref-only":
            from tests.transit._support import start_reference_relay
            relay = yield start_reference_relay(_Cleanups(cleanups))
        no_listen = relay_mode in ("only", "ref-only")
        ping_interval = 0.5 if ping in ("ping", "idle") else None
        ref_ping = 0.5 if ping == "ping" else None
        peer = spawn_reference_peer(reactor, srv.url, "-", relay or "-", no_listen,
                                    ref_ping)
        cleanups.append(peer.stop)
        msg = yield peer.read()
        code = msg["code"]
        w = wormhole.create(APPID, srv.url, reactor, dilation=True,
                            _dilation_side=("f" if role == "leader" else "0") * 16)
        w.set_code(code)
        kw = {"_listen_addresses": ["127.0.0.1"], "no_listen": no_listen,
              "ping_interval": ping_interval}
        if relay:
            kw["transit_relay_location"] = relay
        dw = w.dilate(**kw)
        hello = factory()
        yield dw.listener_for("hello").listen(hello)
        payload = b"to the reference " + os.urandom(200000)
        echo = factory(want=len(payload))
        p = yield dw.connector_for("echo").connect(echo)
        result["our_scid"] = p.transport.getPeer().scid
        p.transport.write(payload)
        back = yield echo.enough
        result["via"] = w._dilator._manager._connection.description
        result["echo_ok"] = back == payload
        info = yield peer.read()
        got = yield hello.lost
        result["hello_ok"] = (hashlib.sha256(got).hexdigest() == info["hello_sha256"]
                              and len(got) == info["hello_len"])
        result["their_scid"] = hello.made[0].transport.getPeer().scid
        if ping:
            from twisted.internet.task import deferLater
            # six ping intervals; idle: five silence periods
            yield deferLater(reactor, 3.0 if ping == "ping" else 5.0, lambda: None)
        result["generation"] = w._dilator._manager._generation
        result["pings_answered"] = w._dilator._manager._pings_answered
        p.transport.loseConnection()
        yield echo.lost
        msg = yield peer.read()
        result["their_echo_closed"] = msg == {"echo_closed": True}
        msg = yield peer.read()
        result["their_close"] = msg.get("closed")
        result["our_close"] = yield w.close()
        result["ok"] = True
    except Exception as e:  # noqa: BLE001 -- reported to the test, which fails on it
        result["error"] = f"{type(e).__name__}: {e}"
    finally:
        yield run_cleanups(cleanups, result)
    return result


def main(reactor, role, relay_mode, ping=None):
    d = exchange(reactor, role, relay_mode, ping)
    d.addCallback(lambda result: print(json.dumps(result), flush=True))
    return d


if __name__ == "__main__":
    task.react(main, sys.argv[1:4])
