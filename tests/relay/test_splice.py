"""The Splicer (relay/_splice.py) on real loopback TCP sockets, driven by
hand through a MemoryReactor: no reactor runs, no time passes. Each test
plays the reactor (calls doRead/doWrite on the registered descriptors) and
the two clients (plain blocking or non-blocking sockets)."""

import errno
import os
import select
import socket

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.internet.interfaces import IReadDescriptor, IWriteDescriptor
from twisted.internet.testing import MemoryReactor
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole_relay._interfaces import IPipePool, ISplicer
from wormhole_relay._splice import PIPE_SIZE, PipePool, Splicer, big_pipe_budget, splice_available

if not splice_available():  # pragma: no cover - the CI is Linux
    skip = "splice(2) is Linux only"


def tcp_pair():
    """(client, relay side) of one loopback TCP connection."""
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    client = socket.create_connection(lst.getsockname())
    server, _ = lst.accept()
    lst.close()
    server.setblocking(False)  # as Twisted's transports are
    return client, server


class FakeTransport:
    """The part of a Twisted TCP transport the Splicer uses."""

    def __init__(self, name, sock, events):
        self.name = name
        self.sock = sock
        self.events = events
        self.written = b""

    def fileno(self):
        return self.sock.fileno()

    def stopReading(self):
        self.events.append((self.name, "stopReading"))

    def startReading(self):
        self.events.append((self.name, "startReading"))

    def stopWriting(self):
        self.events.append((self.name, "stopWriting"))

    def write(self, data):
        self.events.append((self.name, "write", data))
        self.written += data


def settle(*socks):
    """Let loopback deliver: wait, briefly and bounded, until one of
    ``socks`` is readable (the loops go on progress, not on time; on a
    loaded machine the kernel may deliver a little later)."""
    select.select(socks, [], [], 0.05)


def collect(reader, source, have, want):
    """After a hand-back: more bytes from ``reader`` (a client) and the
    bytes still unread in ``source`` (the relay's socket of its partner,
    for Twisted to read), until with ``have`` bytes already accounted for
    they make ``want`` (loopback may still have some in flight)."""
    got = rest = b""
    reader.setblocking(False)
    for _ in range(100):
        if have + len(got) + len(rest) >= want:
            break
        for sock in select.select([reader, source], [], [], 5)[0]:
            try:
                chunk = sock.recv(1 << 20)
            except BlockingIOError:
                continue
            if sock is reader:
                got += chunk
            else:
                rest += chunk
    return got, rest


class Base(unittest.TestCase):
    def setUp(self):
        self.reactor = MemoryReactor()
        self.events = []
        self.counted = []
        self.ca, sa = tcp_pair()
        self.cb, sb = tcp_pair()
        for s in (self.ca, sa, self.cb, sb):
            self.addCleanup(s.close)
        self.ta = FakeTransport("A", sa, self.events)
        self.tb = FakeTransport("B", sb, self.events)
        self.pool = PipePool()
        self.addCleanup(self.pool.close)
        self.s = Splicer(self.reactor, self.ta, self.tb, self.counted.append,
                         self.pool)

    def end(self, transport):
        """Our descriptor for ``transport``'s socket, wherever it is
        registered."""
        for d in self.reactor.readers | self.reactor.writers:
            if d.fileno() == transport.fileno():
                return d
        self.fail(f"nothing registered for {transport.name}")

    def fill_until_b_is_full(self):
        """With small socket buffers on B's side, start the Splicer and
        send from A's client until the Splicer stops reading A (B's client
        reads nothing); the bytes sent."""
        self.cb.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        self.tb.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
        self.s.start()
        self.ca.setblocking(False)
        sent = b""
        block = os.urandom(65536)
        # the last thing done is the read that made the Splicer pause:
        # nothing is sent into A's socket after it
        for _ in range(10000):
            if not self.reading(self.ta):
                break
            try:
                sent += block[:self.ca.send(block)]
            except BlockingIOError:
                settle(self.ta.sock)
            self.end(self.ta).doRead()
        return sent

    def reading(self, transport):
        return any(d.fileno() == transport.fileno()
                   for d in self.reactor.readers)

    def writing(self, transport):
        return any(d.fileno() == transport.fileno()
                   for d in self.reactor.writers)

    def pump_until(self, transport, client, n):
        """Play the reactor: doRead on ``transport``'s end until ``client``
        (the other side's client) has received ``n`` bytes."""
        got = b""
        client.setblocking(False)
        for _ in range(10000):
            if self.reading(transport):
                self.end(transport).doRead()
            try:
                got += client.recv(1 << 20)
            except BlockingIOError:
                settle(client, transport.sock)
            if len(got) >= n:
                return got
        self.fail(f"only {len(got)} of {n} bytes arrived")


