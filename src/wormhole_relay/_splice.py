# -*- test-case-name: tests.relay.test_splice -*-
"""Zero-copy forwarding for a pair of TCP clients: Linux ``splice(2)``.

Transit protocol, "Relay Handshake" only asks the relay to copy bytes between the two
connections. Copying them through Python costs a ``recv`` and a ``send``
(two copies, and a few Python calls) per read; ``splice`` moves the pages
socket -> pipe -> socket inside the kernel. One ``Splicer`` serves one
pair: while it runs, both Twisted transports are paused (neither reads
nor writes) and two ``_End`` descriptors of ours sit in the reactor on
the same two file descriptors. When it stops (end of file, an error,
``splice`` refused, or the glue closing or aborting), it takes its
descriptors out of the reactor, resumes the transports and hands any
bytes still in its pipes to the destination transport's ordinary write
buffer, in order: from then on Twisted sees the end of file or the error
itself, and the connection machine closes the pair exactly as on the
plain path.

Per direction (``_Pump``) a pipe holds at most one read: a read from the
source is only attempted once everything before it reached the
destination, so backpressure is the plain path's (a destination that
does not drain stops reading its source). Pipes come from a ``PipePool``
shared by the relay: a direction takes one for a read and gives it back
as soon as the destination took all of it, so only directions whose
destination is full hold a pipe. Pipes count against a per-user kernel
limit (fs.pipe-user-pages-soft, 64 MiB: past it new pipes get 8 KiB), and
two pipes for every pair would reach it at about 128 pairs.

The per-chunk path (``_End.doRead``/``doWrite`` -> ``_Pump``) is plain
method calls; only the life cycle (start, stop) goes through the machine.
"""

import errno
import fcntl
import os
import sys

from automat import MethodicalMachine
from twisted.internet.interfaces import IReactorFDSet, IReadDescriptor, IWriteDescriptor
from twisted.python import log
from zope.interface import implementer

from wormhole._automat_private import trace_hook

from ._interfaces import IPipePool, ISplicer

# bytes per pipe (and so at most per splice call); the kernel may refuse
# to grow a pipe (fs.pipe-max-size, fs.pipe-user-pages-soft) and we then
# keep its default 64 KiB
PIPE_SIZE = 256 * 1024
# past fs.pipe-user-pages-soft an unprivileged user's new pipes get two
# pages; splicing 8 KiB at a time costs more than copying, so a pair that
# cannot get this much goes the plain way
MIN_PIPE_SIZE = 64 * 1024

_FLAGS = getattr(os, "SPLICE_F_NONBLOCK", 0) | getattr(os, "SPLICE_F_MOVE", 0)
_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)


def splice_available(platform=sys.platform):
    """``os.splice`` exists only on Linux with Python >= 3.10."""
    return platform.startswith("linux") and hasattr(os, "splice")


def big_pipe_budget(euid=None, soft_limit_path="/proc/sys/fs/pipe-user-pages-soft"):
    """How many pipes of PIPE_SIZE the relay grows before it keeps the
    kernel's default size (None: no limit). An unprivileged user's pipes
    share fs.pipe-user-pages-soft (16384 pages, 64 MiB): past it every
    new pipe gets two pages. Half of it goes to big pipes, and the other
    half leaves room for 4x as many default ones (64 KiB, 16 pages): with
    many pairs, all of them splice, the first ones faster. root is not
    limited."""
    if (os.geteuid() if euid is None else euid) == 0:
        return None
    try:
        with open(soft_limit_path) as f:
            pages = int(f.read())
    except (OSError, ValueError):
        pages = 16384
    if pages == 0:
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") // 2 // PIPE_SIZE


class _Pipe:
    """One non-blocking pipe, grown to ``size`` when asked (and the kernel
    lets us)."""

    __slots__ = ("r", "w", "size", "big")

    def __init__(self, size, min_size):
        self.r, self.w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.big = False
        if size:
            try:
                fcntl.fcntl(self.w, _SETPIPE_SZ, size)
                self.big = True
            except OSError:
                pass
        self.size = fcntl.fcntl(self.w, _GETPIPE_SZ)
        if self.size < min_size:
            self.close()
            raise OSError(errno.ENOBUFS, f"pipe of {self.size} bytes only "
                          f"(fs.pipe-user-pages-soft reached?)")

    def close(self):
        os.close(self.r)
        os.close(self.w)


