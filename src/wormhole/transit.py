"""Transit: an encrypted record pipe over direct TCP or a relay (Transit protocol).

Public names (Transit protocol, "API", with the reference 0.24's names):
``TransitSender``, ``TransitReceiver``, ``TransitError``, ``TransitClosed``,
``BadHandshake``, ``BadNonce``, ``FileConsumer``. A Transit object is used
once:

    t = TransitSender("tcp:relay.example.org:4001")
    hints = yield t.get_connection_hints()   # send them via the wormhole
    t.add_connection_hints(their_hints)      # ... and give theirs here
    t.set_transit_key(w.derive_key(appid + "/transit-key", 32))
    pipe = yield t.connect()                 # records, IProducer/IConsumer

``connect()`` may come before ``set_transit_key()``: it waits for the key,
as the reference's does. The reactor is looked up when a Transit is made
without one, never at import.

The pieces live in ``wormhole._transit`` (hints, the sans-I/O codec, the
connection and selection machines, the record pipe, local addresses).
"""

import os

from twisted.internet import defer, endpoints, protocol
from twisted.python import failure, log

from ._transit._addresses import configured_addresses, configured_listen_port, discover_addresses
from ._transit._attempts import Attempts
from ._transit._codec import receiver_handshake, relay_handshake, sender_handshake
from ._transit._connection import ConnectionProtocol
from ._transit._file import FileConsumer
from ._transit._hints import (
    DIRECT_TCP_V1,
    RELAY_V1,
    TOR_TCP_V1,
    DirectTCPV1Hint,
    HintBudget,
    RelayV1Hint,
    TorTCPV1Hint,
    describe_hint,
    parse_relay_locations,
)
from ._transit._interfaces import IRecordPipe, ITransitConnection
from ._transit._punch import THROUGH_NAT, forwarded_hint, punch_listener
from ._transit._selection import Selection, TransitError
from ._transit_helpers import allocate_tcp_port, there_can_be_only_one

__all__ = [
    "BadHandshake",
    "BadNonce",
    "FileConsumer",
    "IRecordPipe",
    "ITransitConnection",
    "TransitClosed",
    "TransitError",
    "TransitReceiver",
    "TransitSender",
    "allocate_tcp_port",
    "build_receiver_handshake",
    "build_sender_handshake",
    "build_sided_relay_handshake",
    "there_can_be_only_one",
]

# the reference 0.24's names for the handshakes of Transit protocol,
# "Handshake" and "Relay"
# (pure functions of the key; applications' tests build them to talk to
# a Transit relay or peer by hand)
build_sender_handshake = sender_handshake
build_receiver_handshake = receiver_handshake
build_sided_relay_handshake = relay_handshake


# The reference 0.24's exception names, for applications' ``except``
# clauses. As there, a peer's bad handshake or out-of-order record ends only
# that connection attempt (Transit protocol, "Handshake"): connect() then
# fails with TransitError if no other attempt wins, and a pipe whose
# connection ends fails its waiting receive_record() with ConnectionClosed.
class BadHandshake(Exception):
    """A peer's Transit handshake was not the one expected."""


class TransitClosed(TransitError):
    """The Transit connection is closed."""


class BadNonce(TransitError):
    """A record arrived out of order (Transit protocol, "Nonces": they count
    up)."""

# Transit protocol, "Relay": "wait a few seconds before attempting to use
# the relay" when there are direct hints; the reference waits 2 s
DEFAULT_RELAY_DELAY = 2.0
# Transit protocol, "API": connect() fails after 30 seconds by default
DEFAULT_CONNECT_TIMEOUT = 30.0


class _InboundFactory(protocol.Factory):
    def __init__(self, transit, suffix=""):
        self._transit = transit
        self._suffix = suffix  # THROUGH_NAT on the punching port's listener

    def buildProtocol(self, addr):
        proto = ConnectionProtocol()
        self._transit._inbound(proto, f"<-tcp:{addr.host}:{addr.port}{self._suffix}")
        return proto


