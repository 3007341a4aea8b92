"""A reference (magic-wormhole 0.24) Dilation peer, run ONLY by the
reference's own interpreter ($WORMHOLE_REFERENCE_VENV/bin/python), never
imported by our tests. It uses the reference's public API only.

Usage: ref_peer.py MAILBOX_URL CODE|- RELAY|- NO_LISTEN(0/1) [PING_INTERVAL]

It dilates, listens for subprotocol "echo" (echoes every message back) and
opens a subchannel for "hello" on which it writes one blob and closes. It
prints JSON lines: {"code": ...} (when it allocated), {"hello_sha256": ...,
"hello_len": ...}, {"echo_closed": true}, {"closed": ...}; {"error": ...}
on failure. It closes its wormhole once our side closed the echo channel.
"""

import hashlib
import json
import os
import sys

from twisted.internet import defer, protocol, task

import wormhole

APPID = "example.com/dilation-interop"


def out(obj):
    print(json.dumps(obj), flush=True)


class Echo(protocol.Protocol):
    def dataReceived(self, data):
        self.transport.write(data)

    def connectionLost(self, reason):
        out({"echo_closed": True})
        if not self.factory.done.called:
            self.factory.done.callback(None)


@defer.inlineCallbacks
def main(reactor, url, code, relay, no_listen, ping_interval=None):
    try:
        w = wormhole.create(APPID, url, reactor, dilation=True)
        if code == "-":
            w.allocate_code()
            code = yield w.get_code()
            out({"code": code})
        else:
            w.set_code(code)
        kw = {"no_listen": no_listen == "1"}
        if relay != "-":
            kw["transit_relay_location"] = relay
        if ping_interval is not None:
            kw["ping_interval"] = float(ping_interval)
        dw = w.dilate(**kw)
        ef = protocol.Factory.forProtocol(Echo)
        ef.done = defer.Deferred()
        yield dw.listener_for("echo").listen(ef)
        p = yield dw.connector_for("hello").connect(protocol.Factory.forProtocol(protocol.Protocol))
        blob = b"hello from the reference " + os.urandom(300000)
        p.transport.write(blob)
        out({"hello_sha256": hashlib.sha256(blob).hexdigest(), "hello_len": len(blob)})
        p.transport.loseConnection()
        yield ef.done
        result = yield w.close()
        out({"closed": repr(result)})
    except Exception as e:  # noqa: BLE001 -- reported to the test, which fails on it
        out({"error": f"{type(e).__name__}: {e}"})


if __name__ == "__main__":
    task.react(main, sys.argv[1:6])
