"""L5 subchannels (spec 000 "L5 subchannels", "Flow Control").

A SubChannel is what an application's protocol sees as its ``transport``:
ITransport (write, loseConnection), IConsumer (register its producer, which
L4 pauses while L3 is full or gone) and IProducer (pausing it stops reading
from the whole L3 connection: spec 000 pauses all subchannels' input when
any one pauses). ``dataReceived`` gets whole DATA payloads.

Data for a subchannel no listener has accepted yet is kept for it, and
counted by L4 inbound, which stops reading once too much waits (issue 11,
docs/security.md "Dilation"). A subchannel the peer opened and closed
before any listener took it waits too (its listener still sees it open
and close), so it counts ``WAITING_COST`` bytes: OPEN/CLOSE cycles cannot
pile up waiting subchannels without bound.

Close handshake: loseConnection() sends CLOSE and enters "closing", where
inbound DATA is still delivered; the peer's CLOSE then ends it. A CLOSE from
the peer while open is answered with our own CLOSE and ends it at once.
"""

import attr
from automat import MethodicalMachine
from twisted.internet.error import ConnectionDone
from twisted.internet.interfaces import IAddress, IConsumer, IPushProducer, ITransport
from twisted.python import log
from zope.interface import implementer

from . import _interfaces as I

WAITING_COST = 1024  # what a closed, unaccepted subchannel counts as


class AlreadyClosedError(Exception):
    """write() after loseConnection() or after the peer's CLOSE (spec 000
    "L5 subchannels": outbound writes after close are an error)."""


@implementer(IAddress)
@attr.s(frozen=True)
class SubchannelAddress:
    """getPeer()/getHost() of a subchannel: its subprotocol and id (the
    reference 0.24's has only the subprotocol, hence the default)."""
    subprotocol = attr.ib()
    scid = attr.ib(default=None)


