"""L2 for one generation (Dilation protocol, "Initiating Dilation",
"L2 protocol", "L3 protocol": connection selection).

A Connector listens (unless told not to) and advertises direct-tcp-v1
hints for the addresses Transit allows (``wormhole._transit._addresses``:
``listen_addresses=`` or WORMHOLE_TRANSIT_ADDRESSES restrict both what we
bind and what we advertise), advertises its relay as a relay-v1 hint, and
dials every hint the peer sends (relays after a short delay, so a direct
connection can win first). Each TCP connection gets its own
DilatedConnectionProtocol. The first connection that proves the key (the
Follower's KCM on the Leader; the Leader's KCM on the Follower) is selected:
the others are dropped, pending dials cancelled, listeners closed.

NAT hole punching (docs/transit.md, "Through a NAT: hole punching"): given
the wormhole's NatObserver, once it knows our Mapping the Connector also
listens on the Mailbox connection's port and advertises the outside address
as one more direct-tcp-v1 hint (priority OUTSIDE_PRIORITY, sent later than
the others: Dilation protocol, "Initiating Dilation", lets hints arrive any
time). The peer's outside hints (direct hints below priority 0) are dialled
from that same port, so that both sides' SYNs open each NAT for the other
(TCP simultaneous open), through the same bounded, staggered DialQueue;
relays keep their own timing.
"""

from automat import MethodicalMachine
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.protocol import Factory
from twisted.python import log
from zope.interface import implementer

from .._automat_private import trace_hook
from .._transit._addresses import configured_listen_port
from .._transit._codec import relay_handshake
from .._transit._dialing import dial_queue_for
from .._transit._endpoint_choice import endpoint_for_hint
from .._transit._hints import (
    DirectTCPV1Hint,
    HintBudget,
    RelayV1Hint,
    WebSocketV1Hint,
    describe_hint,
)
from .._transit._punch import (
    THROUGH_NAT,
    forwarded_hint,
    is_outside,
    punch_listener,
    punched_endpoint,
    reusable_binding,
)
from . import _interfaces as I
from ._connection import DEFAULT_KEEPALIVE_INTERVAL, DilatedConnectionProtocol

RELAY_DELAY = 2.0  # seconds a relay waits behind direct hints
DIRECT_PRIORITY = 0.0
RELAY_PRIORITY = -1.0


HOLD_RELAY = 0.5    # the Leader holds a relay candidate this long for a
                    # direct one still being dialled
RETRY_FIRST = 1.0   # seconds before a failed dial is tried again
RETRY_MAX = 30.0    # the backoff doubles up to this

# connections our listening ports hold at once before one is selected
# (docs/security.md, "Dilation"): an honest peer dials each of our hints
# once or twice; anyone who finds the port could otherwise open sockets
# without end, each kept up to HANDSHAKE_TIMEOUT. One more is closed at
# once, before anything is read.
MAX_INBOUND = 64


class _ProtocolFactory(Factory):
    def __init__(self, connector, relay_line=None, description="?", dial_key=None):
        self._connector = connector
        self._relay_line = relay_line
        self._description = description
        self._dial_key = dial_key  # None for the listener's connections

    def buildProtocol(self, addr):
        if self._dial_key is None and not self._connector._inbound_room():
            return None  # Twisted closes the socket at once
        return self._connector._build(self._relay_line, self._description, self._dial_key)


