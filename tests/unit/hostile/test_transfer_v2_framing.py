"""transfer-v2 with "framed-records" (docs/transfer-v2.md "Record
framing") against a peer that frames as it likes: each end of an offer
subchannel, driven through the session glue on a Clock. Records split
anywhere (byte by byte) or all in one delivery arrive whole; a length over
the limits is a protocol error as soon as its header is in, before any of
the announced bytes are kept, on both sides."""
import os

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial import unittest

from wormhole import transfer_v2 as T
from wormhole.transfer_v2 import _framing, _source, _versions
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2._receiving import ReceiveFailed


def framed_session(clock, mode, peer_mode, **kw):
    """A session as it is once negotiated with a peer of ours (framing on)."""
    s = T.TransferSession(clock, None, mode, free_space=lambda path: 10 ** 12, **kw)
    # framing and modes on, the other features off
    s._agree(_versions.negotiate(mode, T.app_versions(peer_mode, {
        _versions.FRAMED_RECORDS: {}, _versions.FILE_MODES: {}})))
    return s


def written_records(transport):
    """What we wrote, read back through a Deframer."""
    return [M.parse_record(r) for r in _framing.Deframer().feed(transport.value())]


class Receiving(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.dir = self.mktemp()
        os.makedirs(self.dir)
        self.offers = []
        self.s = framed_session(self.clock, "receive", "send", on_offer=self.offers.append)
        self.p = self.s._offer_in()
        self.t = StringTransport()
        self.p.makeConnection(self.t)

    def stream(self, data):
        offer = M.FileOffer("f", 0, len(data))
        hasher = M.new_hash()
        hasher.update(data)
        ack = M.FileAcknowledge(len(data), hasher.digest())
        chunks = [M.FileData(data[i:i + M.MAX_DATA_PAYLOAD])
                  for i in range(0, len(data), M.MAX_DATA_PAYLOAD)]
        return _framing.frame(M.encode_record(offer)), b"".join(
            _framing.frame(M.encode_record(r)) for r in chunks + [ack])

    def receive(self, deliveries):
        offer, rest = deliveries
        for piece in offer:
            self.p.dataReceived(piece)
        [incoming] = self.offers
        incoming.accept(self.dir)
        self.clock.advance(0)  # the receiver's answers leave at the turn's end
        self.assertEqual(written_records(self.t), [M.OfferAccept()])
        for piece in rest:
            self.p.dataReceived(piece)
        self.p.connectionLost(None)  # the offering side closes
        done = incoming.when_done()
        self.clock.advance(0)
        return self.successResultOf(done)

    def test_byte_by_byte(self):
        """Every byte of every record in its own delivery: the file arrives."""
        offer, rest = self.stream(b"hello framing")
        received = self.receive(([offer[i:i + 1] for i in range(len(offer))],
                                 [rest[i:i + 1] for i in range(len(rest))]))
        with open(received.path, "rb") as f:
            self.assertEqual(f.read(), b"hello framing")

    def test_one_block(self):
        """The data and both acknowledgements' worth in one delivery."""
        offer, rest = self.stream(b"x" * 100_000)
        received = self.receive(([offer], [rest]))
        self.assertEqual(os.path.getsize(received.path), 100_000)

    def test_closed_within_the_turn(self):
        """The file's last records and the peer's close in one turn (a
        sender that gave up): our FileAcknowledge, held for the turn's
        end, is not written to the closed subchannel."""
        offer, rest = self.stream(b"y" * 1000)
        self.p.dataReceived(offer)
        [incoming] = self.offers
        incoming.accept(self.dir)
        self.clock.advance(0)
        written = self.t.value()
        self.p.dataReceived(rest)
        self.p.connectionLost(None)
        self.clock.advance(0)
        self.assertEqual(self.t.value(), written)

    def test_huge_length_before_the_offer(self):
        """A first header announcing 4 GiB: refused with those 4 bytes,
        the subchannel closed, nothing kept, nobody asked; what follows
        is ignored."""
        self.p.dataReceived(b"\xff\xff\xff\xff")
        self.assertTrue(self.t.disconnecting)
        self.assertEqual(self.p._pipe[0]._partial, bytearray())
        self.p.dataReceived(b"\x01" * 1000)
        self.assertEqual(self.offers, [])

    def test_data_over_its_limit(self):
        """After the accept, a data frame announcing 65537 bytes: the offer
        fails as a protocol error naming the limit, the subchannel closes,
        nothing is left in the folder."""
        offer, _ = self.stream(b"z" * 10)
        self.p.dataReceived(offer)
        [incoming] = self.offers
        incoming.accept(self.dir)
        self.p.dataReceived((M.MAX_DATA_PAYLOAD + 2).to_bytes(4, "big") + b"\x05" + b"z" * 10)
        done = incoming.when_done()
        self.clock.advance(0)
        f = self.failureResultOf(done, ReceiveFailed)
        self.assertIn("protocol error", str(f.value))
        self.assertIn("at most 65536", str(f.value))
        self.assertTrue(self.t.disconnecting)
        self.p.connectionLost(None)
        self.assertEqual(os.listdir(self.dir), [])


class Offering(unittest.TestCase):
    def test_huge_accept_length(self):
        """The receiver answers our offer with a header announcing more than
        16 MiB: the offer fails before any of it is kept, and closes."""
        clock = Clock()
        path = self.mktemp()
        with open(path, "wb") as f:
            f.write(b"b" * 10)
        s = framed_session(clock, "send", "receive")
        done = defer.Deferred()
        p = s._offer_out(_source.prepare(path), done, lambda n: None)
        t = StringTransport()
        p.makeConnection(t)
        self.assertEqual(written_records(t), [_source.prepare(path).offer])
        p.dataReceived((_framing.MAX_RECORD + 1).to_bytes(4, "big"))
        f = self.failureResultOf(done, M.MessageError)
        self.assertIn(f"at most {_framing.MAX_RECORD}", str(f.value))
        self.assertTrue(t.disconnecting)