@implementer(ITransport, IConsumer, IPushProducer, I.ISubChannel)
class SubChannel:
    m = MethodicalMachine()
    set_trace = m._setTrace

    def __init__(self, scid, subprotocol, outbound, inbound, on_closed, eventually):
        self._scid = scid
        self._address = SubchannelAddress(subprotocol, scid)
        self._outbound = I.IOutbound(outbound)
        self._inbound = I.IInbound(inbound)
        self._on_closed = on_closed  # the registry forgets us
        self._eventually = eventually
        self._protocol = None
        self._pending = []  # DATA that arrived before a protocol was attached
        # the application's producer and whether L4 has paused us: data of
        # the IConsumer contract, orthogonal to the open/closing/closed state
        self._producer = None
        self._streaming = True
        self._l4_paused = False
        # per-message hot paths, installed and removed by the machine's
        # outputs: in "open" a write goes straight to L4 and inbound data
        # straight to the protocol, without an Automat transition each
        self._on_write = self._write
        self._on_data = self._remote_data

    # -- ITransport --------------------------------------------------------

    def write(self, data):
        if not isinstance(data, bytes):
            raise TypeError(f"subchannel write() takes bytes, not {type(data).__name__}")
        self._on_write(data)

    def writeSequence(self, iovec):
        self.write(b"".join(iovec))

    def getPeer(self):
        return self._address

    def getHost(self):
        return self._address

    # -- IConsumer ---------------------------------------------------------

    def registerProducer(self, producer, streaming):
        if self._producer is not None:
            raise RuntimeError("a producer is already registered on this subchannel")
        self._producer = producer
        self._streaming = bool(streaming)
        if self._l4_paused:
            if streaming:
                producer.pauseProducing()
        elif not streaming:
            self._eventually(self._pull)

    def unregisterProducer(self):
        self._producer = None

    def _pull(self):
        # a pull producer writes once per resumeProducing(); ask again while
        # L4 has room (Twisted's IPullProducer contract)
        if self._producer is not None and not self._streaming and not self._l4_paused:
            self._producer.resumeProducing()

    # -- ISubChannel (from L4) -------------------------------------------------

    def remote_data(self, data):
        self._on_data(data)

    def _send_fast(self, data):
        self._outbound.send_data(self._scid, data)
        if not self._streaming and self._producer is not None:
            self._eventually(self._pull)

    def local_pause(self):
        if self._l4_paused:
            return
        self._l4_paused = True
        if self._producer is not None and self._streaming:
            self._producer.pauseProducing()

    def local_resume(self):
        if not self._l4_paused:
            return
        self._l4_paused = False
        if self._producer is not None:
            if self._streaming:
                self._producer.resumeProducing()
            else:
                self._eventually(self._pull)

    # -- IProducer (the application pauses its reading) --------------------

    def pauseProducing(self):
        self._inbound.subchannel_paused(self)

    def resumeProducing(self):
        self._inbound.subchannel_resumed(self)

    def stopProducing(self):
        self.loseConnection()

    # -- states ------------------------------------------------------------

    @m.state(initial=True)
    def S_unattached(self): pass

    @m.state()
    def S_unattached_closed(self): pass

    @m.state()
    def S_open(self): pass

    @m.state()
    def S_closing(self): pass

    @m.state()
    def S_closed(self): pass

    # -- inputs ------------------------------------------------------------

    @m.input()
    def attach(self, protocol): pass

    @m.input()
    def _remote_data(self, data): pass

    @m.input()
    def remote_close(self): pass

    @m.input()
    def _write(self, data): pass

    @m.input()
    def loseConnection(self): pass

    @m.input()
    def abandon(self): pass

    # -- outputs -----------------------------------------------------------

    @m.output()
    def fast_paths(self, protocol):
        self._on_write = self._send_fast
        self._on_data = protocol.dataReceived

    @m.output()
    def slow_write(self):
        self._on_write = self._write

    @m.output()
    def slow_paths(self):
        self._on_write = self._write
        self._on_data = self._remote_data

    @m.output()
    def set_protocol(self, protocol):
        self._protocol = protocol
        protocol.makeConnection(self)

    @m.output()
    def deliver_pending(self):
        pending, self._pending = self._pending, []
        for data in pending:
            self._protocol.dataReceived(data)
        if pending:
            # after delivering, so data read meanwhile cannot overtake it
            self._inbound.backlog_released(self)

    @m.output()
    def keep(self, data):
        self._pending.append(data)
        self._inbound.backlog_added(self, len(data))

    @m.output()
    def count_waiting(self):
        self._inbound.backlog_added(self, WAITING_COST)

    @m.output()
    def release_waiting(self):
        self._inbound.backlog_released(self)

    @m.output()
    def release_backlog(self):
        pending, self._pending = self._pending, []
        if pending:
            self._inbound.backlog_released(self)

    @m.output()
    def deliver(self, data):
        self._protocol.dataReceived(data)

    @m.output()
    def drop(self, data):
        log.msg(f"Dilation: DATA for closed subchannel {self._scid} discarded")

    @m.output()
    def send_data(self, data):
        self._outbound.send_data(self._scid, data)
        if not self._streaming and self._producer is not None:
            self._eventually(self._pull)

    @m.output()
    def refuse_write(self, data):
        raise AlreadyClosedError(f"subchannel {self._scid} is closed or closing; "
                                 "write() before loseConnection()")

    @m.output()
    def send_close(self):
        self._outbound.send_close(self._scid)

    @m.output()
    def forget(self):
        self._outbound.subchannel_closed(self)
        self._inbound.subchannel_closed(self._scid)
        self._on_closed(self._scid)

    @m.output()
    def forget_quietly(self):
        self._on_closed(self._scid)

    @m.output()
    def connection_lost(self):
        p, self._producer = self._producer, None
        # applications written for the reference register producers
        # without stopProducing (it never calls it): stop only those
        # that can be stopped; connectionLost tells the rest
        stop = getattr(p, "stopProducing", None)
        if stop is not None and self._streaming:
            stop()
        # the exception itself, not a Failure: that is what the reference
        # 0.24 passes, and applications test ``isinstance(reason,
        # ConnectionDone)`` (docs/api.md, "Dilation")
        self._protocol.connectionLost(ConnectionDone())

    # -- transitions -------------------------------------------------------

    # an inbound OPEN whose listener has not listened yet: keep its data
    S_unattached.upon(attach, enter=S_open, outputs=[fast_paths, set_protocol, deliver_pending])
    S_unattached.upon(_remote_data, enter=S_unattached, outputs=[keep])
    S_unattached.upon(remote_close, enter=S_unattached_closed,
                      outputs=[send_close, forget, count_waiting])
    S_unattached_closed.upon(attach, enter=S_closed,
                             outputs=[set_protocol, deliver_pending, release_waiting,
                                      connection_lost])

    # in "open", writes and inbound DATA take the paths fast_paths installed
    # (the same behaviour as these two transitions)
    S_open.upon(_remote_data, enter=S_open, outputs=[deliver])
    S_open.upon(_write, enter=S_open, outputs=[send_data])
    S_open.upon(loseConnection, enter=S_closing, outputs=[slow_write, send_close])
    S_open.upon(remote_close, enter=S_closed,
                outputs=[slow_paths, send_close, forget, connection_lost])

    # spec 000: data queued before the peer saw our CLOSE is still delivered
    S_closing.upon(_remote_data, enter=S_closing, outputs=[deliver])
    S_closing.upon(_write, enter=S_closing, outputs=[refuse_write])
    S_closing.upon(loseConnection, enter=S_closing, outputs=[])
    S_closing.upon(remote_close, enter=S_closed, outputs=[slow_paths, forget, connection_lost])

    S_closed.upon(_remote_data, enter=S_closed, outputs=[drop])
    S_closed.upon(_write, enter=S_closed, outputs=[refuse_write])
    S_closed.upon(loseConnection, enter=S_closed, outputs=[])
    S_closed.upon(remote_close, enter=S_closed, outputs=[])

    # the wormhole is closing (spec 000 "L5 subchannels": subchannels end
    # when the wormhole does): no CLOSE handshake, the connection is gone
    S_unattached.upon(abandon, enter=S_closed, outputs=[release_backlog, forget_quietly])
    S_unattached_closed.upon(abandon, enter=S_closed, outputs=[release_waiting])
    S_open.upon(abandon, enter=S_closed, outputs=[slow_paths, forget_quietly, connection_lost])
    S_closing.upon(abandon, enter=S_closed, outputs=[slow_paths, forget_quietly, connection_lost])
    S_closed.upon(abandon, enter=S_closed, outputs=[])