@implementer(IPipePool)
class PipePool:
    """Empty pipes for every Splicer of one relay (at most ``keep`` kept
    idle; the rest are closed when given back). ``get`` raises OSError
    when the kernel gives a pipe smaller than ``min_size``: the Splicer
    that asked then hands its pair to the plain path."""

    def __init__(self, size=PIPE_SIZE, keep=16, min_size=MIN_PIPE_SIZE,
                 max_big=None):
        self._size = size
        self._min_size = min_size
        self._keep = keep
        self._max_big = max_big  # big_pipe_budget()
        self._big = 0  # grown pipes alive
        self._idle = []
        self._closed = False

    def get(self):
        if self._idle:
            return self._idle.pop()
        grow = self._max_big is None or self._big < self._max_big
        pipe = _Pipe(self._size if grow else 0, self._min_size)
        self._big += pipe.big
        return pipe

    def put(self, pipe):
        """``pipe`` must be empty."""
        if self._closed or len(self._idle) >= self._keep:
            self.discard(pipe)
        else:
            self._idle.append(pipe)

    def discard(self, pipe):
        """Close a pipe of ours."""
        self._big -= pipe.big
        pipe.close()

    def idle(self):
        """How many empty pipes wait here."""
        return len(self._idle)

    def close(self):
        """Close the idle pipes; pipes given back later are closed too."""
        self._closed = True
        idle, self._idle = self._idle, []
        for pipe in idle:
            self.discard(pipe)


class _Pump:
    """One direction: source socket -> pipe -> destination socket.

    ``_owed`` is what the destination must get before anything still in
    the pipe: bytes written to it from user space (the ``ok\\n``)."""

    def __init__(self, splicer, source, dest, count, pool):
        self._splicer = splicer
        self.source = source
        self.dest = dest
        self._count = count
        self._pool = pool
        self._pipe = None  # only while it holds bytes
        self._pending = 0  # bytes in the pipe
        self._owed = b""

    # the hot path

    def readable(self):
        # called only when everything before reached the destination,
        # so we hold no pipe
        pipe = self._pool.get()
        try:
            n = os.splice(self.source.fd, pipe.w, pipe.size, flags=_FLAGS)
        except BlockingIOError:
            self._pool.put(pipe)
            return
        except BaseException:
            self._pool.put(pipe)  # nothing went in
            raise
        if n == 0:
            # end of file: Twisted will read it again once resumed
            self._pool.put(pipe)
            self._splicer.stop()
            return
        self._pipe = pipe
        self._pending = n
        self._count(n)
        self._push()

    def writable(self):
        self._push()

    def _push(self):
        if self._flush():
            self.dest.stop_writing()
            self.source.start_reading()
        else:
            # backpressure: read no more until the destination drains
            self.source.stop_reading()
            self.dest.start_writing()

    def _flush(self):
        """Everything owed, then the pipe, to the destination; True when
        all of it went (and the pipe is back in the pool)."""
        fd = self.dest.fd
        try:
            while self._owed:
                n = os.write(fd, self._owed)
                self._owed = self._owed[n:]
            while self._pending:
                n = os.splice(self._pipe.r, fd, self._pending, flags=_FLAGS)
                self._pending -= n
        except BlockingIOError:
            return False
        if self._pipe is not None:
            pipe, self._pipe = self._pipe, None
            self._pool.put(pipe)
        return True

    # the life cycle

    def owe(self, data):
        """User-space bytes for the destination, after what the pipe holds
        (drained to user space so the order is kept)."""
        self._owed += self._drain() + data

    def start(self):
        self._push()

    def _drain(self):
        """What the pipe holds, as bytes; the pipe goes back to the pool."""
        out = []
        pipe, self._pipe = self._pipe, None
        if pipe is None:
            return b""
        try:
            while self._pending:
                chunk = os.read(pipe.r, self._pending)
                if not chunk:
                    break
                self._pending -= len(chunk)
                out.append(chunk)
        except BaseException:
            self._pool.discard(pipe)
            raise
        self._pending = 0
        self._pool.put(pipe)
        return b"".join(out)

    def hand_back(self):
        """What is still ours for the destination: owed, then the pipe."""
        data = self._owed + self._drain()
        self._owed = b""
        return data


@implementer(IReadDescriptor, IWriteDescriptor)
class _End:
    """One socket of the pair, as the reactor sees it while we splice:
    readable feeds the pump away from it, writable drains the pump into
    it. It registers itself only for what a pump is waiting for."""

    def __init__(self, splicer, reactor, transport):
        self._splicer = splicer
        self._reactor = reactor
        self.transport = transport
        self.fd = transport.fileno()
        self.outgoing = None
        self.incoming = None
        self._reading = False
        self._writing = False
        # False once handed back: the reactor may still deliver the rest of
        # an epoll event (read, then write) that it collected before, and
        # the transport owns the fd again
        self._live = True

    def fileno(self):
        return self.fd

    def logPrefix(self):
        return "RelaySplice"

    def doRead(self):
        if not self._live:
            return
        try:
            self.outgoing.readable()
        except OSError as e:
            self._splicer.failed(e)

    def doWrite(self):
        if not self._live:
            return
        try:
            self.incoming.writable()
        except OSError as e:
            self._splicer.failed(e)

    def connectionLost(self, reason):
        # the reactor saw a hang-up or error on our fd (and took us out)
        self._reading = self._writing = False
        self._splicer.stop()

    def detach(self):
        """Out of the reactor for good."""
        self.stop_reading()
        self.stop_writing()
        self._live = False

    def start_reading(self):
        if self._live and not self._reading:
            self._reading = True
            self._reactor.addReader(self)

    def stop_reading(self):
        if self._reading:
            self._reading = False
            self._reactor.removeReader(self)

    def start_writing(self):
        if self._live and not self._writing:
            self._writing = True
            self._reactor.addWriter(self)

    def stop_writing(self):
        if self._writing:
            self._writing = False
            self._reactor.removeWriter(self)