class Lifecycle(Base):
    def test_provides(self):
        """The Splicer provides ISplicer, the pool IPipePool; the Splicer's
        ends are read and write descriptors."""
        verifyObject(ISplicer, self.s)
        verifyObject(IPipePool, self.pool)
        self.s.start()
        end = self.end(self.ta)
        verifyObject(IReadDescriptor, end)
        verifyObject(IWriteDescriptor, end)
        self.s.stop()

    def test_start_pauses_transports(self):
        """start() pauses both transports (neither reads nor writes) and
        puts our descriptors in the reactor, reading both sockets."""
        self.s.start()
        self.assertEqual(sorted(self.events),
                         [("A", "stopReading"), ("A", "stopWriting"),
                          ("B", "stopReading"), ("B", "stopWriting")])
        self.assertTrue(self.reading(self.ta))
        self.assertTrue(self.reading(self.tb))
        self.assertEqual(self.reactor.writers, set())
        self.s.stop()

    def test_stop_hands_back(self):
        """stop() takes our descriptors out of the reactor and resumes
        reading on both transports; a second stop does nothing."""
        self.s.start()
        del self.events[:]
        self.s.stop()
        self.assertEqual(self.reactor.readers | self.reactor.writers, set())
        self.assertEqual(sorted(self.events),
                         [("A", "startReading"), ("B", "startReading")])
        self.s.stop()
        self.assertEqual(len(self.events), 2)

    def test_write_before_start_and_after_stop(self):
        """Before start and after stop, writes go to the transport."""
        self.s.write(self.ta, b"one")
        self.s.start()
        self.s.stop()
        self.s.write(self.tb, b"two")
        self.assertEqual((self.ta.written, self.tb.written),
                         (b"one", b"two"))


class Moving(Base):
    def test_bytes_cross_and_are_counted(self):
        """Bytes from A's client reach B's client through the kernel (not
        through either transport), and every byte is counted."""
        self.s.start()
        self.ca.sendall(b"hello through a pipe")
        got = self.pump_until(self.ta, self.cb, 20)
        self.assertEqual(got, b"hello through a pipe")
        self.assertEqual(sum(self.counted), 20)
        self.assertEqual(self.tb.written, b"")
        self.s.stop()

    def test_both_ways_megabytes(self):
        """A megabyte each way, interleaved, arrives whole and in order."""
        self.s.start()
        data_ab = os.urandom(1 << 20)
        data_ba = os.urandom(1 << 20)
        self.ca.setblocking(False)
        self.cb.setblocking(False)
        got_a = got_b = b""
        sent_a = sent_b = 0
        for _ in range(100000):
            progress = (sent_a, sent_b, len(got_a), len(got_b))
            if sent_a < len(data_ab):
                try:
                    sent_a += self.ca.send(data_ab[sent_a:sent_a + 65536])
                except BlockingIOError:
                    pass
            if sent_b < len(data_ba):
                try:
                    sent_b += self.cb.send(data_ba[sent_b:sent_b + 65536])
                except BlockingIOError:
                    pass
            for d in list(self.reactor.readers):
                if d in self.reactor.readers:
                    d.doRead()
            for d in list(self.reactor.writers):
                if d in self.reactor.writers:
                    d.doWrite()
            for c in (self.ca, self.cb):
                try:
                    chunk = c.recv(1 << 20)
                except BlockingIOError:
                    continue
                if c is self.ca:
                    got_a += chunk
                else:
                    got_b += chunk
            if len(got_a) == len(data_ba) and len(got_b) == len(data_ab):
                break
            if progress == (sent_a, sent_b, len(got_a), len(got_b)):
                settle(self.ca, self.cb, self.ta.sock, self.tb.sock)
        self.assertEqual(got_b, data_ab)
        self.assertEqual(got_a, data_ba)
        self.assertEqual(sum(self.counted), 2 << 20)
        self.s.stop()

    def test_user_space_bytes_first(self):
        """Bytes written through the Splicer (the relay's ok\\n) reach the
        client before anything spliced after them."""
        self.s.start()
        self.s.write(self.tb, b"ok\n")
        self.ca.sendall(b"payload")
        got = self.pump_until(self.ta, self.cb, 10)
        self.assertEqual(got, b"ok\npayload")
        self.s.stop()

    def test_backpressure(self):
        """When B's client does not read, the Splicer stops reading A (and
        waits for B to be writable) once B's socket is full, holding at
        most one pipe; when B reads again, everything arrives in order."""
        sent = self.fill_until_b_is_full()
        self.assertFalse(self.reading(self.ta))
        self.assertTrue(self.writing(self.tb))
        # B reads everything; the Splicer resumes when B drains
        self.cb.setblocking(False)
        got = b""
        for _ in range(100000):
            try:
                got += self.cb.recv(1 << 20)
            except BlockingIOError:
                settle(self.cb, self.ta.sock)
            if self.writing(self.tb):
                self.end(self.tb).doWrite()
            elif self.reading(self.ta):
                self.end(self.ta).doRead()
            if len(got) == len(sent):
                break
        self.assertEqual(got, sent)
        self.assertTrue(self.reading(self.ta))
        self.assertFalse(self.writing(self.tb))
        self.s.stop()


