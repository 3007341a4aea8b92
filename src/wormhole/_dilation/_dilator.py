"""The Boss's Dilation socket when Dilation is enabled (IDilator).

It collects what Dilation needs before the Manager can start (Dilation
protocol, "Initiating Dilation"): the shared key (for the Dilation key), the
peer's version dict (``can-dilate``) and the application's ``dilate()``
call; it keeps DILATE-n messages that arrive before then. It builds the
L4/L5 objects at ``dilate()`` so endpoints work at once (connect() waits for
the peer's please), and it keeps the ``DilationStatus`` the application's
``on_status_update`` receives. Not a protocol layer, only assembly,
buffering and status.

The Boss builds it (``create(dilation=True)``); ``_manager`` is the
running Manager once Dilation has started, ``None`` before: applications
written for the reference call ``w._boss._D._manager.send_ping(...)``
(docs/api.md, "Dilation").
"""

import json

from attrs import evolve
from twisted.python import log
from zope.interface import implementer

from .._interfaces import IDilator
from .._observer import OneShotObserver
from .._status import ConnectedPeer, DilationStatus, StatusTracker, StoppedPeer
from .._transit._addresses import configured_addresses, discover_addresses
from .._transit._hints import parse_relay_locations
from ._connection import DEFAULT_KEEPALIVE_INTERVAL
from ._connector import Connector
from ._endpoints import SubchannelRegistry
from ._framing import derive_dilation_key
from ._inbound import DEFAULT_MAX_BACKLOG, DEFAULT_MAX_PEER_SUBCHANNELS, Inbound
from ._outbound import DEFAULT_MAX_UNACKED, Outbound
from ._subchannel import CLOSE_TIMEOUT
from .manager import (
    CanOnlyDilateOnceError,
    DilatedWormhole,
    Manager,
    OldPeerCannotDilateError,
    choose_version,
    make_side,
)

# the reference 0.24's keepalive when dilate() is given no ping_interval:
# on by default, so a peer that vanished is noticed (Dilation protocol,
# "L3 protocol" keepalives; one mechanism, in _connection)
DEFAULT_PING_INTERVAL = DEFAULT_KEEPALIVE_INTERVAL

# DILATE-n messages kept until the Manager starts (docs/security.md,
# "Dilation"): an honest peer sends its please and a few connection-hints
# before we dilate; one that sends without end (or an application that
# never calls dilate()) must not grow our memory. Later ones are dropped.
MAX_EARLY = 64
MAX_EARLY_BYTES = 1024 * 1024