@implementer(I.IDilationConnector)
class Connector:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, dilation_key, is_leader, side, reactor, clock, manager,
                 relay_hint=None, addresses=("127.0.0.1",), no_listen=False,
                 endpoint_for=None, dial_queue=None, tor=None, max_inbound=MAX_INBOUND,
                 keepalive_interval=DEFAULT_KEEPALIVE_INTERVAL, nat=None, proxy=None):
        """``endpoint_for(hint)`` -> an IStreamClientEndpoint for a direct or
        relay hint (None: skip it); the default dials TCP. Every dial goes
        through ``dial_queue`` (default: a DialQueue on ``clock``), and the
        peer's hints are bounded by one HintBudget per generation
        (docs/security.md, "Connection attempts"). With ``tor`` (an
        ITorManager) every dial goes through Tor, tor-tcp-v1 hints too, and
        nothing listens: docs/tor.md, "The library". At most ``max_inbound``
        connections to our listeners are open at once. Each connection's
        keepalive ticks every ``keepalive_interval`` seconds (_connection).
        ``nat``: the wormhole's NatObserver, for punching (None: off).
        ``proxy`` (an IProxy): relays are dialled through it; direct hints
        are neither offered nor dialled unless ``proxy.direct``
        (docs/proxy.md, "Direct hints")."""
        self._key = dilation_key
        self._is_leader = is_leader
        self._side = side
        self._reactor = reactor
        self._clock = clock
        self._manager = manager  # IDilationManager and IRecordReceiver
        # one RelayV1Hint, a list of them (several relays), or None
        if relay_hint is None:
            self._relays = []
        elif isinstance(relay_hint, RelayV1Hint):
            self._relays = [relay_hint]
        else:
            self._relays = list(relay_hint)
        self._addresses = list(addresses)
        self._tor = tor
        self._queue = dial_queue if dial_queue is not None else dial_queue_for(clock, tor)
        # Tor hides our addresses (Tor support, "Usage"): never listen or
        # advertise
        self._proxy = proxy
        self._no_direct = proxy is not None and not proxy.direct
        self._no_listen = no_listen or tor is not None or self._no_direct
        self._listeners = []
        self._dials = set()       # Deferreds of dials in progress
        self._endpoint_for = endpoint_for or self._tcp_endpoint
        self._hint_budget = HintBudget()
        self._timers = []
        self._protocols = set()
        self._max_inbound = max_inbound
        self._refused_inbound = 0
        self._dialled = {}  # dial key -> failed attempts so far
        self._direct_pending = set()  # direct dials not yet failed or proven
        self._held = None   # the relay candidate the Leader is holding
        self._keepalive_interval = keepalive_interval
        self.selected_peer_address = None  # set by _made
        # punching: None while off; else the Mapping's local port once known
        self._nat = None if self._no_listen else nat
        self._punch_port = None
        # $WORMHOLE_LISTEN_PORT (the CLI's --listen-port): a fixed port
        self._listen_port = configured_listen_port()
        self._outside_wanted = []  # the peer's outside hints, until mapped
        self._punched = set()  # hints dialled from the punching port
        self._mapped = False  # punch() ran (the observer answered)

    def _made(self, connection):
        """``connection`` is selected: remember where an inbound one came
        from (``selected_peer_address``, for Dilation's status), then tell
        the Manager."""
        self.selected_peer_address = None
        if connection.dial_key is None:  # the peer dialled us
            transport = getattr(connection, "transport", None)
            peer = transport.getPeer() if transport is not None else None
            if isinstance(peer, (IPv4Address, IPv6Address)):
                self.selected_peer_address = f"{peer.host}:{peer.port}"
        self._manager.connector_connection_made(connection)

    def _build(self, relay_line, description, dial_key=None):
        p = DilatedConnectionProtocol(self._key, self._is_leader, self, self._clock,
                                      relay_handshake=relay_line, description=description,
                                      dial_key=dial_key,
                                      keepalive_interval=self._keepalive_interval)
        self._protocols.add(p)
        return p

    def _inbound_room(self):
        inbound = sum(1 for p in self._protocols if p.dial_key is None)
        if inbound < self._max_inbound:
            return True
        if not self._refused_inbound:
            log.msg(f"Dilation: {inbound} inbound connections are open (the limit); "
                    "closing further ones at once (docs/security.md)")
        self._refused_inbound += 1
        return False

    # -- public, routed to inputs --------------------------------------------

    def _dial_failed(self, key):
        """A dial (or what it connected to, before selection) failed."""
        if key is not None:
            self._direct_over(key)
            self._retry(key)

    def _direct_over(self, key):
        if key in self._direct_pending:
            self._direct_pending.discard(key)
            if not self._direct_pending:
                self._no_direct_pending()

    def add_candidate(self, connection):
        # Dilation protocol, "L3 protocol": the Leader may wait for a better
        # connection. A relay candidate waits (HOLD_RELAY at most) while a
        # direct dial of ours is still in progress; everything else, and
        # every candidate on the Follower (the Leader chose it), is taken.
        key = connection.dial_key
        if (self._is_leader and key is not None and key[0] == "relay"
                and self._direct_pending):
            self._relay_candidate(connection)
        else:
            self._candidate(connection)

    def got_hints(self, hint_dicts):
        hints, dropped = self._hint_budget.parse(hint_dicts)
        for why in dropped:
            log.msg(f"Dilation: ignoring a peer hint: {why}")
        self._got_hints(hints)

    # -- states ------------------------------------------------------------

    @m.state(initial=True)
    def S_idle(self): pass

    @m.state()
    def S_connecting(self): pass

    @m.state()
    def S_selected(self): pass

    @m.state()
    def S_holding_relay(self): pass

    @m.state()
    def S_stopped(self): pass

    # -- inputs ------------------------------------------------------------

    @m.input()
    def start(self): pass

    @m.input()
    def _got_hints(self, hints): pass

    @m.input()
    def _candidate(self, connection): pass

    @m.input()
    def _relay_candidate(self, connection): pass

    @m.input()
    def _hold_expired(self): pass

    @m.input()
    def _no_direct_pending(self): pass

    def candidate_lost(self, connection):
        if connection is not None and connection is self._held:
            self._held_lost(connection)
        else:
            self._candidate_lost(connection)

    @m.input()
    def _candidate_lost(self, connection): pass

    @m.input()
    def _held_lost(self, connection): pass

    @m.input()
    def stop(self): pass

    @m.input()
    def _mapped_input(self, mapping): pass

    @m.input()
    def _retry(self, key): pass

    # -- outputs -----------------------------------------------------------

    @m.output()
    def listen_and_advertise(self):
        hints = []
        if not self._no_listen:
            f = _ProtocolFactory(self, description="inbound")
            for addr in self._addresses:
                # a fixed port is shared with the previous generation's
                # listener, which may not have closed yet
                where = (reusable_binding(self._listen_port, addr)
                         if self._listen_port else 0)
                port = self._reactor.listenTCP(where, f, interface=addr)
                self._listeners.append(port)
                hints.append(DirectTCPV1Hint(addr, port.getHost().port, DIRECT_PRIORITY))
        hints.extend(self._relays)
        if hints:
            self._manager.send_hints([h.to_dict() for h in hints])
        for relay in self._relays:
            # our own relays are dialled even if the peer never names them:
            # both sides must reach one for it to pair us. Without a
            # listener of ours there is no direct path to wait for.
            if self._no_listen:
                self._dial_relay(relay)
            else:
                self._timers.append(self._clock.callLater(RELAY_DELAY, self._dial_relay,
                                                          relay))
        if self._nat is not None:
            self._nat.mapping().addCallback(self._mapped_input)

    @m.output()
    def dial(self, hints):
        for h in hints:
            if isinstance(h, RelayV1Hint):
                # nothing direct to wait for behind a proxy
                delay = 0 if self._no_direct else RELAY_DELAY
                self._timers.append(self._clock.callLater(delay, self._dial_relay, h))
            elif self._no_direct:
                log.msg(f"Dilation: {describe_hint(h)} skipped: a direct connection "
                        "behind the proxy (docs/proxy.md, \"Direct hints\")")
            elif self._nat is not None and is_outside(h) and not self._mapped:
                # dialled from the punching port once we know it (punch)
                self._outside_wanted.append(h)
            else:
                self._dial_maybe_punched(h)

    @m.output()
    def punch(self, mapping):
        port, hint = punch_listener(self._reactor, mapping, _ProtocolFactory(
            self, description="inbound"), "Dilation")
        hints = []
        if port is not None:
            self._punch_port = mapping.local_port
            self._listeners.append(port)
            hints.append(hint)
        forwarded = forwarded_hint(mapping, self._listen_port)
        if forwarded is not None and forwarded != hint:
            hints.append(forwarded)
        if hints:
            self._manager.send_hints([h.to_dict() for h in hints])
        self._dial_outside()

    def _dial_outside(self):
        self._mapped = True
        wanted, self._outside_wanted = self._outside_wanted, []
        for h in wanted:
            self._dial_maybe_punched(h)

    def _dial_maybe_punched(self, h):
        if self._punch_port is not None and is_outside(h):
            self._punched.add(h)
        self._dial_direct(h)

    def _tcp_endpoint(self, hint):
        if hint in self._punched:
            return punched_endpoint(self._reactor, hint, self._punch_port)
        return endpoint_for_hint(self._reactor, hint, self._tor,
                                 tcp_endpoint=TCP4ClientEndpoint)

    def _dial_direct(self, h):
        key = ("direct", h, None)
        if key not in self._dialled:
            self._dialled[key] = 0
            self._dial(key)

    def _dial_relay(self, relay):
        line = relay_handshake(self._key, self._side)
        for h in relay.hints:
            key = ("relay", h, line)
            if key not in self._dialled:
                self._dialled[key] = 0
                self._dial(key)

    def _dial(self, key):
        kind, hint, line = key
        try:
            if kind == "relay" and self._proxy is not None:
                ep = endpoint_for_hint(self._reactor, hint, proxy=self._proxy)
            else:
                ep = self._endpoint_for(hint)
        except ValueError as e:  # txtorcon: "isn't going to work over Tor"
            log.msg(f"Dilation: {describe_hint(hint)} skipped: {e}")
            return
        if ep is None:
            log.msg(f"Dilation: {describe_hint(hint)} cannot be reached without Tor; ignored")
            return
        if kind == "direct":
            self._direct_pending.add(key)
        description = describe_hint(hint)
        if hint in self._punched:
            description += THROUGH_NAT  # the CLI's path line says so
        if kind == "relay":
            # "->relay:HOST:PORT" over TCP, "->relay:ws://..." over WebSocket
            description = "->relay:" + (hint.url if isinstance(hint, WebSocketV1Hint)
                                        else description.split(":", 1)[1])
            if self._proxy is not None:
                description += self._proxy.route_note(hint.hostname)
        f = _ProtocolFactory(self, relay_line=line, description=description, dial_key=key)
        self._queue.add(lambda: self._start_dial(ep, f, key), urgent=(kind == "relay"))

    def _start_dial(self, ep, factory, key):
        d = ep.connect(factory)
        self._dials.add(d)

        def connected(proto):
            self._dials.discard(d)

        def failed(f):
            self._dials.discard(d)
            self._dial_failed(key)
        d.addCallbacks(connected, failed)
        return d

    @m.output()
    def schedule_retry(self, key):
        # Dilation protocol, "Initiating Dilation": the agent tries forever.
        # Each hint is dialled again after a doubling delay until a
        # connection of this generation is selected or the generation is
        # stopped.
        n = self._dialled.get(key, 0)
        self._dialled[key] = n + 1
        delay = min(RETRY_MAX, RETRY_FIRST * 2 ** n)
        self._timers = [t for t in self._timers if t.active()]
        self._timers.append(self._clock.callLater(delay, self._dial, key))

    @m.output()
    def select_it(self, connection):
        connection.select(self._manager)

    @m.output()
    def drop_others(self, connection):
        self._stop_all(keep=connection)

    @m.output()
    def report(self, connection):
        self._made(connection)

    @m.output()
    def forget(self, connection):
        self._protocols.discard(connection)

    @m.output()
    def retry_if_dialled(self, connection):
        key = connection.dial_key
        if key is not None:
            self._direct_over(key)
            self._retry(key)

    @m.output()
    def hold(self, connection):
        self._held = connection
        self._hold_timer = self._clock.callLater(HOLD_RELAY, self._hold_expired)
        self._timers.append(self._hold_timer)

    @m.output()
    def cancel_hold(self):
        self._held = None
        if self._hold_timer.active():
            self._hold_timer.cancel()

    @m.output()
    def select_held(self):
        c, self._held = self._held, None
        c.select(self._manager)
        self._stop_all(keep=c)
        self._made(c)

    @m.output()
    def release_held(self):
        self._held = None  # dropped with the others by drop_others


    @m.output()
    def drop_candidate(self, connection):
        connection.disconnect()

    @m.output()
    def stop_everything(self):
        self._stop_all(keep=None)

    def _stop_all(self, keep):
        for t in self._timers:
            if t.active():
                t.cancel()
        self._timers = []
        for port in self._listeners:
            port.stopListening()
        self._listeners = []
        self._queue.stop()
        dials, self._dials = self._dials, set()
        for d in dials:
            d.cancel()  # its errback runs _dial_failed: no retry once stopped
        for p in list(self._protocols):
            if p is not keep:
                p.disconnect()
        self._protocols = set()

    # -- transitions -------------------------------------------------------

    S_idle.upon(start, enter=S_connecting, outputs=[listen_and_advertise])
    S_idle.upon(stop, enter=S_stopped, outputs=[])
    S_idle.upon(_retry, enter=S_idle, outputs=[])

    # the Leader holds a relay candidate while a direct dial may still win
    S_holding_relay.upon(_candidate, enter=S_selected,
                         outputs=[release_held, select_it, drop_others, report])
    S_holding_relay.upon(_relay_candidate, enter=S_holding_relay, outputs=[drop_candidate])
    S_holding_relay.upon(_hold_expired, enter=S_selected, outputs=[select_held])
    S_holding_relay.upon(_no_direct_pending, enter=S_selected, outputs=[select_held])
    S_holding_relay.upon(_candidate_lost, enter=S_holding_relay,
                         outputs=[forget, retry_if_dialled])
    S_holding_relay.upon(_held_lost, enter=S_connecting,
                         outputs=[cancel_hold, forget, retry_if_dialled])
    S_holding_relay.upon(_got_hints, enter=S_holding_relay, outputs=[dial])
    S_holding_relay.upon(_retry, enter=S_holding_relay, outputs=[schedule_retry])
    S_holding_relay.upon(stop, enter=S_stopped, outputs=[release_held, stop_everything])

    S_connecting.upon(_got_hints, enter=S_connecting, outputs=[dial])
    # Dilation protocol, "L3 protocol": the Leader selects the first viable
    # connection (no wait for a "better" one yet); the Follower takes the one the Leader's KCM names
    S_connecting.upon(_candidate, enter=S_selected, outputs=[select_it, drop_others, report])
    S_connecting.upon(_relay_candidate, enter=S_holding_relay, outputs=[hold])
    S_connecting.upon(_hold_expired, enter=S_connecting, outputs=[])
    S_connecting.upon(_no_direct_pending, enter=S_connecting, outputs=[])
    S_connecting.upon(_candidate_lost, enter=S_connecting, outputs=[forget, retry_if_dialled])
    S_connecting.upon(_retry, enter=S_connecting, outputs=[schedule_retry])
    S_connecting.upon(stop, enter=S_stopped, outputs=[stop_everything])
    S_connecting.upon(_mapped_input, enter=S_connecting, outputs=[punch])
    S_holding_relay.upon(_mapped_input, enter=S_holding_relay, outputs=[punch])
    S_selected.upon(_mapped_input, enter=S_selected, outputs=[])
    S_stopped.upon(_mapped_input, enter=S_stopped, outputs=[])

    S_selected.upon(_got_hints, enter=S_selected, outputs=[])
    S_selected.upon(_candidate, enter=S_selected, outputs=[drop_candidate])
    S_selected.upon(_relay_candidate, enter=S_selected, outputs=[drop_candidate])
    S_selected.upon(_hold_expired, enter=S_selected, outputs=[])
    S_selected.upon(_no_direct_pending, enter=S_selected, outputs=[])
    S_selected.upon(_candidate_lost, enter=S_selected, outputs=[])
    S_selected.upon(_retry, enter=S_selected, outputs=[])
    S_selected.upon(stop, enter=S_stopped, outputs=[])

    S_stopped.upon(_got_hints, enter=S_stopped, outputs=[])
    S_stopped.upon(_candidate, enter=S_stopped, outputs=[drop_candidate])
    S_stopped.upon(_relay_candidate, enter=S_stopped, outputs=[drop_candidate])
    S_stopped.upon(_hold_expired, enter=S_stopped, outputs=[])
    S_stopped.upon(_no_direct_pending, enter=S_stopped, outputs=[])
    S_stopped.upon(_candidate_lost, enter=S_stopped, outputs=[])
    S_stopped.upon(_retry, enter=S_stopped, outputs=[])
    S_stopped.upon(stop, enter=S_stopped, outputs=[])
