"""What the reference 0.24 does with OPENs whose subchannel id breaks
the rule of Dilation protocol, "L5 subchannels" (id 0, or the other side's parity): run by
test_dilation_reference inside a loopback-only network namespace
(``unshare -n``; the reference advertises every local address).

We lead (side ffff...), so our ids should be odd; we open two subchannels
to the reference's "echo" listener (tests/dilation/ref_peer.py) with ids 0
and 2 instead, write a probe on each, and report what came back on each:
"echoed" (accepted), "closed" (refused with a CLOSE), or "nothing" within
10 s. Prints one JSON line: {"ok": true, "id0": ..., "id2": ...} or
{"ok": false, "error": ...}.
"""

import json

from twisted.internet import defer, protocol, task

import wormhole
from wormhole_mailbox.testing import start_mailbox_server

from ..dilation._support import run_cleanups, spawn_reference_peer

APPID = "example.com/dilation-interop"
PROBE = b"is this id accepted?"


class Probe(protocol.Protocol):
    def connectionMade(self):
        self.outcome = defer.Deferred()
        self.got = b""
        self.transport.write(PROBE)

    def dataReceived(self, data):
        self.got += data
        if self.got == PROBE and not self.outcome.called:
            self.outcome.callback("echoed")

    def connectionLost(self, reason):
        if not self.outcome.called:
            self.outcome.callback("closed")


@defer.inlineCallbacks
def observe(reactor):
    cleanups = []
    result = {"ok": False}
    try:
        srv = yield start_mailbox_server(reactor)
        cleanups.append(srv.stop)
        peer = spawn_reference_peer(reactor, srv.url, "-", "-", False)
        cleanups.append(peer.stop)
        code = (yield peer.read())["code"]
        w = wormhole.create(APPID, srv.url, reactor, dilation=True)
        w._dilator._forced_side = "f" * 16
        w.set_code(code)
        dw = w.dilate(_listen_addresses=["127.0.0.1"])
        yield dw.listener_for("hello").listen(protocol.Factory.forProtocol(protocol.Protocol))
        registry = w._dilator._registry
        probes = {}
        for scid in (0, 2):
            registry._allocate_scid = lambda scid=scid: scid
            probes[scid] = yield dw.connector_for("echo").connect(
                protocol.Factory.forProtocol(Probe))
        for scid, p in probes.items():
            timer = reactor.callLater(10, lambda p=p: p.outcome.called
                                      or p.outcome.callback("nothing"))
            result[f"id{scid}"] = yield p.outcome
            if timer.active():
                timer.cancel()
        for p in probes.values():
            p.transport.loseConnection()
        yield w.close()
        result["ok"] = True
    except Exception as e:  # noqa: BLE001 -- reported to the test, which fails on it
        result["error"] = f"{type(e).__name__}: {e}"
    finally:
        yield run_cleanups(cleanups, result)
    return result


def main(reactor):
    return observe(reactor).addCallback(lambda r: print(json.dumps(r), flush=True))


if __name__ == "__main__":
    task.react(main)