class Ending(Base):
    def test_end_of_file_hands_back(self):
        """When A's client closes, the Splicer hands both transports back
        (Twisted then reads the end of file itself)."""
        self.s.start()
        self.ca.sendall(b"last")
        self.pump_until(self.ta, self.cb, 4)
        self.ca.shutdown(socket.SHUT_WR)
        settle(self.ta.sock)
        self.end(self.ta).doRead()
        self.assertEqual(self.reactor.readers | self.reactor.writers, set())
        self.assertIn(("A", "startReading"), self.events)
        self.assertIn(("B", "startReading"), self.events)
        self.assertIsNone(self.s.error)

    def test_inert_after_stop(self):
        """Once handed back, our descriptors do nothing: the reactor may
        still deliver the rest of an event it collected (a read ended
        the splice, then the same socket was writable), and must not put
        them back in place of the transports."""
        self.s.start()
        ends = list(self.reactor.readers)
        self.ca.sendall(b"data")
        self.cb.sendall(b"data")
        self.s.stop()
        for end in ends:
            end.doRead()
            end.doWrite()
        self.assertEqual(self.reactor.readers | self.reactor.writers, set())
        self.assertEqual(self.counted, [])

    def test_held_bytes_go_to_the_transport_in_order(self):
        """Bytes still held when the Splicer stops (owed from user space,
        then what is in the pipe) are written to the destination transport,
        in order, after it was told to read again."""
        sent = self.fill_until_b_is_full()
        self.s.write(self.tb, b"after")
        self.s.stop()
        writes = [e for e in self.events if e[0] == "B"]
        self.assertEqual(writes[-2], ("B", "startReading"))
        self.assertEqual(writes[-1][1], "write")
        # what B's client got from the kernel, then what the transport
        # holds, then what Twisted will read from A
        got, rest = collect(self.cb, self.ta.sock, len(self.tb.written),
                            len(sent) + 5)
        self.assertEqual(got + self.tb.written + rest, sent + b"after")

    def test_einval_falls_back(self):
        """splice refused with EINVAL (a kernel or socket that cannot
        splice): the Splicer hands back at once, nothing moved, no error
        recorded: the plain path carries on."""
        def refuse(*a, **kw):
            raise OSError(errno.EINVAL, "Invalid argument")
        self.patch(os, "splice", refuse)
        self.s.start()
        self.ca.sendall(b"x")
        self.end(self.ta).doRead()
        self.assertEqual(self.reactor.readers | self.reactor.writers, set())
        self.assertIsNone(self.s.error)
        self.assertEqual(self.counted, [])
        # the byte is still in A's socket, for Twisted to read
        settle(self.ta.sock)
        self.assertEqual(self.ta.sock.recv(10), b"x")

    def test_error_hands_back(self):
        """Any other error (a reset) hands back too, and is kept for the
        logs; Twisted meets it again on the socket."""
        def reset(*a, **kw):
            raise ConnectionResetError(errno.ECONNRESET, "reset")
        self.s.start()
        self.patch(os, "splice", reset)
        self.ca.sendall(b"x")
        self.end(self.ta).doRead()
        self.assertEqual(self.reactor.readers | self.reactor.writers, set())
        self.assertIsInstance(self.s.error, ConnectionResetError)

    def test_reactor_drops_end(self):
        """When the reactor reports a hang-up on one of our descriptors
        (it takes it out and calls connectionLost), the Splicer hands both
        sockets back."""
        self.s.start()
        end = self.end(self.ta)
        self.reactor.removeReader(end)
        end.connectionLost(None)
        self.assertEqual(self.reactor.readers | self.reactor.writers, set())
        self.assertIn(("A", "startReading"), self.events)


