"""Our Dilation record path's own CPU, in one process, without sockets or
a reactor: how far each side is above its cipher (docs/performance.md,
"Dilation"). The full bench (bench/dilation_bench.py) moves with the
machine's load; this one, the best of several rounds in one process,
shows a change of a few microseconds a record.

  .venv/bin/python bench/dilation_records.py [--mib 256] [--rounds 5] [--write-kib 64]
        [--src PATH]

Two selected L2 connections (``_connection``) joined in memory; the
sender's side is a SubChannel in "open", our Outbound and the Leader's
connection, its transport a list that is joined and dropped every 256
KiB (``_connection.TRANSPORT_BUFFER``) with the Outbound paused and
resumed around it, as Twisted's TCP transport does, and its queue retired
as ACKs would; the receiver's is the
Follower's connection, the Manager's record dispatch, our Inbound and a
SubChannel whose protocol counts the bytes, fed the sender's bytes in
256 KiB reads. Beside them, ChaCha20-Poly1305 alone over the same Noise
messages (bench/_dilation_floor.py). One line per side:

  records side=send cpu_s_per_gib=... cipher_s_per_gib=... x_cipher=... us_per_record_above=...
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# the sources measured: this checkout's, or --src PATH's (read before
# argparse, as the imports below depend on it)
_SRC = (sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv
        else os.path.join(os.path.dirname(HERE), "src"))
sys.path.insert(0, os.path.abspath(_SRC))
sys.path.insert(0, HERE)

from twisted.internet.protocol import Protocol  # noqa: E402
from twisted.internet.task import Clock  # noqa: E402
from twisted.internet.testing import StringTransport  # noqa: E402
from zope.interface import implementer  # noqa: E402

import _dilation_floor  # noqa: E402
from wormhole._dilation import _interfaces as I  # noqa: E402
from wormhole._dilation._connection import TRANSPORT_BUFFER, DilatedConnectionProtocol  # noqa: E402
from wormhole._dilation._framing import derive_dilation_key  # noqa: E402
from wormhole._dilation._inbound import Inbound  # noqa: E402
from wormhole._dilation._outbound import Outbound  # noqa: E402
from wormhole._dilation._records import Ack, Data  # noqa: E402
from wormhole._dilation._subchannel import SubChannel  # noqa: E402


@implementer(I.IDilationConnector, I.IRecordReceiver)
class Dispatch:
    """The Manager's part of the record path (manager.got_record)."""

    def __init__(self):
        self.inbound = self.outbound = None

    def add_candidate(self, connection):
        pass

    def candidate_lost(self, connection):
        pass

    def connection_lost(self, connection):
        pass

    def got_record(self, connection, record):
        if isinstance(record, Data):
            self.inbound.got_record(record)
        elif isinstance(record, Ack):
            self.outbound.handle_ack(record.resp_seqnum)
        else:
            self.inbound.got_record(record)

    def end_of_batch(self, connection):
        self.inbound.end_of_batch()


class Count(Protocol):
    received = 0

    def dataReceived(self, data):
        self.received += len(data)


@implementer(I.ISubchannelListener)
class Listener:
    def __init__(self, make):
        self.make = make

    def got_open(self, scid, subprotocol):
        return self.make(scid, subprotocol)


class Wire(StringTransport):
    """A transport that keeps what was written as a list of pieces."""

    def __init__(self):
        super().__init__()
        self.pieces = []
        self.held = 0

    def write(self, data):
        self.pieces.append(data)
        self.held += len(data)

    def writeSequence(self, seq):
        for piece in seq:
            self.write(piece)

    def take(self):
        pieces, self.pieces, self.held = self.pieces, [], 0
        return pieces


def pair():
    key = derive_dilation_key(b"\x07" * 32)
    clock = Clock()
    sides = []
    for leader in (True, False):
        d = Dispatch()
        conn = DilatedConnectionProtocol(key, leader, d, clock, description="bench")
        t = StringTransport()
        conn.makeConnection(t)
        sides.append((d, conn, t))
    (dl, lead, tl), (df, f, tf) = sides

    def pump():
        while tl.value() or tf.value():
            a, b = tl.value(), tf.value()
            tl.clear()
            tf.clear()
            if a:
                f.dataReceived(a)
            if b:
                lead.dataReceived(b)
    pump()
    lead.select(dl)
    pump()
    f.select(df)
    # from here on each side writes into a list of pieces
    wl, wf = Wire(), Wire()
    lead.transport, f.transport = wl, wf
    return clock, (dl, lead, wl), (df, f, wf)


