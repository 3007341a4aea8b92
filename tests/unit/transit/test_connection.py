"""One connection attempt's machine (Transit protocol, "Handshake",
"Relay"), driven with bytes and recording fakes: no sockets, no reactor."""


from hypothesis import given
from hypothesis import strategies as st
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole._transit import _codec
from wormhole._transit._connection import ConnectionProtocol, TransitConnection
from wormhole._transit._interfaces import IConnectionIO, ITransitConnection

from ...transit.fakes import FakeIO, FakeSelection, FakeSink

KEY = b"\x07" * 32
SIDE = "0123456789abcdef"
S_HS = _codec.sender_handshake(KEY)
R_HS = _codec.receiver_handshake(KEY)


def frames(is_sender, *records):
    """Frames as the *other* role would send them to us."""
    send_key, _ = _codec.record_keys(KEY, not is_sender)
    enc = _codec.RecordEncoder(send_key)
    return b"".join(enc.encode(r) for r in records)


class Base(unittest.TestCase):
    def build(self, is_sender, relay=False, select_on_ready=False):
        self.events = []
        self.sink = FakeSink(self.events)
        answer = (lambda c: c.select(self.sink)) if select_on_ready else None
        self.selection = FakeSelection(self.events, answer)
        line = _codec.relay_handshake(KEY, SIDE) if relay else None
        c = TransitConnection(KEY, is_sender, line, "test")
        c.wire(FakeIO(self.events), self.selection)
        verifyObject(ITransitConnection, c)
        return c


