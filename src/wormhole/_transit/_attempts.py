"""The connection attempts of one ``connect()``: the Selection's hands.

The Selection machine decides *when*; this object does the I/O it asks for
(dial direct hints, dial relays, stop the losers) and counts what is still
outstanding, so that ``connect()`` fails at once when every attempt failed
and nothing can still arrive, instead of waiting for the timeout.
"""

from twisted.internet import protocol
from twisted.python import log
from zope.interface import implementer

from . import _codec
from ._connection import ConnectionProtocol, TransitConnection
from ._dialing import dial_queue_for
from ._endpoint_choice import endpoint_for_hint
from ._hints import describe_hint
from ._interfaces import IAttempts, ISelection
from ._pipe import RecordPipe
from ._punch import THROUGH_NAT, is_outside, punched_endpoint


class _OneShotFactory(protocol.ClientFactory):
    """Hands out the one protocol built for this dial.

    The machine and its shell exist before the socket does, so a dial has
    exactly one protocol; a second connection from the same endpoint (it
    should not happen) is refused rather than sharing it.
    """

    def __init__(self, proto):
        self._proto = proto

    def buildProtocol(self, addr):
        proto, self._proto = self._proto, None
        if proto is not None:
            proto.factory = self
        return proto


@implementer(IAttempts)
class Attempts:
    def __init__(self, reactor, key, is_sender, side, direct_hints,
                 relay_hints, tor=None, listening=False, on_stop=None,
                 endpoint_for=None, dial_queue=None, punch_port=None, proxy=None):
        """``endpoint_for(hint)`` -> client endpoint, or None to skip the
        hint; the default dials TCP (or through ``tor``). Tests inject it.
        ``dial_queue`` paces and bounds the dials (default: a DialQueue on
        ``reactor``'s clock, see ``_dialing``). ``punch_port``: our NAT
        punching port (docs/transit.md, "Through a NAT: hole punching"), from which the
        peer's outside hints are dialled. ``proxy`` (an IProxy): relays go
        through it (docs/proxy.md)."""
        self._proxy = proxy
        self._punch_port = punch_port
        self._reactor = reactor
        self._key = key
        self._is_sender = is_sender
        self._side = side
        self._direct = list(direct_hints)
        self._relays = list(relay_hints)
        self._tor = tor
        self._listening = listening
        self._on_stop = on_stop
        self._pending = set()  # Deferreds of endpoint.connect
        self._connections = {}  # TransitConnection -> ConnectionProtocol
        self._failed = set()
        self._relay_launched = False
        self._stopped = False
        self._last_reason = "no hints to connect to"
        self._endpoint_for = endpoint_for or self._default_endpoint
        self._queue = dial_queue if dial_queue is not None else dial_queue_for(reactor, tor)

    def wire(self, selection):
        self._selection = ISelection(selection)

    def _default_endpoint(self, hint):
        return endpoint_for_hint(self._reactor, hint, self._tor)

    def _dial(self, hint, relay_line, description, urgent=False):
        try:
            if self._punch_port is not None and relay_line is None and is_outside(hint):
                # docs/transit.md, "Through a NAT: hole punching": simultaneous open
                description += THROUGH_NAT
                ep = punched_endpoint(self._reactor, hint, self._punch_port)
            elif relay_line is not None and self._proxy is not None:
                ep = endpoint_for_hint(self._reactor, hint, proxy=self._proxy)
                description += self._proxy.route_note(hint.hostname)
            else:
                ep = self._endpoint_for(hint)
        except ValueError as e:
            # txtorcon refuses private address literals: "isn't going to
            # work over Tor"; the other hints still get their try
            log.msg(f"transit: skipping {description}: {e}")
            return
        if ep is None:
            log.msg(f"transit: skipping {description}: tor-tcp-v1 needs Tor, "
                    "and this Transit has none")
            return
        self._queue.add(lambda: self._start_dial(ep, relay_line, description), urgent)

    def _start_dial(self, ep, relay_line, description):
        conn = TransitConnection(self._key, self._is_sender, relay_line, description)
        proto = ConnectionProtocol()
        conn.wire(proto, self._selection)
        proto.attach(conn)
        self._connections[conn] = proto
        d = ep.connect(_OneShotFactory(proto))
        self._pending.add(d)

        def connected(p):
            self._pending.discard(d)

        def failed(f):
            self._pending.discard(d)
            self._connections.pop(conn, None)
            self._last_reason = f"{description}: {f.getErrorMessage()}"
            self._check_all_failed()
        d.addCallbacks(connected, failed)
        return d

    def launch_direct(self):
        for hint in self._direct:
            self._dial(hint, None, describe_hint(hint))
        self._check_all_failed()

    def launch_relay(self):
        self._relay_launched = True
        line = _codec.relay_handshake(self._key, self._side)
        for relay in self._relays:
            for hint in relay.hints:
                self._dial(hint, line, "->relay:" + describe_hint(hint)[2:], urgent=True)
        self._check_all_failed()

    def adopt_inbound(self, proto, description):
        if self._stopped:
            # accepted just before the listener closed: the race is over
            proto.transport.loseConnection()
            return
        conn = TransitConnection(self._key, self._is_sender, None, description)
        conn.wire(proto, self._selection)
        self._connections[conn] = proto
        proto.attach(conn)

    def connection_failed(self, connection):
        self._connections.pop(connection, None)
        self._last_reason = f"{connection.describe()}: closed during negotiation"
        self._check_all_failed()

    def _check_all_failed(self):
        if (self._relay_launched or not self._relays) and not self._pending \
                and not self._queue.queued() and not self._connections \
                and not self._listening:
            self._selection.all_failed(self._last_reason)

    def stop_all_except(self, winner):
        self._stopped = True
        self._listening = False
        if self._on_stop is not None:
            self._on_stop()
        self._queue.stop()
        pending, self._pending = self._pending, set()
        for d in pending:
            d.cancel()
        for conn in list(self._connections):
            if conn is not winner:
                conn.stop()

    def make_pipe(self, connection):
        proto = self._connections[connection]
        return RecordPipe(connection, proto.transport, connection.describe())
