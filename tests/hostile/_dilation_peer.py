"""A hostile Dilation peer in memory, and the victim it attacks: our real
Manager, L4 (Inbound, Outbound), L5 (the subchannel registry) and L2/L3
(DilatedConnectionProtocol) on an in-memory transport, with a Clock.

The peer holds the Dilation key (it is the other end of a wormhole), so
it speaks Noise with our framing code and then writes whatever records it
likes; it reads what the victim writes back, and never has to ACK."""

import os

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from zope.interface import implementer

from wormhole._dilation import _interfaces as I
from wormhole._dilation._connection import DilatedConnectionProtocol
from wormhole._dilation._endpoints import SubchannelRegistry
from wormhole._dilation._framing import (
    DEFAULT_MAX_FRAME,
    FrameReader,
    NoiseSession,
    derive_dilation_key,
    handshake_lines,
)
from wormhole._dilation._inbound import Inbound
from wormhole._dilation._outbound import Outbound
from wormhole._dilation._records import KCM, encode_record, parse_record
from wormhole._dilation.manager import Manager
from wormhole.util import dict_to_bytes


@implementer(I.IDilationConnector)
class _Connector:
    """The Manager's connector: the test hands it the connection."""

    def start(self):
        pass

    def stop(self):
        pass

    def got_hints(self, hints):
        pass

    def add_candidate(self, connection):
        self.candidate = connection

    def candidate_lost(self, connection):
        pass


class Victim:
    """Our Dilation stack, Leader or Follower, wired as the Dilator does."""

    def __init__(self, key, we_lead):
        self.clock = Clock()
        self.queue = []
        self.inbound = Inbound()
        self.outbound = Outbound()
        self.registry = SubchannelRegistry(lambda f, *a: self.queue.append((f, a)),
                                           clock=self.clock)
        self.inbound.wire(self.outbound, self.registry)
        self.registry.wire(self.inbound, self.outbound)
        self.connector = _Connector()
        self.manager = Manager("5" * 16, "ged", lambda msg: None, self.inbound,
                               self.outbound, self.registry,
                               lambda *a: self.connector, clock=self.clock)
        self.manager.start()
        their_side = ("0" if we_lead else "f") * 16
        self.manager.got_dilate(dict_to_bytes({"type": "please", "side": their_side,
                                               "use-version": "ged"}))
        self.conn = DilatedConnectionProtocol(key, we_lead, self.connector, self.clock,
                                              description="victim")
        self.transport = StringTransport()
        self.conn.makeConnection(self.transport)

    def take_output(self):
        out = self.transport.value()
        self.transport.clear()
        return out

    def run_eventually(self):
        while self.queue:
            f, a = self.queue.pop(0)
            f(*a)


class HostilePeer:
    """The other end, speaking L2 with our own framing code."""

    def __init__(self, key, we_lead):
        self.is_leader = not we_lead
        self.noise = NoiseSession(key, self.is_leader)
        self.line, expected = handshake_lines(self.is_leader)
        self.reader = FrameReader(expected, handshake_max=DEFAULT_MAX_FRAME)
        self.records = []

    def read(self, data):
        """Parse what the victim wrote: records it sent us, in order."""
        for f in self.reader.add_data(data):
            if not self.noise.handshake_done():
                self.noise.read_handshake(f)
                continue
            self.records.append(parse_record(self.noise.decrypt_frame(f)))

    def frame(self, record):
        return self.noise.encrypt_frame(encode_record(record))


def connected_pair(we_lead):
    """A victim (Leader if ``we_lead``) whose L3 is selected with the
    hostile peer on the other end, KCMs exchanged, roles settled; returns
    (victim, peer) with nothing pending either way."""
    key = derive_dilation_key(os.urandom(32))
    v, p = Victim(key, we_lead), HostilePeer(key, we_lead)
    kcm = encode_record(KCM())
    if p.is_leader:
        v.conn.dataReceived(p.line + p.noise.write_handshake())
        p.read(v.take_output())   # its line, its handshake answer, its KCM
        v.conn.dataReceived(p.noise.encrypt_frame(kcm))
    else:
        p.read(v.take_output())   # its line and its handshake message
        v.conn.dataReceived(p.line + p.noise.write_handshake() + p.noise.encrypt_frame(kcm))
    v.conn.select(v.manager)
    v.manager.connector_connection_made(v.conn)
    # what the Dilator does on the first ConnectedPeer status: connect()
    # and listen() go on once the peer is here
    v.registry.connected()
    p.read(v.take_output())
    p.records = []
    return v, p