class Sender(Base):
    def test_handshake_then_go(self):
        """The sender writes its handshake at once, reports to the
        selection when the receiver's arrives, and writes go when selected."""
        c = self.build(True)
        c.connection_made()
        self.assertEqual(self.events, [("io.write", S_HS)])
        c.data_received(R_HS)
        self.assertEqual(self.events[1:], [("selection.connection_ready", c)])
        c.select(self.sink)
        self.assertEqual(self.events[2:], [("io.write", b"go\n")])

    def test_partial_handshake_bytes(self):
        """A handshake that trickles in one byte at a time is reported once,
        after its last byte."""
        c = self.build(True)
        c.connection_made()
        for i in range(len(R_HS) - 1):
            c.data_received(R_HS[i:i + 1])
        self.assertEqual(self.events, [("io.write", S_HS)])
        c.data_received(R_HS[-1:])
        self.assertEqual(self.events[1:], [("selection.connection_ready", c)])

    def test_reflected_handshake(self):
        """Our own handshake coming back (a mirror, or a second sender) is
        wrong: hang up, never report."""
        c = self.build(True)
        c.connection_made()
        c.data_received(S_HS)
        self.assertEqual(self.events, [("io.write", S_HS), ("io.lose",)])

    def test_wrong_key(self):
        """A receiver with another key sends another handshake: hang up."""
        c = self.build(True)
        c.connection_made()
        c.data_received(_codec.receiver_handshake(b"\x08" * 32))
        self.assertEqual(self.events, [("io.write", S_HS), ("io.lose",)])

    def test_garbage_hangs_up_at_first_wrong_byte(self):
        """An HTTP client (say) is dropped on its first bytes."""
        c = self.build(True)
        c.connection_made()
        c.data_received(b"GET / HTTP/1.1\r\n")
        self.assertEqual(self.events, [("io.write", S_HS), ("io.lose",)])
        c.data_received(b"more")  # after hanging up, ignored
        c.connection_lost()
        self.assertEqual(self.events[2:], [("selection.connection_failed", c)])

    def test_rejected_says_nevermind(self):
        """A sender told another connection won writes nevermind and hangs up."""
        c = self.build(True)
        c.connection_made()
        c.data_received(R_HS)
        c.reject()
        self.assertEqual(self.events[2:], [("io.write", b"nevermind\n"), ("io.lose",)])

    def test_records_both_ways(self):
        """After go, records we send are frames under the sender key and the
        receiver's frames reach the sink in order."""
        c = self.build(True, select_on_ready=True)
        c.connection_made()
        c.data_received(R_HS)
        del self.events[:]
        c.send_record(b"hello")
        send_key, _ = _codec.record_keys(KEY, True)
        self.assertEqual(self.events,
                         [("io.write", _codec.RecordEncoder(send_key).encode(b"hello"))])
        c.data_received(frames(True, b"a", b"b"))
        self.assertEqual(self.events[1:], [("sink.records", [b"a", b"b"])])
        c.connection_lost()
        self.assertEqual(self.events[2:], [("sink.lost",)])

    def test_send_records_one_write(self):
        """send_records writes the frames of all its records in one piece,
        the same bytes as send_record one by one; after close it is
        refused like send_record (no write)."""
        c = self.build(True, select_on_ready=True)
        c.connection_made()
        c.data_received(R_HS)
        del self.events[:]
        c.send_record(b"zero")
        c.send_records([b"one", b"two"])
        send_key, _ = _codec.record_keys(KEY, True)
        enc = _codec.RecordEncoder(send_key)
        self.assertEqual(self.events, [("io.write", enc.encode(b"zero")),
                                       ("io.write", enc.encode(b"one") + enc.encode(b"two"))])
        c.close()
        del self.events[:]
        self.assertRaises(ConnectionError, c.send_records, [b"late"])
        self.assertEqual(self.events, [])

    def test_bad_record_drops(self):
        """A tampered record drops the connection and is never delivered;
        the good record before it in the same chunk still is."""
        c = self.build(True, select_on_ready=True)
        c.connection_made()
        c.data_received(R_HS)
        del self.events[:]
        good = frames(True, b"a", b"b")
        bad = bytearray(good)
        bad[-1] ^= 1
        c.data_received(bytes(bad))
        self.assertEqual(self.events, [("sink.records", [b"a"]),
                                       ("sink.refused", "record number 1 did not decrypt"),
                                       ("io.lose",)])
        self.assertRaises(ConnectionError, c.send_record, b"late")
        c.connection_lost()
        self.assertEqual(self.events[-1], ("sink.lost",))

    def test_record_limit(self):
        """A record length above the limit (16 MiB by default, lowered by
        set_max_record) drops the connection as soon as its 4 bytes
        arrive, saying why; nothing of the record is kept."""
        self.assertEqual(_codec.DEFAULT_MAX_RECORD, 16 * 1024 * 1024)
        c = self.build(True, select_on_ready=True)
        c.connection_made()
        c.data_received(R_HS)
        c.set_max_record(3)
        del self.events[:]
        ok = frames(True, b"abc")
        c.data_received(ok)
        self.assertEqual(self.events, [("sink.records", [b"abc"])])
        big = (4 + 24 + 16).to_bytes(4, "big")  # a 4-byte record announced
        c.data_received(big)
        self.assertEqual(self.events[1:], [
            ("sink.refused", ("record number 1 announced 4 bytes; the limit is 3 "
                              "(docs/security.md)")),
            ("io.lose",)])
        self.assertEqual(c._decoder.buffered(), 0)

    def test_out_of_order_record_drops(self):
        """Record 1 before record 0 drops the connection (Transit protocol,
        "Records")."""
        c = self.build(True, select_on_ready=True)
        c.connection_made()
        c.data_received(R_HS)
        del self.events[:]
        f = frames(True, b"zero", b"one")
        first_len = 4 + int.from_bytes(f[:4], "big")
        c.data_received(f[first_len:])
        self.assertEqual(self.events, [("sink.refused", "record number 1 arrived, expected 0"),
                                       ("io.lose",)])

    def test_close_ends_the_records_fast_path(self):
        """Records skip the machine only while it is in the records state:
        after close(), good frames from the peer are dropped, not
        delivered, and send_record is refused (no write)."""
        c = self.build(True, select_on_ready=True)
        c.connection_made()
        c.data_received(R_HS)
        f = frames(True, b"zero", b"one")
        first_len = 4 + int.from_bytes(f[:4], "big")
        c.data_received(f[:first_len])
        c.close()
        del self.events[:]
        c.data_received(f[first_len:])
        self.assertRaises(ConnectionError, c.send_record, b"late")
        self.assertEqual(self.events, [])

    def test_lost_ends_the_records_fast_path(self):
        """After connection_lost, late bytes are ignored and records refused."""
        c = self.build(True, select_on_ready=True)
        c.connection_made()
        c.data_received(R_HS)
        c.connection_lost()
        del self.events[:]
        c.data_received(frames(True, b"late"))
        self.assertRaises(ConnectionError, c.send_record, b"late")
        self.assertEqual(self.events, [])

    def test_stop_before_connected(self):
        """An attempt stopped while handshaking just hangs up."""
        c = self.build(True)
        c.connection_made()
        c.stop()
        self.assertEqual(self.events, [("io.write", S_HS), ("io.lose",)])

    def test_close_flushes_via_lose(self):
        """close() hangs up (the transport flushes first); the sink hears
        about it when the socket is really gone."""
        c = self.build(True, select_on_ready=True)
        c.connection_made()
        c.data_received(R_HS)
        c.close()
        self.assertEqual(self.events[-1], ("io.lose",))
        c.connection_lost()
        self.assertEqual(self.events[-1], ("sink.lost",))


