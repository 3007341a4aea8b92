"""L4 end to end (Dilation protocol, "L4 protocol"): an Outbound on one side
and an Inbound on the other, joined by in-memory L3 connections that
hypothesis cuts, duplicates and resends at random. Whatever happens, the
receiving subchannel sees every DATA exactly once and in order."""

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial import unittest
from zope.interface import implementer

from wormhole._dilation import _interfaces as I
from wormhole._dilation._inbound import Inbound
from wormhole._dilation._outbound import Outbound
from wormhole._dilation._records import Ack

from .fakes import FakeConnection, FakeListener


@implementer(I.IL3Connection)
class Wire(FakeConnection):
    """One direction of an in-memory L3: records wait in ``sent``."""


class Pair:
    def __init__(self):
        self.events = []
        self.a_out = Outbound()
        self.b_out = Outbound()
        self.b_in = Inbound()
        self.listener = FakeListener(self.events)
        self.b_in.wire(self.b_out, self.listener)
        self.connected = False
        self.connect()
        self.a_out.send_open(1, "bulk")
        self.n = 0

    def connect(self):
        self.ab = Wire(self.events, "ab")
        self.ba = Wire(self.events, "ba")
        self.connected = True
        self.a_out.use_connection(self.ab)
        self.b_out.use_connection(self.ba)
        self.b_in.use_connection(self.ba)

    def cut(self):
        if not self.connected:
            return
        self.connected = False
        # whatever was in flight is lost with the connection
        self.a_out.stop_using_connection()
        self.b_out.stop_using_connection()
        self.b_in.stop_using_connection()

    def write(self):
        self.a_out.send_data(1, str(self.n).encode())
        self.n += 1

    def deliver_ab(self, dup=False):
        if self.connected and self.ab.sent:
            r = self.ab.sent[0] if dup else self.ab.sent.pop(0)
            self.b_in.got_record(r)

    def end_of_batch(self):
        if self.connected:
            self.b_in.end_of_batch()

    def deliver_ba(self):
        if self.connected and self.ba.sent:
            r = self.ba.sent.pop(0)
            assert isinstance(r, Ack)
            self.a_out.handle_ack(r.resp_seqnum)

    def drain(self):
        if not self.connected:
            self.connect()
        while True:
            self.end_of_batch()
            if not (self.ab.sent or self.ba.sent):
                break
            self.deliver_ab()
            self.deliver_ba()


ops = st.lists(st.sampled_from(["write", "ab", "ab", "ba", "dup", "cut", "reconnect", "batch"]),
               max_size=200)


class Delivery(unittest.TestCase):
    @settings(max_examples=200, deadline=None)
    @given(ops)
    def test_exactly_once_in_order(self, script):
        """Random writes, deliveries, duplicate deliveries, ends of read
        batches (cumulative ACKs), connection cuts and reconnections: the
        peer gets 0..n-1 exactly once, in order, and once the CLOSE is
        through (it is ACKed at once; DATA only per ACK_EVERY bytes) the
        sender's queue is empty."""
        p = Pair()
        for op in script:
            if op == "write":
                p.write()
            elif op == "ab":
                p.deliver_ab()
            elif op == "dup":
                p.deliver_ab(dup=True)
            elif op == "ba":
                p.deliver_ba()
            elif op == "batch":
                p.end_of_batch()
            elif op == "cut":
                p.cut()
            elif op == "reconnect":
                p.cut()
                p.connect()
        p.drain()
        self.assertEqual(list(p.listener.made), [1])
        self.assertEqual(p.listener.made[1].data, [str(i).encode() for i in range(p.n)])
        p.a_out.send_close(1)
        p.drain()
        self.assertEqual(len(p.a_out._queue), 0)
