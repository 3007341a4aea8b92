"""``tests/cli/_gate.py``'s Gate as a process of its own, for peers in a
network namespace, which a test's in-process gate cannot reach
(tests/files/test_cancel_william.py).

Run as ``python -m tests.files._half_gate LISTEN_PORT RELAY_PORT LIMIT``
from the repository's root (127.0.0.1 only). It prints ``gate starting
on PORT`` once it listens and ``gate reached N`` once it holds a
connection at LIMIT bytes towards the relay; the line ``release`` on
its stdin forwards everything again, the held bytes first.
"""
import sys

from twisted.internet import stdio
from twisted.protocols.basic import LineReceiver

from ..cli._gate import Gate


class _Commands(LineReceiver):
    delimiter = b"\n"

    def __init__(self, gate):
        self.gate = gate

    def lineReceived(self, line):
        if line.strip() == b"release":
            self.gate.release()


def main(argv):
    from twisted.internet import reactor

    listen_port, relay_port, limit = (int(a) for a in argv[1:4])
    gate = Gate(reactor, relay_port, limit)
    gate.reached.addCallback(lambda n: print(f"gate reached {n}", flush=True))
    port = reactor.listenTCP(listen_port, gate, interface="127.0.0.1")
    stdio.StandardIO(_Commands(gate))
    print(f"gate starting on {port.getHost().port}", flush=True)
    reactor.run()


if __name__ == "__main__":
    main(sys.argv)
