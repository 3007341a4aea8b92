"""A reference Transit peer, run ONLY by the reference venv's python.

Usage: ref_transit.py ROLE RELAY NO_LISTEN
  ROLE       sender | receiver
  RELAY      the relay hint string ("tcp:127.0.0.1:PORT"), or "-" for none
  NO_LISTEN  1 to never listen (the reference advertises every interface
             it finds, and our tests must only touch 127.0.0.1), 0 otherwise

Line protocol on stdin/stdout, one JSON object per line, so the test (our
process) drives it without importing it:
  out {"hints": [...]}                      our hints, once, at start
  in  {"hints": [...], "key": HEX}          the peer's hints and the key
  out {"connecting": true}                  connect() was called
  out {"connected": true}                   ...and fired
  in  {"send": HEX}                         send one record
  in  {"receive": N}                        receive N records
  out {"received": [HEX, ...]}              ...and report them
  in  {"close": true}                       close and exit
  out {"error": "..."}                      on any failure
"""
import json
import sys
from binascii import hexlify, unhexlify

from twisted.internet import defer, reactor
from twisted.internet.stdio import StandardIO
from twisted.protocols.basic import LineReceiver

from wormhole.transit import TransitReceiver, TransitSender

_stdio = []


def emit(obj):
    # once StandardIO owns fd 1 it is non-blocking: write through it,
    # or a big line would be cut short
    line = json.dumps(obj) + "\n"
    if _stdio:
        _stdio[0].transport.write(line.encode())
    else:
        sys.stdout.write(line)
        sys.stdout.flush()


class Driver(LineReceiver):
    delimiter = b"\n"
    MAX_LENGTH = 2 ** 30

    def __init__(self, transit):
        self.transit = transit
        self.pipe = None
        self.queue = defer.succeed(None)

    def lineReceived(self, line):
        cmd = json.loads(line)
        self.queue.addCallback(lambda _: self.run(cmd))
        self.queue.addErrback(self.failed)

    def failed(self, f):
        emit({"error": str(f.value)})
        self.transport.loseConnection()

    @defer.inlineCallbacks
    def run(self, cmd):
        if "hints" in cmd:
            self.transit.add_connection_hints(cmd["hints"])
            self.transit.set_transit_key(unhexlify(cmd["key"]))
            d = self.transit.connect()
            # the reference drops inbound connections that arrive before it
            # has the key: tell the test when it is safe to dial us
            emit({"connecting": True})
            self.pipe = yield d
            emit({"connected": True})
        elif "send" in cmd:
            self.pipe.send_record(unhexlify(cmd["send"]))
        elif "receive" in cmd:
            got = []
            for _ in range(cmd["receive"]):
                r = yield self.pipe.receive_record()
                got.append(hexlify(r).decode())
            emit({"received": got})
        elif "close" in cmd:
            yield self.pipe.close()
            emit({"closed": True})
            # flush stdout first; connectionLost then stops the reactor
            self.transport.loseConnection()

    def connectionLost(self, reason):
        if reactor.running:
            reactor.stop()


@defer.inlineCallbacks
def main():
    role, relay, no_listen = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    cls = TransitSender if role == "sender" else TransitReceiver
    t = cls(None if relay == "-" else relay, no_listen=no_listen,
            reactor=reactor)
    hints = yield t.get_connection_hints()
    emit({"hints": hints})
    driver = Driver(t)
    _stdio.append(driver)
    StandardIO(driver)


reactor.callWhenRunning(main)
reactor.run()