@implementer(ISplicer)
class Splicer:
    """Splices the bytes of two paired TCP transports both ways.

    ``count(nbytes)`` is told every byte read from either client (the
    pair's usage record); ``pipes`` is the relay's PipePool."""

    _machine = MethodicalMachine()
    set_trace = trace_hook(_machine)

    def __init__(self, reactor, transport_a, transport_b, count, pipes):
        self._reactor = IReactorFDSet(reactor)
        self._transports = (transport_a, transport_b)
        self._count = count
        self._pool = IPipePool(pipes)
        self._ends = None
        self._pumps = {}  # destination transport -> its pump
        self.error = None  # why we stopped, when it was an error

    # --- states

    @_machine.state(initial=True)
    def idle(self):
        "made; the transports still run as usual"

    @_machine.state()
    def splicing(self):
        "the transports are paused; our descriptors move the bytes"

    @_machine.state()
    def stopped(self):
        "handed back: the transports run as usual again"

    # --- inputs

    @_machine.input()
    def start(self):
        "take over both sockets (their write buffers must be empty)"

    @_machine.input()
    def write(self, transport, data):
        "user-space bytes for one client (from the connection's glue)"

    @_machine.input()
    def stop(self):
        "end of file, an error, or the glue closing: hand back"

    # --- outputs

    @_machine.output()
    def _take_over(self):
        a, b = self._transports
        ea = _End(self, self._reactor, a)
        eb = _End(self, self._reactor, b)
        self._ends = (ea, eb)
        ab = _Pump(self, ea, eb, self._count, self._pool)
        ba = _Pump(self, eb, ea, self._count, self._pool)
        ea.outgoing = eb.incoming = ab
        eb.outgoing = ea.incoming = ba
        self._pumps = {b: ab, a: ba}
        for t in self._transports:
            # nothing was written to either before ok (the machine writes
            # ok after starting us), so their buffers are empty
            t.stopReading()
            t.stopWriting()
        try:
            ab.start()
            ba.start()
        except OSError as e:
            self.failed(e)

    @_machine.output()
    def _owe(self, transport, data):
        pump = self._pumps[transport]
        pump.owe(data)
        try:
            pump.start()
        except OSError as e:
            self.failed(e)

    @_machine.output()
    def _write_through(self, transport, data):
        transport.write(data)

    @_machine.output()
    def _hand_back(self):
        # out of the reactor before the transports go back in: the reactor
        # knows descriptors by fd, and both use the same two
        for end in self._ends:
            end.detach()
        # resume reading before writing what we held: a big write pauses
        # the writer's partner (its registered producer), and that pause
        # must win
        for t in self._transports:
            t.startReading()
        for t, pump in self._pumps.items():
            data = pump.hand_back()
            if data:
                t.write(data)

    @_machine.output()
    def _ignore(self):
        pass

    # --- not inputs: what the hot path calls

    def failed(self, error):
        """``splice``, a write, or getting a pipe failed. EINVAL means
        this kernel cannot splice these descriptors, ENOBUFS/EMFILE/ENFILE
        that we got no (big enough) pipe: the plain path takes over and
        nothing was moved. Anything else (a reset, a broken pipe) Twisted
        will find again on the socket once it reads it."""
        if error.errno in (errno.EINVAL, errno.ENOBUFS, errno.EMFILE,
                           errno.ENFILE):
            # cannot splice (this kernel, or out of pipes): nothing moved
            log.msg(f"relay: cannot splice ({error}), copying this pair")
        else:
            self.error = error
        self.stop()

    # --- transitions

    idle.upon(start, enter=splicing, outputs=[_take_over])
    idle.upon(write, enter=idle, outputs=[_write_through])
    idle.upon(stop, enter=stopped, outputs=[_ignore])

    splicing.upon(write, enter=splicing, outputs=[_owe])
    splicing.upon(stop, enter=stopped, outputs=[_hand_back])

    stopped.upon(write, enter=stopped, outputs=[_write_through])
    stopped.upon(start, enter=stopped, outputs=[_ignore])
    stopped.upon(stop, enter=stopped, outputs=[_ignore])
