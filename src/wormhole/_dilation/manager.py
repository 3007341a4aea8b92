"""L1 Dilation manager (spec 000 "Initiating Dilation", "Leaders and
Followers") and the application-facing ``DilatedWormhole``.

The Manager speaks DILATE-n messages through the Boss: ``please`` (our
random 16-hex Dilation side and the version we would use), then
``connection-hints`` per generation; the Leader (larger side) sends
``reconnect`` when it loses the L3, the Follower drops everything and
answers ``reconnecting``, and both start the next generation.

The module path is public: applications written for the reference import
``wormhole._dilation.manager.DilatedWormhole`` (docs/api.md, "Dilation").
"""

import os

import attr
from automat import MethodicalMachine
from twisted.python import log
from zope.interface import implementer

from .._status import ConnectedPeer, ConnectingPeer, DilationHint, ReconnectingPeer
from .._tracing import trace_hook
from ..util import bytes_to_dict, bytes_to_hexstr
from . import _interfaces as I
from ._endpoints import SubchannelConnectorEndpoint, SubchannelListenerEndpoint
from ._records import Ack, Data, Ping, Pong

SUPPORTED_VERSIONS = ["ged"]  # best first (spec 000 "Versions and can-dilate")
# send_ping(): PINGs waiting for their PONG at once (a bound on the dict)
MAX_PINGS_OUTSTANDING = 1000


class OldPeerCannotDilateError(Exception):
    """The peer's version message has no ``can-dilate`` we share (spec 000
    "Initiating Dilation"): it cannot dilate; upgrade the peer's software."""


class CanOnlyDilateOnceError(Exception):
    """dilate() was called a second time on the same wormhole (the
    reference 0.24's error for it)."""


class DilationProtocolError(Exception):
    """The peer broke the Dilation L1 protocol."""


def make_side():
    """A fresh random Dilation side: 16 lower-case hex digits (spec 000)."""
    return bytes_to_hexstr(os.urandom(8))


def describe_hints(hints):
    """DilationHints for the hint dicts of a ``connection-hints`` message
    (spec 000: ``direct-tcp-v1`` hints, and ``relay-v1`` hints that hold
    their own list of direct hints); malformed entries are skipped."""
    found = []
    for hint in hints:
        if not isinstance(hint, dict):
            continue
        if hint.get("type") == "direct-tcp-v1":
            found.append((hint, True))
        elif hint.get("type") == "relay-v1" and isinstance(hint.get("hints"), list):
            found.extend((h, False) for h in hint["hints"] if isinstance(h, dict))
    return [DilationHint(f"{h.get('hostname')}:{h.get('port')}", is_direct)
            for h, is_direct in found]


def choose_version(their_can_dilate):
    """Our best version the peer also lists, or None."""
    if not isinstance(their_can_dilate, list):
        return None
    for v in SUPPORTED_VERSIONS:
        if v in their_can_dilate:
            return v
    return None


@attr.s
class DilatedWormhole:
    """What ``w.dilate()`` returns (spec 000 "Initiating Dilation").

    ``when_dilated()`` fires once the first peer connection exists (or
    fails when Dilation cannot happen), as in the reference 0.24."""
    _registry = attr.ib()
    _when_dilated = attr.ib()

    def when_dilated(self):
        """A Deferred that fires with None once the peers are connected."""
        return self._when_dilated()

    def connector_for(self, subprotocol_name):
        """An IStreamClientEndpoint opening subchannels for ``subprotocol_name``."""
        if not isinstance(subprotocol_name, str):
            raise TypeError(f"subprotocol name must be a str, "
                            f"not {type(subprotocol_name).__name__}")
        return SubchannelConnectorEndpoint(subprotocol_name, self._registry)

    def listener_for(self, subprotocol_name):
        """An IStreamServerEndpoint accepting subchannels for ``subprotocol_name``."""
        if not isinstance(subprotocol_name, str):
            raise TypeError(f"subprotocol name must be a str, "
                            f"not {type(subprotocol_name).__name__}")
        return SubchannelListenerEndpoint(subprotocol_name, self._registry)