@implementer(IDilator)
class Dilator:
    def __init__(self, reactor, eventual_queue, send_phase, status_tracker=None,
                 listen_addresses=None, side=None, tor=None, max_early=MAX_EARLY,
                 max_early_bytes=MAX_EARLY_BYTES, nat=None, proxy=None):
        """``send_phase(phase, plaintext)``: the Boss sends one phase;
        ``status_tracker``: the wormhole's StatusTracker, whose current
        WormholeStatus every DilationStatus carries; ``side``: force the
        Dilation side (tests pick the Leader with all f, the Follower
        with all 0); ``tor``: create(tor=...), every L2 dial through Tor;
        ``max_early``/``max_early_bytes``: how many DILATE-n messages (and
        bytes) are kept before the Manager starts, later ones dropped;
        ``nat``: the wormhole's NatObserver, for hole punching
        (docs/transit.md, "Through a NAT: hole punching")."""
        self._nat = nat
        self._reactor = reactor
        self._tor = tor  # create(tor=...): every L2 dial through Tor
        self._proxy = proxy  # create(proxy=...): relays through it (docs/proxy.md)
        self._eq = eventual_queue
        self._send_phase = send_phase
        self._tracker = status_tracker or StatusTracker(None, eventual_queue)
        self._tracker.subscribe(self._mailbox_status_changed)
        self._listen_addresses = listen_addresses
        self._forced_side = side
        self._key = None
        self._versions = None
        self._early = []
        self._early_bytes = 0
        self._early_dropped = 0
        self._max_early = max_early
        self._max_early_bytes = max_early_bytes
        self._dilated = None
        self._manager = None
        self._connector = None  # the latest generation's
        self._options = None
        self._status_update = None
        self._status = None  # the latest DilationStatus, once dilate() ran
        self._when_dilated = OneShotObserver(eventual_queue)
        self._next_phase = 0

    # -- IDilator ----------------------------------------------------------

    def got_key(self, key):
        self._key = key
        self._maybe_start()

    def got_wormhole_versions(self, their_versions):
        self._versions = their_versions
        self._maybe_start()

    def received_dilate(self, plaintext):
        if self._manager is not None:
            self._manager.got_dilate(plaintext)
        elif (len(self._early) < self._max_early
              and self._early_bytes + len(plaintext) <= self._max_early_bytes):
            self._early.append(plaintext)
            self._early_bytes += len(plaintext)
        else:
            if not self._early_dropped:
                log.msg(f"Dilation: the peer sent more than {self._max_early} DILATE "
                        f"messages or {self._max_early_bytes} bytes before we dilated; "
                        "dropping the rest (docs/security.md)")
            self._early_dropped += 1

    # -- the application ---------------------------------------------------

    def dilate(self, transit_relay_location=None, no_listen=False, on_status_update=None,
               ping_interval=None, expected_subprotocols=None, listen_addresses=None,
               max_peer_subchannels=DEFAULT_MAX_PEER_SUBCHANNELS,
               max_backlog=DEFAULT_MAX_BACKLOG, max_unacked=DEFAULT_MAX_UNACKED,
               close_timeout=CLOSE_TIMEOUT):
        """The limits (docs/security.md, "Dilation"): ``max_peer_subchannels``
        the peer may have open at once, ``max_backlog`` bytes waiting for
        a listener, ``max_unacked`` bytes of our records the peer has not
        acknowledged, ``close_timeout`` seconds a subchannel we closed
        waits for the peer's CLOSE."""
        if self._dilated is not None:
            # the reference 0.24 refuses a second dilate() the same way
            raise CanOnlyDilateOnceError("dilate() can only be called once per wormhole")
        if listen_addresses is not None:
            self._listen_addresses = listen_addresses
        relay = None
        if transit_relay_location is not None:
            relay = parse_relay_locations(transit_relay_location)
        if ping_interval is None:
            ping_interval = DEFAULT_PING_INTERVAL
        if (isinstance(ping_interval, bool) or not isinstance(ping_interval, (int, float))
                or ping_interval <= 0):
            raise ValueError(f"ping_interval must be a positive number of seconds, "
                             f"not {ping_interval!r}")
        for name, value, kind in (("max_peer_subchannels", max_peer_subchannels, int),
                                  ("max_backlog", max_backlog, int),
                                  ("max_unacked", max_unacked, int),
                                  ("close_timeout", close_timeout, (int, float))):
            if isinstance(value, bool) or not isinstance(value, kind) or value <= 0:
                raise ValueError(f"{name} must be a positive number, not {value!r}")
        if expected_subprotocols is not None:
            if isinstance(expected_subprotocols, str) or not all(
                    isinstance(name, str) for name in expected_subprotocols):
                raise TypeError("expected_subprotocols must be a collection of str")
            expected_subprotocols = frozenset(expected_subprotocols)
        self._options = {"relay": relay, "no_listen": bool(no_listen),
                         "ping_interval": float(ping_interval)}
        self._status_update = on_status_update
        self._status = DilationStatus(self._tracker.current, 0)
        self._publish()
        self._inbound = Inbound(max_peer_subchannels=max_peer_subchannels,
                                max_backlog=max_backlog,
                                max_refused_opens=max_peer_subchannels,
                                clock=self._reactor)
        self._outbound = Outbound(max_unacked=max_unacked)
        self._registry = SubchannelRegistry(self._eq.eventually, expected_subprotocols,
                                            clock=self._reactor, close_timeout=close_timeout)
        self._inbound.wire(self._outbound, self._registry)
        self._registry.wire(self._inbound, self._outbound)
        self._dilated = DilatedWormhole(self._registry, self._when_dilated.when_fired)
        self._maybe_start()
        return self._dilated

    def _maybe_start(self):
        if (self._dilated is None or self._manager is not None
                or self._key is None or self._versions is None):
            return
        version = choose_version(self._versions.get("can-dilate"))
        if version is None:
            failure = OldPeerCannotDilateError(
                "the peer's wormhole cannot dilate (no shared can-dilate "
                f"version in {self._versions.get('can-dilate')!r}); upgrade it")
            self._registry.fail(failure)
            self._when_dilated.error(failure)
            return
        side = self._forced_side or make_side()
        dilation_key = derive_dilation_key(self._key)
        addresses = configured_addresses(self._listen_addresses)
        if addresses is None:
            addresses = discover_addresses()
        opts = self._options

        def make_connector(is_leader, generation, manager):
            # the latest generation's: it says where an inbound connection came from
            self._connector = Connector(
                dilation_key, is_leader, side, self._reactor, self._reactor, manager,
                relay_hint=opts["relay"], addresses=addresses, no_listen=opts["no_listen"],
                tor=self._tor, proxy=self._proxy, keepalive_interval=opts["ping_interval"],
                nat=self._nat)
            return self._connector

        self._manager = Manager(side, version, self._send, self._inbound, self._outbound,
                                self._registry, make_connector, clock=self._reactor,
                                on_status=self._peer_status, on_hints=self._hints_heard,
                                ping_interval=opts["ping_interval"])
        self._manager.start()
        early, self._early, self._early_bytes = self._early, [], 0
        for plaintext in early:
            self._manager.got_dilate(plaintext)

    # -- status (Dilation protocol, "Initiating Dilation", status_update) ---

    def _peer_status(self, generation, peer_connection):
        if isinstance(peer_connection, ConnectedPeer):
            # when_dilated(), connect() and listen(): the first L3
            # connection exists
            self._registry.connected()
            self._when_dilated.fire_if_not_fired(None)
            address = self._connector and self._connector.selected_peer_address
            if address is not None and peer_connection.peer_address is None:
                peer_connection = evolve(peer_connection, peer_address=address)
        self._evolve(generation=generation, peer_connection=peer_connection)

    def _hints_heard(self, hints):
        self._evolve(hints=self._status.hints | set(hints))

    def _mailbox_status_changed(self, wormhole_status):
        if self._status is not None:
            self._evolve(mailbox=wormhole_status)

    def _evolve(self, **changes):
        status = evolve(self._status, **changes)
        if status != self._status:
            self._status = status
            self._publish()

    def _publish(self):
        # in a later turn, like the wormhole's own status updates
        if self._status_update is not None:
            self._eq.eventually(self._status_update, self._status)

    def _send(self, msg):
        # Dilation protocol, "Initiating Dilation": our own counter, phases
        # dilate-0, dilate-1, ...
        phase = f"dilate-{self._next_phase}"
        self._next_phase += 1
        self._send_phase(phase, json.dumps(msg).encode("utf-8"))

    def stop(self):
        if self._manager is not None:
            self._manager.stop()
        if self._dilated is not None:
            self._registry.close_all()
            self._evolve(peer_connection=StoppedPeer())
