"""A victim process for the hostile tests: our library, alone in its own
process, so that its peak memory (VmHWM in /proc/PID/status) measures
what a hostile peer made it keep.

Usage: python -m tests.hostile._library_victim MODE KEY_HEX
MODE ``dilation``: listen on 127.0.0.1 as a Dilation Leader (the
  DilatedConnectionProtocol the Connector puts on every inbound
  connection); prints {"port": N}, then one {"dropped": why} line per
  connection it drops.
MODE ``transit``: a TransitReceiver listening on 127.0.0.1 that connects
  and consumes an expected 1 MB file; prints {"hints": [...]}, then
  {"error": why} or {"received": n}.
Lines are JSON; the process runs until it is stopped.
"""

import json
import sys

from twisted.internet import defer, protocol, task
from twisted.python import log
from zope.interface import implementer

from wormhole._dilation import _interfaces as I
from wormhole._dilation._connection import DilatedConnectionProtocol


def out(obj):
    print(json.dumps(obj), flush=True)


@implementer(I.IDilationConnector)
class _NoConnector:
    def add_candidate(self, connection):
        out({"candidate": connection.description})

    def candidate_lost(self, connection):
        pass


class _DilationFactory(protocol.Factory):
    def __init__(self, key, reactor):
        self._key, self._reactor = key, reactor

    def buildProtocol(self, addr):
        return DilatedConnectionProtocol(self._key, True, _NoConnector(), self._reactor,
                                         description=f"<-tcp:{addr.port}")


def _report_drops(event):
    text = log.textFromEventDict(event) or ""
    if "dropped" in text:
        out({"dropped": text})


@defer.inlineCallbacks
def dilation(reactor, key):
    log.addObserver(_report_drops)
    from twisted.internet.endpoints import TCP4ServerEndpoint
    port = yield TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(
        _DilationFactory(key, reactor))
    out({"port": port.getHost().port})
    yield defer.Deferred()  # until stopped


class _Count:
    def __init__(self):
        self.n = 0

    def registerProducer(self, producer, streaming):
        pass

    def unregisterProducer(self):
        pass

    def write(self, data):
        self.n += len(data)


@defer.inlineCallbacks
def transit(reactor, key):
    from wormhole.transit import TransitReceiver
    t = TransitReceiver(None, reactor=reactor, listen_addresses=["127.0.0.1"])
    hints = yield t.get_connection_hints()
    t.set_transit_key(key)
    out({"hints": hints})
    try:
        pipe = yield t.connect()
        count = _Count()
        yield pipe.connectConsumer(count, expected=1000000)
        out({"received": count.n})
    except Exception as e:  # noqa: BLE001 -- reported to the test, which asserts on it
        out({"error": f"{type(e).__name__}: {e}"})
    yield defer.Deferred()  # until stopped


def main(reactor, mode, key_hex):
    key = bytes.fromhex(key_hex)
    return {"dilation": dilation, "transit": transit}[mode](reactor, key)


if __name__ == "__main__":
    task.react(main, sys.argv[1:3])