def joined(mib, write_kib):
    """A sender, a receiver and a function that writes ``mib`` MiB on the
    sender's subchannel, handing each buffer-full to ``out``."""
    clock, (dl, lead, wl), (df, f, wf) = pair()
    eventually = lambda fn: fn()  # noqa: E731 -- a pull producer's turn; unused here
    out_l, out_f = Outbound(), Outbound()
    in_l, in_f = Inbound(clock=clock), Inbound(clock=clock)
    sink = Count()

    def accept(scid, subprotocol):
        sc = SubChannel(scid, subprotocol, out_f, in_f, lambda _s: None, eventually)
        sc.attach(sink)
        return sc
    in_l.wire(out_l, Listener(accept))
    in_f.wire(out_f, Listener(accept))
    dl.inbound, dl.outbound, df.inbound, df.outbound = in_l, out_l, in_f, out_f
    for out, inb, conn in ((out_l, in_l, lead), (out_f, in_f, f)):
        out.use_connection(conn)
        inb.use_connection(conn)
    sc = SubChannel(1, "bench", out_l, in_l, lambda _s: None, eventually)
    out_l.subchannel_opened(sc)
    in_l.register_subchannel(1, sc)
    out_l.send_open(1, "bench")
    sc.attach(Count())
    f.dataReceived(b"".join(wl.take()))
    wf.take()
    block = os.urandom(write_kib * 1024)
    writes = mib * 2 ** 20 // len(block)

    def send(out):
        for _ in range(writes):
            sc.write(block)
            if wl.held > TRANSPORT_BUFFER:
                # what Twisted's transport does per buffer-full: pause the
                # producer, join what was written, send it, resume
                out_l.pauseProducing()
                out(b"".join(wl.take()))
                out_l.resumeProducing()
                # the receiver's ACKs retire the sender's queue
                if out_l.unacked_bytes() > 8 * 2 ** 20:
                    out_l.handle_ack(out_l._next_seqnum - 1)
        out(b"".join(wl.take()))
    return send, f, sink, writes * len(block)


def run(mib, write_kib):
    # the receiver's input, made by an untimed sender first
    send, receiver, sink, size = joined(mib, write_kib)
    wire = []
    send(wire.append)
    stream = b"".join(wire)
    del wire
    reads = [stream[i:i + TRANSPORT_BUFFER] for i in range(0, len(stream), TRANSPORT_BUFFER)]
    del stream
    t0 = time.process_time()
    for r in reads:
        receiver.dataReceived(r)
    recv_cpu = time.process_time() - t0
    if sink.received != size:
        raise SystemExit(f"received {sink.received} of {size} bytes")
    # the sender timed on its own, its buffers dropped as a socket's are
    send, _receiver, _sink, size = joined(mib, write_kib)
    t0 = time.process_time()
    send(len)
    send_cpu = time.process_time() - t0
    scale = 2 ** 30 / size
    return send_cpu * scale, recv_cpu * scale, size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--write-kib", type=int, default=64)
    ap.add_argument("--src", default=_SRC,
                    help="the sources to measure (default: this checkout's src/)")
    args = ap.parse_args()
    best_send = best_recv = float("inf")
    seal = open_ = float("inf")
    for _ in range(args.rounds):
        s, r, _size = run(args.mib, args.write_kib)
        best_send, best_recv = min(best_send, s), min(best_recv, r)
        cs, co = _dilation_floor.cipher_per_gib(args.mib, args.write_kib * 1024)
        seal, open_ = min(seal, cs), min(open_, co)
    per_gib_records = 2 ** 30 / (args.write_kib * 1024)
    for side, cpu, cipher in (("send", best_send, seal), ("recv", best_recv, open_)):
        above = (cpu - cipher) / per_gib_records * 1e6
        print(f"records side={side} write_kib={args.write_kib} cpu_s_per_gib={cpu:.3f} "
              f"cipher_s_per_gib={cipher:.3f} x_cipher={cpu / cipher:.2f} "
              f"us_per_record_above={above:.2f} rounds={args.rounds} src={args.src} "
              f"load={','.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
