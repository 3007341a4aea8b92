"""The Boss's Dilation socket when Dilation is enabled (IDilator).

It collects what Dilation needs before the Manager can start (spec 000
"Initiating Dilation"): the shared key (for the Dilation key), the peer's
version dict (``can-dilate``) and the application's ``dilate()`` call; it
keeps DILATE-n messages that arrive before then. It builds the L4/L5
objects at ``dilate()`` so endpoints work at once (connect() waits for the
peer's please). Not a protocol layer, only assembly and buffering.
"""

import json

from zope.interface import implementer

from .._interfaces import IDilator
from .._status import DilationStatus, NoPeer, WormholeStatus
from .._transit._addresses import configured_addresses, discover_addresses
from .._transit._hints import parse_relay_locations
from ._connector import Connector
from ._endpoints import SubchannelRegistry
from ._framing import derive_dilation_key
from ._inbound import Inbound
from ._outbound import Outbound
from .manager import (
    DilatedWormhole,
    Manager,
    OldPeerCannotDilateError,
    choose_version,
    make_side,
)


@implementer(IDilator)
class Dilator:
    def __init__(self, reactor, eventual_queue, listen_addresses=None, tor=None):
        self._reactor = reactor
        self._tor = tor  # create(tor=...): every L2 dial through Tor
        self._eq = eventual_queue
        self._listen_addresses = listen_addresses
        self._send_phase = None
        self._key = None
        self._versions = None
        self._early = []
        self._dilated = None
        self._manager = None  # applications poke _boss._D._manager.send_ping
        self._options = None
        self._status_update = None
        self._mailbox_status = WormholeStatus
        self._next_phase = 0
        # tests force the Leader/Follower role with a side of all f or all 0
        self._forced_side = None

    def wire(self, send_phase, mailbox_status=None):
        """``send_phase(phase, plaintext)``: the Boss sends one phase;
        ``mailbox_status()``: the current WormholeStatus, for DilationStatus."""
        self._send_phase = send_phase
        self._mailbox_status = mailbox_status or WormholeStatus

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
        else:
            self._early.append(plaintext)

    # -- the application ---------------------------------------------------

    def dilate(self, transit_relay_location=None, no_listen=False, status_update=None,
               ping_interval=None, expected_subprotocols=None, listen_addresses=None):
        if self._dilated is not None:
            return self._dilated
        if listen_addresses is not None:
            self._listen_addresses = listen_addresses
        relay = None
        if transit_relay_location is not None:
            relay = parse_relay_locations(transit_relay_location)
        if ping_interval is not None and (
                isinstance(ping_interval, bool) or not isinstance(ping_interval, (int, float))
                or ping_interval <= 0):
            raise ValueError(f"ping_interval must be a positive number of seconds, "
                             f"not {ping_interval!r}")
        self._options = {"relay": relay, "no_listen": bool(no_listen),
                             "ping_interval": ping_interval}
        self._status_update = status_update
        self._report_status(0, NoPeer())
        self._inbound = Inbound()
        self._outbound = Outbound()
        self._registry = SubchannelRegistry(self._eq.eventually)
        self._inbound.wire(self._outbound, self._registry)
        self._registry.wire(self._inbound, self._outbound)
        self._dilated = DilatedWormhole(self._registry)
        self._maybe_start()
        return self._dilated

    def _maybe_start(self):
        if (self._dilated is None or self._manager is not None
                or self._key is None or self._versions is None):
            return
        version = choose_version(self._versions.get("can-dilate"))
        if version is None:
            self._registry.fail(OldPeerCannotDilateError(
                "the peer's wormhole cannot dilate (no shared can-dilate "
                f"version in {self._versions.get('can-dilate')!r}); upgrade it"))
            return
        side = self._forced_side or make_side()
        dilation_key = derive_dilation_key(self._key)
        addresses = configured_addresses(self._listen_addresses)
        if addresses is None:
            addresses = discover_addresses()
        opts = self._options

        def make_connector(is_leader, generation, manager):
            return Connector(dilation_key, is_leader, side, self._reactor, self._reactor,
                             manager, relay_hint=opts["relay"], addresses=addresses,
                             no_listen=opts["no_listen"], tor=self._tor)

        self._manager = Manager(side, version, self._send, self._inbound, self._outbound,
                                self._registry, make_connector, clock=self._reactor,
                                on_status=self._report_status,
                                ping_interval=opts["ping_interval"])
        self._manager.start()
        early, self._early = self._early, []
        for plaintext in early:
            self._manager.got_dilate(plaintext)

    def _report_status(self, generation, peer_connection):
        # spec 000: status_update gets a DilationStatus whose .mailbox is
        # the wormhole's current WormholeStatus; in a later turn, like the
        # wormhole's own status updates
        if self._status_update is not None:
            status = DilationStatus(self._mailbox_status(), generation, peer_connection)
            self._eq.eventually(self._status_update, status)

    def _send(self, msg):
        # spec 000: our own counter, phases dilate-0, dilate-1, ...
        phase = f"dilate-{self._next_phase}"
        self._next_phase += 1
        self._send_phase(phase, json.dumps(msg).encode("utf-8"))

    def stop(self):
        if self._manager is not None:
            self._manager.stop()
        if self._dilated is not None:
            self._registry.close_all()