class Receiver(Base):
    def test_waits_for_go(self):
        """The receiver reports only after go, never after the handshake."""
        c = self.build(False)
        c.connection_made()
        self.assertEqual(self.events, [("io.write", R_HS)])
        c.data_received(S_HS)
        self.assertEqual(self.events, [("io.write", R_HS)])
        c.data_received(b"go\n")
        self.assertEqual(self.events[1:], [("selection.connection_ready", c)])
        c.select(self.sink)
        self.assertEqual(self.events[2:], [])  # the receiver writes no go

    def test_records_right_after_go(self):
        """Records in the same chunk as go are delivered once selected."""
        c = self.build(False)
        c.connection_made()
        c.data_received(S_HS + b"go\n" + frames(False, b"r0"))
        c.select(self.sink)
        self.assertEqual(self.events[-1], ("sink.records", [b"r0"]))

    def test_nevermind(self):
        """nevermind instead of go: hang up without reporting."""
        c = self.build(False)
        c.connection_made()
        c.data_received(S_HS + b"nevermind\n")
        self.assertEqual(self.events, [("io.write", R_HS), ("io.lose",)])

    def test_lost_before_go(self):
        """The sender hanging up before go is a failed attempt."""
        c = self.build(False)
        c.connection_made()
        c.data_received(S_HS)
        c.connection_lost()
        self.assertEqual(self.events[1:], [("selection.connection_failed", c)])

    def test_rejected_hangs_up_quietly(self):
        """A receiver rejected (a second go) hangs up without nevermind."""
        c = self.build(False)
        c.connection_made()
        c.data_received(S_HS + b"go\n")
        c.reject()
        self.assertEqual(self.events[2:], [("io.lose",)])

    @given(st.lists(st.integers(1, 200), max_size=10))
    def test_any_split_of_whole_stream(self, cuts):
        """Handshake, go and records cut anywhere give the same result."""
        stream = S_HS + b"go\n" + frames(False, b"x" * 50, b"", b"y")
        c = self.build(False, select_on_ready=True)
        c.connection_made()
        pos = 0
        for n in cuts + [len(stream)]:
            c.data_received(stream[pos:pos + n])
            pos += n
        got = [r for e in self.events if e[0] == "sink.records" for r in e[1]]
        self.assertEqual(got, [b"x" * 50, b"", b"y"])
        self.assertNotIn(("io.lose",), self.events)


class Relay(Base):
    def test_relay_line_first(self):
        """A relay connection writes the relay line, and nothing else until
        ok; then it behaves like a direct one (Transit protocol, "Relay")."""
        c = self.build(True, relay=True)
        c.connection_made()
        self.assertEqual(self.events, [("io.write", _codec.relay_handshake(KEY, SIDE))])
        c.data_received(b"o")
        c.data_received(b"k\n" + R_HS)
        self.assertEqual(self.events[1:], [("io.write", S_HS), ("selection.connection_ready", c)])

    def test_relay_refuses(self):
        """Anything but ok from the relay: hang up."""
        c = self.build(False, relay=True)
        c.connection_made()
        c.data_received(b"error: no\n")
        self.assertEqual(self.events[1:], [("io.lose",)])

    def test_relay_stop(self):
        """Stopped while waiting for the relay: hang up, report the loss."""
        c = self.build(False, relay=True)
        c.connection_made()
        c.stop()
        c.connection_lost()
        self.assertEqual(self.events[1:], [("io.lose",), ("selection.connection_failed", c)])


class Shell(unittest.TestCase):
    def test_early_bytes_held_until_attach(self):
        """An inbound socket that connected and spoke before connect() hands
        everything to its machine once attached."""
        from twisted.internet.testing import StringTransport
        events = []
        p = ConnectionProtocol()
        verifyObject(IConnectionIO, p)
        p.makeConnection(StringTransport())
        p.dataReceived(S_HS[:10])
        p.dataReceived(S_HS[10:])
        c = TransitConnection(KEY, False, None, "in")
        c.wire(p, FakeSelection(events))
        p.attach(c)
        self.assertEqual(p.transport.value(), R_HS)
        p.dataReceived(b"go\n")
        self.assertEqual(events, [("selection.connection_ready", c)])

    def test_early_flood_stops_reading(self):
        """Before connect(), anyone who reaches our port can write to it:
        past 1024 bytes the socket stops being read (so at most one read
        more is kept) until attach, which resumes it and hands over what
        was kept; here the flood is no handshake, so the machine hangs up."""
        from twisted.internet.testing import StringTransport
        events = []
        p = ConnectionProtocol()
        t = StringTransport()
        p.makeConnection(t)
        p.dataReceived(bytes(1000))
        self.assertEqual(t.producerState, "producing")
        p.dataReceived(bytes(100))
        self.assertEqual(t.producerState, "paused")
        self.assertEqual(p._early_bytes, 1100)
        c = TransitConnection(KEY, False, None, "in")
        c.wire(p, FakeSelection(events))
        p.attach(c)
        self.assertEqual(t.producerState, "producing")
        self.assertTrue(t.disconnecting)
