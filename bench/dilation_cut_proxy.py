"""A TCP proxy for bench/dilation_bench.py --cuts: forwards 127.0.0.1:LISTEN
to 127.0.0.1:TARGET and, once data flows, aborts every connection through
it COUNT times, INTERVAL seconds apart. Prints {"port": ...} when
listening and {"cut": time.time()} at each cut. Uses our venv's Twisted;
not imported by the project."""

import json
import sys
import time

from twisted.internet import protocol, reactor


def out(obj):
    print(json.dumps(obj), flush=True)


class Back(protocol.Protocol):
    def connectionMade(self):
        self.front.back = self
        for d in self.front.pending:
            self.transport.write(d)
        self.front.pending = []

    def dataReceived(self, data):
        self.front.transport.write(data)

    def connectionLost(self, reason):
        self.front.transport.loseConnection()


class Front(protocol.Protocol):
    def connectionMade(self):
        self.back, self.pending = None, []
        LIVE.add(self)
        f = protocol.ClientFactory()
        f.buildProtocol = lambda addr: _back(self)
        reactor.connectTCP("127.0.0.1", TARGET, f)

    def dataReceived(self, data):
        STATE["bytes"] += len(data)
        if STATE["bytes"] > 4 << 20 and not STATE["started"]:
            STATE["started"] = True
            reactor.callLater(INTERVAL, cut)
        if self.back is None:
            self.pending.append(data)
        else:
            self.back.transport.write(data)

    def connectionLost(self, reason):
        LIVE.discard(self)
        if self.back is not None:
            self.back.transport.loseConnection()


def _back(front):
    b = Back()
    b.front = front
    return b


def cut():
    out({"cut": time.time(), "bytes_so_far": STATE["bytes"]})
    for f in list(LIVE):
        f.transport.abortConnection()
        if f.back is not None:
            f.back.transport.abortConnection()
    STATE["cuts"] += 1
    if STATE["cuts"] < COUNT:
        reactor.callLater(INTERVAL, cut)


LIVE = set()
STATE = {"bytes": 0, "started": False, "cuts": 0}
TARGET, COUNT, INTERVAL = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
f = protocol.Factory.forProtocol(Front)
port = reactor.listenTCP(0, f, interface="127.0.0.1")
out({"port": port.getHost().port})
reactor.run()