@implementer(I.IDilationManager, I.IRecordReceiver)
class Manager:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, side, use_version, send_dilate, inbound, outbound, registry,
                 make_connector, clock=None, on_status=None, ping_interval=None,
                 entropy=os.urandom, on_hints=None):
        self._side = side
        self._clock = clock
        # dilate(ping_interval=P), as the reference 0.24 behaves on the
        # wire: the Leader sends a PING (random 4-byte id) every P seconds
        # and drops the connection (so reconnects) when the previous PING
        # got no PONG by the next tick
        self._ping_interval = ping_interval
        self._entropy = entropy
        self._ping_timer = None
        self._ping_outstanding = None
        self._pings_answered = 0  # for tests and debugging
        # on_status(generation, peer_connection): UX only (spec 000
        # "Initiating Dilation", DilationStatus)
        self._on_status = on_status or (lambda generation, peer: None)
        # on_hints([DilationHint]): the peer's hints as they arrive (UX)
        self._on_hints = on_hints or (lambda hints: None)
        self._use_version = use_version
        self._send_dilate = send_dilate        # f(dict) -> the next dilate-N
        self._inbound = I.IInbound(inbound)
        self._outbound = I.IOutbound(outbound)
        self._registry = registry
        self._make_connector = make_connector  # f(is_leader, generation, manager)
        self._connector = None
        self._connection = None
        self._generation = 0
        self._is_leader = None
        self._pongs = {}

    # -- public, validated, routed to inputs --------------------------------

    def got_dilate(self, plaintext):
        try:
            msg = bytes_to_dict(plaintext)  # nesting checked first (issue 11)
            kind = msg["type"]
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            log.msg(f"Dilation: unparseable DILATE message ignored: {e!r}")
            return
        if kind == "please":
            side = msg.get("side")
            if not isinstance(side, str) or side == self._side:
                log.msg(f"Dilation: please with bad side {side!r} ignored")
                return
            if side < self._side:
                self._rx_please_we_lead(msg.get("use-version"))
            else:
                self._rx_please_they_lead(msg.get("use-version"))
        elif kind == "connection-hints":
            hints = msg.get("hints")
            if isinstance(hints, list):
                self._rx_hints(hints)
        elif kind == "reconnect":
            self._rx_reconnect()
        elif kind == "reconnecting":
            self._rx_reconnecting()
        else:
            log.msg(f"Dilation: unknown DILATE message type {kind!r} ignored")

    def send_hints(self, hints):
        self._send_dilate({"type": "connection-hints", "hints": hints})

    def got_record(self, connection, record):
        if connection is not self._connection:
            return  # a stale generation's straggler
        if isinstance(record, Data):
            self._inbound.got_record(record)
        elif isinstance(record, Ping):
            connection.send_record(Pong(record.ping_id))
        elif isinstance(record, Pong):
            if record.ping_id == self._ping_outstanding:
                self._ping_outstanding = None
                self._pings_answered += 1
            waiting = self._pongs.pop(record.ping_id, None)
            if waiting is not None:
                on_pong, sent_at = waiting
                if on_pong is not None:
                    on_pong(self._now() - sent_at)
        elif isinstance(record, Ack):
            self._outbound.handle_ack(record.resp_seqnum)
        else:
            self._inbound.got_record(record)

    def end_of_batch(self, connection):
        if connection is self._connection:
            self._inbound.end_of_batch()

    def connection_lost(self, connection):
        if connection is self._connection:
            self._l3_lost()

    def send_ping(self, ping_id, on_pong=None):
        """Send a PING (Leader or Follower) over the current L3, if any;
        ``on_pong(round_trip_seconds)`` runs when the matching PONG
        arrives, as the reference 0.24 calls it. ``ping_id`` is 4 bytes or
        an int below 2**32; at most MAX_PINGS_OUTSTANDING wait at once."""
        if isinstance(ping_id, int) and not isinstance(ping_id, bool):
            ping_id = ping_id.to_bytes(4, "big")
        if not isinstance(ping_id, bytes) or len(ping_id) != 4:
            raise ValueError(f"ping_id must be 4 bytes or an int below 2**32, not {ping_id!r}")
        if ping_id in self._pongs:
            raise ValueError(f"a PING with id {ping_id!r} is already waiting for its PONG")
        if len(self._pongs) >= MAX_PINGS_OUTSTANDING:
            raise ValueError(f"{MAX_PINGS_OUTSTANDING} PINGs already wait for a PONG")
        self._pongs[ping_id] = (on_pong, self._now())
        if self._connection is not None:
            self._connection.send_record(Ping(ping_id))

    # -- states ------------------------------------------------------------

    @m.state(initial=True)
    def S0_idle(self): pass

    @m.state()
    def S1_wanting(self): pass

    @m.state()
    def S2_leader_connecting(self): pass

    @m.state()
    def S2_follower_connecting(self): pass

    @m.state()
    def S3_leader_connected(self): pass

    @m.state()
    def S3_follower_connected(self): pass

    @m.state()
    def S4_leader_flushing(self): pass

    @m.state()
    def S9_stopped(self): pass

    # -- inputs ------------------------------------------------------------

    @m.input()
    def start(self): pass

    @m.input()
    def _rx_please_we_lead(self, use_version): pass

    @m.input()
    def _rx_please_they_lead(self, use_version): pass

    @m.input()
    def _rx_hints(self, hints): pass

    @m.input()
    def _rx_reconnect(self): pass

    @m.input()
    def _rx_reconnecting(self): pass

    @m.input()
    def connector_connection_made(self, connection): pass

    @m.input()
    def _l3_lost(self): pass

    @m.input()
    def stop(self): pass

    # -- outputs -----------------------------------------------------------

    @m.output()
    def send_please(self):
        self._send_dilate({"type": "please", "side": self._side,
                           "use-version": self._use_version})

    @m.output()
    def be_leader(self, use_version):
        # spec 000: the Leader's use-version wins; ours is the one we sent
        self._is_leader = True
        self._registry.set_role(True)

    @m.output()
    def be_follower(self, use_version):
        if use_version not in SUPPORTED_VERSIONS:
            # an honest Leader never does this (it knew our can-dilate)
            log.msg(f"Dilation: Leader chose version {use_version!r} we lack; "
                    f"continuing with {self._use_version!r}")
        self._is_leader = False
        self._registry.set_role(False)

    def _now(self):
        return self._clock.seconds() if self._clock is not None else 0.0

    @m.output()
    def start_connector(self):
        self._generation += 1
        self._on_status(self._generation, ConnectingPeer(self._now()))
        self._connector = self._make_connector(self._is_leader, self._generation, self)
        self._connector.start()

    @m.output()
    def report_connected(self, connection):
        # expires_at: with keepalives, a peer silent for two intervals is
        # presumed gone (the reference's estimate)
        expires = None
        if self._ping_interval:
            expires = self._now() + 2 * self._ping_interval
        self._on_status(self._generation,
                        ConnectedPeer(self._now(), expires,
                                      getattr(connection, "description", "?")))

    @m.output()
    def report_reconnecting(self):
        self._on_status(self._generation, ReconnectingPeer(self._now()))

    @m.output()
    def stop_connector(self):
        if self._connector is not None:
            self._connector.stop()
            self._connector = None

    @m.output()
    def hints_to_connector(self, hints):
        self._on_hints(describe_hints(hints))
        self._connector.got_hints(hints)

    @m.output()
    def use_connection(self, connection):
        self._connection = connection
        self._outbound.use_connection(connection)
        self._inbound.use_connection(connection)
        if self._is_leader and self._ping_interval and self._clock is not None:
            self._ping_outstanding = None
            self._ping_timer = self._clock.callLater(self._ping_interval, self._ping_tick)

    def _ping_tick(self):
        self._ping_timer = None
        c = self._connection
        if c is None:
            return
        if self._ping_outstanding is not None:
            log.msg("Dilation: no PONG within ping_interval; dropping the connection")
            c.disconnect()  # its loss makes us reconnect
            return
        self._ping_outstanding = self._entropy(4)
        c.send_record(Ping(self._ping_outstanding))
        self._ping_timer = self._clock.callLater(self._ping_interval, self._ping_tick)

    def _detach(self):
        if self._ping_timer is not None and self._ping_timer.active():
            self._ping_timer.cancel()
        self._ping_timer = None
        c, self._connection = self._connection, None
        self._outbound.stop_using_connection()
        self._inbound.stop_using_connection()
        return c

    @m.output()
    def stop_using_connection(self):
        self._detach()

    @m.output()
    def drop_connection(self):
        self._detach().disconnect()

    @m.output()
    def send_reconnect(self):
        self._send_dilate({"type": "reconnect"})

    @m.output()
    def send_reconnecting(self):
        self._send_dilate({"type": "reconnecting"})

    # -- transitions -------------------------------------------------------

    S0_idle.upon(start, enter=S1_wanting, outputs=[send_please])
    S0_idle.upon(stop, enter=S9_stopped, outputs=[])

    S1_wanting.upon(_rx_please_we_lead, enter=S2_leader_connecting,
                    outputs=[be_leader, start_connector])
    S1_wanting.upon(_rx_please_they_lead, enter=S2_follower_connecting,
                    outputs=[be_follower, start_connector])
    S1_wanting.upon(stop, enter=S9_stopped, outputs=[])

    S2_leader_connecting.upon(_rx_hints, enter=S2_leader_connecting, outputs=[hints_to_connector])
    S2_leader_connecting.upon(connector_connection_made, enter=S3_leader_connected,
                              outputs=[use_connection, report_connected])
    S2_leader_connecting.upon(stop, enter=S9_stopped, outputs=[stop_connector])

    S3_leader_connected.upon(_rx_hints, enter=S3_leader_connected, outputs=[])
    # spec 000: the Leader alone decides a connection is gone and asks
    # for the next generation; it waits for "reconnecting" before dialling
    S3_leader_connected.upon(_l3_lost, enter=S4_leader_flushing,
                             outputs=[stop_using_connection, stop_connector, send_reconnect,
                                      report_reconnecting])
    S3_leader_connected.upon(stop, enter=S9_stopped, outputs=[stop_connector, drop_connection])

    S4_leader_flushing.upon(_rx_hints, enter=S4_leader_flushing, outputs=[])
    S4_leader_flushing.upon(_rx_reconnecting, enter=S2_leader_connecting,
                            outputs=[start_connector])
    S4_leader_flushing.upon(stop, enter=S9_stopped, outputs=[])

    # the Follower stays "connecting" until the Leader's reconnect, even
    # after its own L3 is lost (spec 000 "Initiating Dilation")
    S2_follower_connecting.upon(_rx_hints, enter=S2_follower_connecting,
                                outputs=[hints_to_connector])
    S2_follower_connecting.upon(connector_connection_made, enter=S3_follower_connected,
                                outputs=[use_connection, report_connected])
    S2_follower_connecting.upon(_rx_reconnect, enter=S2_follower_connecting,
                                outputs=[stop_connector, send_reconnecting, start_connector])
    S2_follower_connecting.upon(stop, enter=S9_stopped, outputs=[stop_connector])

    S3_follower_connected.upon(_rx_hints, enter=S3_follower_connected, outputs=[])
    S3_follower_connected.upon(_l3_lost, enter=S2_follower_connecting,
                               outputs=[stop_using_connection, report_reconnecting])
    S3_follower_connected.upon(_rx_reconnect, enter=S2_follower_connecting,
                               outputs=[drop_connection, stop_connector, send_reconnecting,
                                        start_connector])
    S3_follower_connected.upon(stop, enter=S9_stopped, outputs=[stop_connector, drop_connection])

    S9_stopped.upon(_rx_hints, enter=S9_stopped, outputs=[])
    S9_stopped.upon(_rx_please_we_lead, enter=S9_stopped, outputs=[])
    S9_stopped.upon(_rx_please_they_lead, enter=S9_stopped, outputs=[])
    S9_stopped.upon(_rx_reconnect, enter=S9_stopped, outputs=[])
    S9_stopped.upon(_rx_reconnecting, enter=S9_stopped, outputs=[])
    S9_stopped.upon(connector_connection_made, enter=S9_stopped, outputs=[])
    S9_stopped.upon(_l3_lost, enter=S9_stopped, outputs=[])
    S9_stopped.upon(stop, enter=S9_stopped, outputs=[])

    # messages that do not belong in a state (a confused or replayed peer)
    # are ignored rather than crashing the wormhole
    for _s in (S1_wanting, S2_leader_connecting, S3_leader_connected, S4_leader_flushing,
               S2_follower_connecting, S3_follower_connected):
        for _i in (_rx_please_we_lead, _rx_please_they_lead, _rx_reconnect, _rx_reconnecting,
                   _rx_hints, _l3_lost, connector_connection_made):
            try:
                _s.upon(_i, enter=_s, outputs=[])
            except ValueError:
                pass  # already has a real transition
    del _s, _i
