"""L5 subchannels (Dilation protocol, "L5 subchannels", "Flow Control").

A SubChannel is what an application's protocol sees as its ``transport``:
ITransport (write, loseConnection), IConsumer (register its producer, which
L4 pauses while L3 is full or gone) and IProducer (pausing it stops reading
from the whole L3 connection: the Dilation protocol, "Flow Control", pauses
all subchannels' input when any one pauses). ``dataReceived`` gets whole
DATA payloads.

Data for a subchannel no listener has accepted yet is kept for it, and
counted by L4 inbound, which stops reading once too much waits
(docs/security.md, "Dilation"). A subchannel the peer opened and closed
before any listener took it waits too (its listener still sees it open and
close), so it counts ``WAITING_COST`` bytes: OPEN/CLOSE cycles cannot pile
up waiting subchannels without bound.

Close handshake: loseConnection() sends CLOSE and enters "closing", where
inbound DATA is still delivered; the peer's CLOSE then ends it. A CLOSE from
the peer while open is answered with our own CLOSE and ends it at once.
A peer that never answers our CLOSE would keep a subchannel "closing" for
the rest of the session, so "closing" waits at most ``close_timeout``
seconds (on the registry's clock), then forgets the subchannel as if the
answer had come, logging one line (docs/security.md, "Dilation").
"""

import attr
from automat import MethodicalMachine
from twisted.internet.error import ConnectionDone
from twisted.internet.interfaces import IAddress, IConsumer, IPushProducer, ITransport
from twisted.python import log
from zope.interface import implementer

from .._automat_private import trace_hook
from . import _interfaces as I
from ._state_paths import StatePaths

WAITING_COST = 1024  # what a closed, unaccepted subchannel counts as
# how long "closing" waits for the peer's CLOSE: the order of the other
# waits on a peer (--peer-timeout), long enough for a reconnection in
# between (our CLOSE waits in L4 and is resent on the next connection)
CLOSE_TIMEOUT = 300.0
# the per-message paths of the states that are not "open"/"closing":
# writes and inbound DATA go through the machine's inputs
_SLOW_PATHS = {"_on_write": lambda s: s._write, "_on_data": lambda s: s._remote_data}


class AlreadyClosedError(Exception):
    """write() after loseConnection() or after the peer's CLOSE (Dilation
    protocol, "L5 subchannels": outbound writes after close are an error)."""


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
    set_trace = trace_hook(m)

    def __init__(self, scid, subprotocol, outbound, inbound, on_closed, eventually,
                 clock=None, close_timeout=CLOSE_TIMEOUT):
        """``clock`` (an IReactorTime) bounds "closing" to
        ``close_timeout`` seconds; without one it waits as long as the
        session lasts."""
        self._scid = scid
        self._address = SubchannelAddress(subprotocol, scid)
        self._outbound = I.IOutbound(outbound)
        self._inbound = I.IInbound(inbound)
        self._on_closed = on_closed  # the registry forgets us
        self._eventually = eventually
        self._clock = clock
        self._close_timeout = close_timeout
        self._close_timer = None  # the wait for the peer's CLOSE
        self._protocol = None
        self._pending = []  # DATA that arrived before a protocol was attached
        # the application's producer and whether L4 has paused us: data of
        # the IConsumer contract, orthogonal to the open/closing/closed state
        self._producer = None
        self._streaming = True
        self._l4_paused = False
        # per-message hot paths (_on_write, _on_data), set from the
        # state's row on every transition (_state_paths): in "open" a write
        # goes straight to L4 and inbound data straight to the protocol,
        # without an Automat transition each
        self._paths.install_initial(self, "S_unattached")

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

    def _deliver_data(self, data):
        self._protocol.dataReceived(data)

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

    @m.input()
    def _close_unanswered(self): pass

    # -- outputs -----------------------------------------------------------

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
    def start_close_timer(self):
        if self._clock is not None:
            self._close_timer = self._clock.callLater(self._close_timeout,
                                                      self._close_unanswered)

    @m.output()
    def stop_close_timer(self):
        timer, self._close_timer = self._close_timer, None
        if timer is not None and timer.active():
            timer.cancel()

    @m.output()
    def log_unanswered(self):
        self._close_timer = None
        log.msg(f"Dilation: the peer never answered our CLOSE of subchannel {self._scid} "
                f"within {self._close_timeout:g} s; forgetting it (docs/security.md)")

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

    _paths = StatePaths(m, {
        "S_unattached": _SLOW_PATHS,
        "S_unattached_closed": _SLOW_PATHS,
        "S_open": {"_on_write": lambda s: s._send_fast, "_on_data": lambda s: s._deliver_data},
        # Dilation protocol, "L5 subchannels": data queued before the peer saw
        # our CLOSE is still delivered
        "S_closing": {"_on_write": lambda s: s._write, "_on_data": lambda s: s._deliver_data},
        "S_closed": _SLOW_PATHS,
    })

    # an inbound OPEN whose listener has not listened yet: keep its data
    _paths.upon(S_unattached, attach, S_open, [set_protocol, deliver_pending])
    _paths.upon(S_unattached, _remote_data, S_unattached, [keep])
    _paths.upon(S_unattached, remote_close, S_unattached_closed,
                [send_close, forget, count_waiting])
    _paths.upon(S_unattached_closed, attach, S_closed,
                [set_protocol, deliver_pending, release_waiting, connection_lost])

    # in "open", writes and inbound DATA take the paths of its row (the
    # same behaviour as these two transitions)
    _paths.upon(S_open, _remote_data, S_open, [deliver])
    _paths.upon(S_open, _write, S_open, [send_data])
    _paths.upon(S_open, loseConnection, S_closing, [send_close, start_close_timer])
    _paths.upon(S_open, remote_close, S_closed,
                [send_close, forget, connection_lost])

    # Dilation protocol, "L5 subchannels": data queued before the peer saw our
    # CLOSE is still delivered
    _paths.upon(S_closing, _remote_data, S_closing, [deliver])
    _paths.upon(S_closing, _write, S_closing, [refuse_write])
    _paths.upon(S_closing, loseConnection, S_closing, [])
    _paths.upon(S_closing, remote_close, S_closed, [stop_close_timer, forget, connection_lost])
    # the peer never answered: forgotten as if it had
    _paths.upon(S_closing, _close_unanswered, S_closed,
                [log_unanswered, forget, connection_lost])

    _paths.upon(S_closed, _remote_data, S_closed, [drop])
    _paths.upon(S_closed, _write, S_closed, [refuse_write])
    _paths.upon(S_closed, loseConnection, S_closed, [])
    _paths.upon(S_closed, remote_close, S_closed, [])

    # the wormhole is closing (Dilation protocol, "L5 subchannels":
    # subchannels end when the wormhole does): no CLOSE handshake, the
    # connection is gone
    _paths.upon(S_unattached, abandon, S_closed, [release_backlog, forget_quietly])
    _paths.upon(S_unattached_closed, abandon, S_closed, [release_waiting])
    _paths.upon(S_open, abandon, S_closed, [forget_quietly, connection_lost])
    _paths.upon(S_closing, abandon, S_closed,
                [stop_close_timer, forget_quietly, connection_lost])
    _paths.upon(S_closed, abandon, S_closed, [])