class Pool(Base):
    def test_pipe_goes_back_after_a_full_flush(self):
        """A direction takes a pipe from the pool for one read and gives it
        back once the destination took everything: one pipe serves."""
        self.s.start()
        for word in (b"one", b"two", b"three"):
            self.ca.sendall(word)
            self.pump_until(self.ta, self.cb, len(word))
            self.assertEqual(self.pool.idle(), 1)
        self.s.stop()

    def test_blocked_direction_keeps_its_pipe(self):
        """A direction whose destination is full holds its pipe (the bytes
        in it are its) until the destination drains."""
        self.cb.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        self.tb.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
        self.s.start()
        self.ca.setblocking(False)
        block = os.urandom(65536)
        while self.reading(self.ta):
            try:
                self.ca.send(block)
            except BlockingIOError:
                settle(self.ta.sock)
            self.end(self.ta).doRead()
        self.assertEqual(self.pool.idle(), 0)
        self.s.stop()
        # stopping drains it to user space and gives it back
        self.assertEqual(self.pool.idle(), 1)

    def test_keep_and_close(self):
        """The pool keeps at most ``keep`` idle pipes and closes the rest;
        once closed, it closes what it is given back."""
        pool = PipePool(keep=1)
        p1, p2 = pool.get(), pool.get()
        pool.put(p1)
        pool.put(p2)
        self.assertEqual(pool.idle(), 1)
        self.assertRaises(OSError, os.fstat, p2.r)
        self.assertIs(pool.get(), p1)
        pool.close()
        pool.put(p1)
        self.assertEqual(pool.idle(), 0)
        self.assertRaises(OSError, os.fstat, p1.r)

    def test_too_small_pipe(self):
        """A pipe smaller than the pool's minimum (the kernel's per-user
        pipe limit reached) is refused: the Splicer hands its pair to the
        plain path, nothing moved, no error kept."""
        pool = PipePool(size=64 * 1024, min_size=1 << 30)
        self.assertRaises(OSError, pool.get)
        s = Splicer(self.reactor, self.ta, self.tb, self.counted.append,
                    pool)
        s.start()
        self.ca.sendall(b"x")
        self.end(self.ta).doRead()
        self.assertEqual(self.reactor.readers | self.reactor.writers, set())
        self.assertIsNone(s.error)
        settle(self.ta.sock)
        self.assertEqual(self.ta.sock.recv(10), b"x")

    def test_big_pipes_within_budget(self):
        """Only ``max_big`` pipes alive are grown; the next ones keep the
        kernel's default, and a big one given back is used again."""
        pool = PipePool(size=256 * 1024, max_big=1)
        self.addCleanup(pool.close)
        p1, p2 = pool.get(), pool.get()
        self.assertEqual((p1.size, p2.size), (256 * 1024, 64 * 1024))
        pool.discard(p2)
        pool.put(p1)
        self.assertIs(pool.get(), p1)
        pool.discard(p1)
        self.assertEqual(pool.get().size, 256 * 1024)

    def test_budget(self):
        """root: no budget; anyone else: half of the per-user soft limit,
        in pipes of PIPE_SIZE; a soft limit of 0 is no limit."""
        path = self.mktemp()
        with open(path, "w") as f:
            f.write("16384\n")
        self.assertIsNone(big_pipe_budget(euid=0, soft_limit_path=path))
        page = os.sysconf("SC_PAGE_SIZE")
        self.assertEqual(big_pipe_budget(euid=1000, soft_limit_path=path),
                         16384 * page // 2 // PIPE_SIZE)
        with open(path, "w") as f:
            f.write("0\n")
        self.assertIsNone(big_pipe_budget(euid=1000, soft_limit_path=path))

    def test_pipe_size(self):
        """Pipes are grown to the size asked for (when the kernel lets
        us: we run the tests as root or below the per-user limit)."""
        pool = PipePool(size=128 * 1024)
        self.addCleanup(pool.close)
        pipe = pool.get()
        self.assertEqual(pipe.size, 128 * 1024)
        pool.put(pipe)


class Available(unittest.TestCase):
    def test_platforms(self):
        """splice is Linux only."""
        self.assertFalse(splice_available("darwin"))
        self.assertFalse(splice_available("win32"))
        self.assertEqual(splice_available("linux"), hasattr(os, "splice"))


# --- any interleaving (hypothesis)

_DIRS = ("ab", "ba")
_actions = st.lists(st.one_of(
    st.tuples(st.just("send"), st.sampled_from(_DIRS),
              st.integers(1, 300 * 1024)),
    st.tuples(st.just("recv"), st.sampled_from(_DIRS)),
    st.tuples(st.just("reactor")),
    st.tuples(st.just("write"), st.sampled_from(_DIRS),
              st.integers(1, 5000)),
), max_size=40)


class Interleavings(unittest.TestCase):
    @settings(max_examples=40, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(_actions, st.booleans())
    def test_order_and_count(self, actions, small_buffers):
        """Whatever the clients send and read, whenever the relay writes
        its own bytes and however the reactor runs, until the Splicer
        stops: each client ends up with every byte its partner sent, in
        order, with the relay's own writes whole and in the order written
        (what the Splicer held goes to the transport, what it had not read
        stays in the socket for Twisted), and every byte read is counted
        once."""
        reactor = MemoryReactor()
        events, counted = [], []
        ca, sa = tcp_pair()
        cb, sb = tcp_pair()
        socks = (ca, sa, cb, sb)
        pool = PipePool()
        try:
            if small_buffers:
                for s in socks:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
            for s in (ca, cb):
                s.setblocking(False)
            ta = FakeTransport("A", sa, events)
            tb = FakeTransport("B", sb, events)
            s = Splicer(reactor, ta, tb, counted.append, pool)
            s.start()
            client = {"ab": ca, "ba": cb}  # who sends in each direction
            reader = {"ab": cb, "ba": ca}  # who receives
            dest = {"ab": tb, "ba": ta}
            source_sock = {"ab": sa, "ba": sb}
            sent = {"ab": b"", "ba": b""}
            got = {"ab": b"", "ba": b""}
            owed = {"ab": [], "ba": []}
            marker = iter(range(0x80, 0x100))

            def recv(d):
                try:
                    while True:
                        chunk = reader[d].recv(1 << 20)
                        if not chunk:
                            break
                        got[d] += chunk
                except BlockingIOError:
                    pass

            for action in actions:
                if action[0] == "send":
                    _, d, n = action
                    # the clients' bytes are < 0x80, the relay's >= 0x80
                    data = bytes((len(sent[d]) + i) % 0x80 for i in range(n))
                    try:
                        k = client[d].send(data)
                    except BlockingIOError:
                        k = 0
                    sent[d] += data[:k]
                elif action[0] == "recv":
                    recv(action[1])
                elif action[0] == "reactor":
                    for end in list(reactor.readers):
                        if end in reactor.readers:
                            end.doRead()
                    for end in list(reactor.writers):
                        if end in reactor.writers:
                            end.doWrite()
                else:
                    _, d, n = action
                    m = next(marker, 0xff)
                    owed[d].append(bytes([m]) * n)
                    s.write(dest[d], bytes([m]) * n)
            s.stop()
            self.assertEqual(reactor.readers | reactor.writers, set())
            unread = {}
            for d in _DIRS:
                # after the hand-back: what the kernel delivers, then the
                # transport's buffer, then what Twisted will read
                want = len(sent[d]) + sum(map(len, owed[d]))
                more, rest = collect(reader[d], source_sock[d],
                                     len(got[d]) + len(dest[d].written), want)
                got[d] += more
                unread[d] = len(rest)
                stream = got[d] + dest[d].written + rest
                self.assertEqual(bytes(b for b in stream if b < 0x80),
                                 sent[d])
                relay_bytes = bytes(b for b in stream if b >= 0x80)
                self.assertEqual(relay_bytes, b"".join(owed[d]))
                for chunk in owed[d]:
                    self.assertIn(chunk, stream)  # whole, not split
            # counted: every client byte the Splicer read, none twice
            self.assertEqual(sum(counted), sum(
                len(sent[d]) - unread[d] for d in _DIRS))
        finally:
            pool.close()
            for sock in socks:
                sock.close()
