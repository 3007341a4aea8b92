"""L1 Dilation manager (Dilation protocol, "Initiating Dilation",
"Leaders and Followers") and the application-facing ``DilatedWormhole``.

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
from automat import MethodicalMachine, NoTransition
from twisted.python import log
from zope.interface import implementer

from .._automat_private import trace_hook
from .._status import ConnectedPeer, ConnectingPeer, DilationHint, ReconnectingPeer
from ..util import bytes_to_dict, bytes_to_hexstr
from . import _interfaces as I
from ._endpoints import SubchannelConnectorEndpoint, SubchannelListenerEndpoint
from ._records import Ack, Data, Ping, Pong

SUPPORTED_VERSIONS = ["ged"]  # best first (Dilation protocol, "Versions and can-dilate")
# send_ping(): PINGs waiting for their PONG at once (a bound on the dict)
MAX_PINGS_OUTSTANDING = 1000


class OldPeerCannotDilateError(Exception):
    """The peer's version message has no ``can-dilate`` we share (Dilation
    protocol, "Initiating Dilation"): it cannot dilate; upgrade the peer's
    software."""


class CanOnlyDilateOnceError(Exception):
    """dilate() was called a second time on the same wormhole (the
    reference 0.24's error for it)."""


class DilationProtocolError(Exception):
    """The peer broke the Dilation L1 protocol."""


def make_side():
    """A fresh random Dilation side: 16 lower-case hex digits (Dilation
    protocol, "Leaders and Followers")."""
    return bytes_to_hexstr(os.urandom(8))


def describe_hints(hints):
    """DilationHints for the hint dicts of a ``connection-hints`` message
    (Dilation protocol, "Connection Hint Format": ``direct-tcp-v1`` hints,
    and ``relay-v1`` hints that hold their own list of direct hints);
    malformed entries are skipped."""
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
    """What ``w.dilate()`` returns (Dilation protocol, "Initiating Dilation").

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
                 on_hints=None):
        self._side = side
        self._clock = clock
        # dilate(ping_interval=P): the L3 connection's keepalive runs every
        # P seconds and drops a peer silent for 2 P (_connection); here it
        # only dates a connection's expected expiry for the status
        self._ping_interval = ping_interval
        # PONGs that answered no send_ping() (the L3 keepalive's): counted
        # for tests and debugging
        self._pings_answered = 0
        # on_status(generation, peer_connection): UX only (Dilation
        # protocol, "Initiating Dilation", DilationStatus)
        self._on_status = on_status or (lambda generation, peer: None)
        # on_hints([DilationHint]): the peer's hints as they arrive (UX)
        self._on_hints = on_hints or (lambda hints: None)
        self._use_version = use_version
        self._send_dilate = send_dilate        # f(dict) -> the next dilate-N
        self._inbound = I.IInbound(inbound)
        self._outbound = I.IOutbound(outbound)
        self._registry = registry
        # f(is_leader, generation, manager); the role comes from the state
        # whose output calls it (start_leader_connector, ...)
        self._make_connector = make_connector
        self._connector = None
        self._connection = None
        self._generation = 0
        self._pongs = {}

    # -- public, validated, routed to inputs --------------------------------

    def got_dilate(self, plaintext):
        try:
            # nesting checked first (docs/security.md, "Dilation")
            msg = bytes_to_dict(plaintext)
            kind = msg["type"]
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            log.msg(f"Dilation: unparseable DILATE message ignored: {e!r}")
            return
        try:
            self._route(kind, msg)
        except NoTransition as e:
            if e.symbol not in self._PEER_INPUTS:
                raise  # a machine further down has a bug: not the peer's fault
            # a message that has no transition in our state breaks the order of
            # Dilation protocol, "Initiating Dilation" (a please after the
            # roles are set, reconnect to a Leader, reconnecting to a Leader
            # that asked for nothing): the peer's protocol error, said and
            # dropped, never our crash
            log.msg(f"Dilation: the peer's {kind!r} message is out of order, ignored: {e}")

    def _route(self, kind, msg):
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
            waiting = self._pongs.pop(record.ping_id, None)
            if waiting is None:
                self._pings_answered += 1  # the L3 keepalive's PING
                return
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

    # the inputs a peer's DILATE message drives (got_dilate)
    _PEER_INPUTS = (_rx_please_we_lead, _rx_please_they_lead, _rx_hints, _rx_reconnect,
                    _rx_reconnecting)

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
        # Dilation protocol, "Leaders and Followers": the Leader's use-version
        # wins; ours is the one we sent
        self._registry.set_role(True)

    @m.output()
    def be_follower(self, use_version):
        if use_version not in SUPPORTED_VERSIONS:
            # an honest Leader never does this (it knew our can-dilate)
            log.msg(f"Dilation: Leader chose version {use_version!r} we lack; "
                    f"continuing with {self._use_version!r}")
        self._registry.set_role(False)

    def _now(self):
        return self._clock.seconds() if self._clock is not None else 0.0

    def _start_connector(self, is_leader):
        self._generation += 1
        self._on_status(self._generation, ConnectingPeer(self._now()))
        self._connector = self._make_connector(is_leader, self._generation, self)
        self._connector.start()

    @m.output()
    def start_leader_connector(self):
        self._start_connector(True)

    @m.output()
    def start_follower_connector(self):
        self._start_connector(False)

    @m.output()
    def report_connected(self, connection):
        # expires_at: the L3 keepalive drops a peer silent for two
        # intervals (the reference's estimate too)
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

    def _detach(self):
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
    #
    # Every (state, input) pair below is deliberate; any other raises
    # automat's NoTransition. Inputs from the peer's DILATE messages that
    # have no transition are the peer's protocol error (got_dilate logs and
    # drops them); our own inputs (start, stop, the Connector's and the
    # connection's reports) never arrive where they have none.

    S0_idle.upon(start, enter=S1_wanting, outputs=[send_please])
    S0_idle.upon(stop, enter=S9_stopped, outputs=[])

    S1_wanting.upon(_rx_please_we_lead, enter=S2_leader_connecting,
                    outputs=[be_leader, start_leader_connector])
    S1_wanting.upon(_rx_please_they_lead, enter=S2_follower_connecting,
                    outputs=[be_follower, start_follower_connector])
    S1_wanting.upon(stop, enter=S9_stopped, outputs=[])

    S2_leader_connecting.upon(_rx_hints, enter=S2_leader_connecting, outputs=[hints_to_connector])
    S2_leader_connecting.upon(connector_connection_made, enter=S3_leader_connected,
                              outputs=[use_connection, report_connected])
    S2_leader_connecting.upon(stop, enter=S9_stopped, outputs=[stop_connector])

    # late: hints the peer sent for this generation before it heard of
    # the selection (Dilation protocol, "Initiating Dilation": hints are sent
    # as they are found); none needed
    S3_leader_connected.upon(_rx_hints, enter=S3_leader_connected, outputs=[])
    # Dilation protocol, "Leaders and Followers": the Leader alone decides a
    # connection is gone and asks for the next generation; it waits for
    # "reconnecting" before dialling
    S3_leader_connected.upon(_l3_lost, enter=S4_leader_flushing,
                             outputs=[stop_using_connection, stop_connector, send_reconnect,
                                      report_reconnecting])
    S3_leader_connected.upon(stop, enter=S9_stopped, outputs=[stop_connector, drop_connection])

    # late: hints of the generation that just ended, sent before the
    # Follower read our reconnect; the next generation's connector will
    # get the new ones
    S4_leader_flushing.upon(_rx_hints, enter=S4_leader_flushing, outputs=[])
    S4_leader_flushing.upon(_rx_reconnecting, enter=S2_leader_connecting,
                            outputs=[start_leader_connector])
    S4_leader_flushing.upon(stop, enter=S9_stopped, outputs=[])

    # the Follower stays "connecting" until the Leader's reconnect, even
    # after its own L3 is lost (Dilation protocol, "Initiating Dilation")
    S2_follower_connecting.upon(_rx_hints, enter=S2_follower_connecting,
                                outputs=[hints_to_connector])
    S2_follower_connecting.upon(connector_connection_made, enter=S3_follower_connected,
                                outputs=[use_connection, report_connected])
    S2_follower_connecting.upon(_rx_reconnect, enter=S2_follower_connecting,
                                outputs=[stop_connector, send_reconnecting,
                                         start_follower_connector])
    S2_follower_connecting.upon(stop, enter=S9_stopped, outputs=[stop_connector])

    # late: as for the Leader, hints sent before the peer saw the selection
    S3_follower_connected.upon(_rx_hints, enter=S3_follower_connected, outputs=[])
    S3_follower_connected.upon(_l3_lost, enter=S2_follower_connecting,
                               outputs=[stop_using_connection, report_reconnecting])
    S3_follower_connected.upon(_rx_reconnect, enter=S2_follower_connecting,
                               outputs=[drop_connection, stop_connector, send_reconnecting,
                                        start_follower_connector])
    S3_follower_connected.upon(stop, enter=S9_stopped, outputs=[stop_connector, drop_connection])

    # late, after stop(): the peer does not know we stopped, so any of its
    # DILATE messages may still be in the mailbox (the wormhole closes
    # after us); our own Connector and connection were stopped and
    # detached by stop(), so they report nothing more
    S9_stopped.upon(_rx_hints, enter=S9_stopped, outputs=[])
    S9_stopped.upon(_rx_please_we_lead, enter=S9_stopped, outputs=[])
    S9_stopped.upon(_rx_please_they_lead, enter=S9_stopped, outputs=[])
    S9_stopped.upon(_rx_reconnect, enter=S9_stopped, outputs=[])
    S9_stopped.upon(_rx_reconnecting, enter=S9_stopped, outputs=[])
    # stop() twice: the wormhole's close and the application's (idempotent)
    S9_stopped.upon(stop, enter=S9_stopped, outputs=[])