class _Transit:
    _is_sender = None  # set by the subclasses

    def __init__(self, transit_relay, no_listen=False, tor=None,
                 reactor=None, timing=None, *,
                 listen_addresses=None, listen_port=None,
                 relay_delay=DEFAULT_RELAY_DELAY,
                 connect_timeout=DEFAULT_CONNECT_TIMEOUT,
                 side=None, proxy=None):
        """``transit_relay``: our baked-in relay, ``"tcp:HOST:PORT"``, a
        ``"ws://HOST:PORT/"`` or ``"wss://..."`` URL, several of those
        separated by commas (or a list), or None.

        Beyond the reference's arguments (all keyword-only):
        ``listen_addresses`` restricts which local addresses we bind and
        advertise (default: ``$WORMHOLE_TRANSIT_ADDRESSES``, else all);
        ``listen_port`` fixes the port we listen on (default:
        ``$WORMHOLE_LISTEN_PORT``, else any; docs/transit.md);
        ``relay_delay`` is how long relays wait when direct hints exist;
        ``connect_timeout`` bounds ``connect()``; ``side`` (16 hex digits)
        fixes the relay side for known-answer tests. ``proxy`` (a
        ``wormhole.proxy.Proxy``): relays are dialled through it, and
        direct hints are neither offered nor dialled unless
        ``proxy.direct`` (docs/proxy.md, "Direct hints").
        """
        if reactor is None:
            # looked up now, not at import: importing this module must not
            # install the global reactor
            from twisted.internet import reactor
        self._reactor = reactor
        self._timing = timing
        self._tor = tor
        # Tor hides our addresses (Tor support, "Usage"): never listen or
        # advertise
        if tor is not None and proxy is not None:
            raise ValueError("tor= and proxy= exclude each other: Tor is a proxy of its own")
        self._proxy = proxy
        self._no_direct = proxy is not None and not proxy.direct
        self._no_listen = bool(no_listen) or tor is not None or self._no_direct
        self._listen_addresses = configured_addresses(listen_addresses)
        self._listen_port = configured_listen_port(listen_port)
        self._relay_delay = relay_delay
        self._connect_timeout = connect_timeout
        self._side = side if side is not None else os.urandom(8).hex()
        self._our_relays = []
        if transit_relay is not None:
            self._our_relays = parse_relay_locations(transit_relay)
        self._their_direct = []
        self._their_relays = []
        self._hint_budget = HintBudget()
        self._key = None
        self._hints_d = None
        self._ports = []
        self._early_inbound = []
        self._attempts = None
        self._selection = None
        self._connect_d = None  # connect() waiting for set_transit_key()
        # a Deferred Mapping, from set_nat_mapping() (docs/transit.md,
        # "Through a NAT: hole punching")
        self._nat = None
        self._punch_port = None

    # abilities and hints (File-transfer protocol, "Transit")

    def get_connection_abilities(self):
        abilities = [{"type": DIRECT_TCP_V1}, {"type": RELAY_V1}]
        if self._tor is not None:
            abilities.insert(1, {"type": TOR_TCP_V1})
        return abilities

    def get_connection_hints(self):
        """Deferred list of hint dicts: our direct ones, then our relays."""
        # the listener is built once; every caller gets the same hints
        if self._hints_d is None:
            self._hints_d = self._build_hints()
            self._hints_waiters = []
            self._hints_d.addBoth(self._hints_ready)
        if self._hints_waiters is None:
            return defer.succeed(list(self._hints_result)) if not isinstance(
                self._hints_result, failure.Failure) else defer.fail(self._hints_result)
        d = defer.Deferred()
        self._hints_waiters.append(d)
        return d

    def _hints_ready(self, result):
        self._hints_result = result
        waiters, self._hints_waiters = self._hints_waiters, None
        for d in waiters:
            if isinstance(result, failure.Failure):
                d.errback(result)
            else:
                d.callback(list(result))

    def set_nat_mapping(self, mapping_d):
        """NAT hole punching (docs/transit.md, "Through a NAT: hole punching";
        ours, not the reference's): a Deferred of the wormhole's NAT mapping
        (``w._nat_mapping()``); call before get_connection_hints()."""
        self._nat = mapping_d

    @defer.inlineCallbacks
    def _build_hints(self):
        hints = []
        if not self._no_listen:
            port = yield self._listen()
            addresses = self._listen_addresses or discover_addresses()
            hints.extend(DirectTCPV1Hint(a, port, 0.0).to_dict() for a in addresses)
            if self._nat is not None:
                mapping = yield self._nat
                punched, hint = punch_listener(self._reactor, mapping,
                                               _InboundFactory(self, THROUGH_NAT), "transit")
                if punched is not None:
                    self._ports.append(punched)
                    self._punch_port = mapping.local_port
                    hints.append(hint.to_dict())
                forwarded = forwarded_hint(mapping, self._listen_port)
                if forwarded is not None and forwarded != hint:
                    hints.append(forwarded.to_dict())
        hints.extend(r.to_dict() for r in self._our_relays)
        return hints

    @defer.inlineCallbacks
    def _listen(self):
        factory = _InboundFactory(self)
        if self._listen_addresses is None:
            ep = endpoints.TCP4ServerEndpoint(self._reactor, self._listen_port or 0)
            self._ports.append((yield ep.listen(factory)))
            return self._ports[0].getHost().port
        # the same port number on every allowed address, so one number
        # serves every hint; the first one picks it
        portnum = self._listen_port or 0
        for address in self._listen_addresses:
            cls = (endpoints.TCP6ServerEndpoint if ":" in address
                   else endpoints.TCP4ServerEndpoint)
            ep = cls(self._reactor, portnum, interface=address)
            p = yield ep.listen(factory)
            self._ports.append(p)
            portnum = p.getHost().port
        return portnum

    def _stop_listening(self):
        ports, self._ports = self._ports, []
        return defer.gatherResults([defer.maybeDeferred(p.stopListening) for p in ports])

    def stop(self):
        """Give up: cancel a running ``connect()``, close the listener and
        any inbound connection still waiting for ``connect()``.

        Not in the reference's API: it lets an application (or a test)
        that abandons a transfer before or during ``connect()`` leave no
        open port behind. A pipe ``connect()`` already delivered is not
        touched (close it with its own ``close()``). Returns a Deferred
        that fires once the listener is closed.
        """
        if self._selection is not None:
            self._selection.cancel()
        if self._connect_d is not None:
            self._connect_d.cancel()
        early, self._early_inbound = self._early_inbound, []
        for proto, _ in early:
            proto.transport.loseConnection()
        return self._stop_listening()

    def _inbound(self, proto, description):
        if self._attempts is None:
            self._early_inbound.append((proto, description))
        else:
            self._attempts.adopt_inbound(proto, description)

    def add_connection_hints(self, hints):
        """The peer's hint dicts; unusable ones are logged and skipped."""
        good, dropped = self._hint_budget.parse(hints)
        for reason in dropped:
            log.msg(f"transit: ignoring a hint from our peer: {reason}")
        for h in good:
            if isinstance(h, RelayV1Hint):
                self._their_relays.append(h)
            elif self._no_direct:
                log.msg(f"transit: ignoring direct hint {describe_hint(h)}: a direct "
                        "connection behind the proxy (docs/proxy.md, \"Direct hints\")")
            elif isinstance(h, TorTCPV1Hint) and self._tor is None:
                log.msg(f"transit: ignoring tor-tcp-v1 hint {h.hostname}:{h.port}: "
                        "Tor is not available to this Transit")
            else:
                self._their_direct.append(h)

    def set_transit_key(self, key):
        if not isinstance(key, bytes):
            raise TypeError(f"the transit key must be bytes, not {type(key).__name__}")
        if self._key is not None:
            raise TransitError("set_transit_key() may only be called once")
        self._key = key
        waiting, self._connect_d = self._connect_d, None
        if waiting is not None:
            self._start_connecting().chainDeferred(waiting)

    # connecting (Transit protocol, "Handshake", "Relay")

    def connect(self):
        """Deferred firing with the record pipe, or failing with TransitError.
        Before set_transit_key() it waits for the key."""
        if self._selection is not None or self._connect_d is not None:
            return defer.fail(TransitError("connect() may only be called once"))
        if self._key is None:
            self._connect_d = defer.Deferred(lambda d: self._cancel_waiting())
            return self._connect_d
        return self._start_connecting()

    def _cancel_waiting(self):
        self._connect_d = None

    def _start_connecting(self):
        relays = []
        for r in self._our_relays + self._their_relays:
            if r not in relays:
                relays.append(r)
        self._selection = Selection(self._reactor, self._connect_timeout)
        self._attempts = Attempts(
            self._reactor, self._key, self._is_sender, self._side,
            self._their_direct, relays, tor=self._tor, proxy=self._proxy,
            listening=bool(self._ports), on_stop=self._stop_listening,
            punch_port=self._punch_port)
        self._attempts.wire(self._selection)
        self._selection.wire(self._attempts)
        delay = self._relay_delay if self._their_direct else 0.0
        d = self._selection.when_connected()
        if self._timing is not None:
            event = self._timing.add("transit connect", side=self._side)
            d.addBoth(lambda r: (event.finish(), r)[1])
        self._selection.start(delay)
        # peers that dialed us before we had the key join the race now
        early, self._early_inbound = self._early_inbound, []
        for proto, description in early:
            self._attempts.adopt_inbound(proto, description)
        return d


class TransitSender(_Transit):
    """The Transit end that decides which connection wins (Transit protocol,
    "Roles")."""

    _is_sender = True


class TransitReceiver(_Transit):
    """The Transit end that waits for the Sender's ``go`` (Transit protocol,
    "Roles")."""

    _is_sender = False
