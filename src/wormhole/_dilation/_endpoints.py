"""L5 endpoints (Dilation protocol, "Initiating Dilation", "L5 subchannels").

``connector_for(name)`` gives an IStreamClientEndpoint: connect() waits
for the first connection with the peer, then allocates a subchannel id
(Leader odd, Follower even, 0 reserved), sends OPEN with the subprotocol
name and builds the protocol at once (no reply to OPEN is awaited).
``listener_for(name)`` gives an IStreamServerEndpoint whose factory
receives the peer's OPENs for that name; listen() registers it at once
(OPENs that arrive before listen() wait, with their data, until it is
called) and fires when the first connection with the peer is up, as the
reference 0.24's does: applications read that moment as "the peer is
here". Both fail when Dilation cannot happen or the wormhole closes
first. With
``dilate(expected_subprotocols=[...])`` an OPEN for any other name is
refused at once (answered with CLOSE) instead of waiting for a listener
that will never come (docs/api.md says how this differs from the
reference 0.24).
"""

import attr
from twisted.internet.defer import Deferred, succeed
from twisted.internet.error import ConnectionDone
from twisted.internet.interfaces import (
    IListeningPort,
    IStreamClientEndpoint,
    IStreamServerEndpoint,
)
from twisted.internet.protocol import Protocol
from twisted.python import log
from zope.interface import implementer

from . import _interfaces as I
from ._subchannel import CLOSE_TIMEOUT, SubChannel, SubchannelAddress


@implementer(I.ISubchannelListener)
class SubchannelRegistry:
    """Creates subchannels in both directions and keeps the listeners'
    factories. Not a protocol layer: it only routes and allocates."""

    def __init__(self, eventually, expected_subprotocols=None, clock=None,
                 close_timeout=CLOSE_TIMEOUT):
        """``clock`` and ``close_timeout`` bound how long a subchannel we
        closed waits for the peer's CLOSE (``SubChannel``)."""
        self._eventually = eventually
        self._clock = clock
        self._close_timeout = close_timeout
        self._expected = expected_subprotocols  # None: any name may wait
        self._connected_waiters = []
        self._connected = False
        self._is_leader = None
        self._failure = None
        self._next = 0
        self._factories = {}
        self._unattached = {}  # subprotocol -> [SubChannel]
        self._open = {}

    def wire(self, inbound, outbound):
        self._inbound = I.IInbound(inbound)
        self._outbound = I.IOutbound(outbound)

    # -- from the Manager --------------------------------------------------

    def set_role(self, is_leader):
        self._is_leader = bool(is_leader)

    def connected(self):
        """The first connection with the peer is up (the role is known by
        then): waiting connect() and listen() calls go on."""
        self._connected = True
        waiters, self._connected_waiters = self._connected_waiters, []
        for d in waiters:
            d.callback(None)

    def fail(self, f):
        """Dilation cannot happen (e.g. OldPeerCannotDilateError): every
        pending and future connect() and listen() errbacks with ``f``."""
        self._failure = f
        waiters, self._connected_waiters = self._connected_waiters, []
        for d in waiters:
            d.errback(f)

    # -- subchannels -------------------------------------------------------

    def close_all(self):
        """The wormhole is closing: every subchannel ends now, and
        connect() calls still waiting fail."""
        for sc in list(self._open.values()):
            sc.abandon()
        self._unattached = {}
        self._factories = {}
        if self._failure is None:
            self.fail(ConnectionDone("the wormhole was closed"))

    def _when_ready(self):
        if self._failure is not None:
            d = Deferred()
            d.errback(self._failure)
            return d
        if self._connected:
            return succeed(None)
        d = Deferred()
        self._connected_waiters.append(d)
        return d

    def _allocate_scid(self):
        # Dilation protocol, "L5 subchannels": counter*2+1 Leader,
        # counter*2+2 Follower, 0 reserved (docs/dilation.md,
        # "Wire facts settled by interop with the reference 0.24")
        n = self._next
        self._next += 1
        return n * 2 + (1 if self._is_leader else 2)

    def _new(self, scid, subprotocol):
        sc = SubChannel(scid, subprotocol, self._outbound, self._inbound,
                        self._closed, self._eventually, self._clock, self._close_timeout)
        self._open[scid] = sc
        self._outbound.subchannel_opened(sc)
        return sc

    def _closed(self, scid):
        self._open.pop(scid, None)

    def open_subchannel(self, subprotocol, factory):
        def _open(_):
            scid = self._allocate_scid()
            sc = self._new(scid, subprotocol)
            self._inbound.register_subchannel(scid, sc)
            self._outbound.send_open(scid, subprotocol)
            p = factory.buildProtocol(SubchannelAddress(subprotocol, scid))
            sc.attach(p)
            return p
        return self._when_ready().addCallback(_open)

    def got_open(self, scid, subprotocol):
        sc = self._new(scid, subprotocol)
        if (self._expected is not None and subprotocol not in self._expected
                and subprotocol not in self._factories):
            log.msg(f"Dilation: refused an OPEN for unexpected subprotocol {subprotocol!r}")
            sc.attach(_Refusal())
            return sc
        self._unattached.setdefault(subprotocol, []).append(sc)
        if subprotocol in self._factories:
            self._eventually(self._attach_waiting, subprotocol)
        return sc

    def listen(self, subprotocol, factory):
        """Register ``factory`` now; the Deferred fires once the peer is
        connected (``connected``), or fails as ``fail`` says."""
        if subprotocol in self._factories:
            raise ValueError(f"already listening for subprotocol {subprotocol!r}")
        self._factories[subprotocol] = factory
        self._eventually(self._attach_waiting, subprotocol)
        return self._when_ready()

    def stop_listening(self, subprotocol):
        self._factories.pop(subprotocol, None)

    def _attach_waiting(self, subprotocol):
        factory = self._factories.get(subprotocol)
        if factory is None:
            return
        for sc in self._unattached.pop(subprotocol, []):
            sc.attach(factory.buildProtocol(sc.getPeer()))


class _Refusal(Protocol):
    """Closes the subchannel it is given: the answer to an OPEN nobody
    will ever listen for."""

    def connectionMade(self):
        self.transport.loseConnection()


@implementer(IStreamClientEndpoint)
@attr.s
class SubchannelConnectorEndpoint:
    _subprotocol = attr.ib()
    _registry = attr.ib()

    def connect(self, protocolFactory):
        return self._registry.open_subchannel(self._subprotocol, protocolFactory)


@implementer(IListeningPort)
@attr.s
class SubchannelListeningPort:
    _subprotocol = attr.ib()
    _registry = attr.ib()

    def startListening(self):
        pass

    def stopListening(self):
        self._registry.stop_listening(self._subprotocol)
        return succeed(None)

    def getHost(self):
        return SubchannelAddress(self._subprotocol, None)


@implementer(IStreamServerEndpoint)
@attr.s
class SubchannelListenerEndpoint:
    _subprotocol = attr.ib()
    _registry = attr.ib()

    def listen(self, protocolFactory):
        try:
            ready = self._registry.listen(self._subprotocol, protocolFactory)
        except ValueError as e:
            d = Deferred()
            d.errback(e)
            return d
        return ready.addCallback(
            lambda _: SubchannelListeningPort(self._subprotocol, self._registry))
