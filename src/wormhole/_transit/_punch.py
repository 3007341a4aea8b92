# -*- test-case-name: tests.unit.transit.test_punch -*-
"""What we learn about our NAT, for TCP hole punching
(docs/transit.md, "Through a NAT: hole punching").

The Mailbox server's ``welcome`` says where our connection came from
(``your-address``, ``{"port": P, "ipv4"|"ipv6": ADDR}``, as the reference
server 0.8 sends it). When our Mailbox connection left from a local port
that Transit and Dilation can listen on and dial from again (bound with
SO_REUSEADDR and SO_REUSEPORT: Twisted's public ``makeBinding``), a NAT
that maps that port the same way for every destination lets a peer reach
us at ADDR:P, once we have dialled the peer from the same port (TCP
simultaneous open).

A NAT that maps each destination differently (endpoint-dependent,
"symmetric") would make ADDR:P a wrong hint. Nothing that we reach
besides the Mailbox server tells us our address (the Transit relay does
not), so the second observation is a second, short Mailbox connection
from a fresh local port: a NAT that kept both local ports and showed the
same address both times is taken as endpoint-independent; one that
rewrote a port, or showed another address, is treated as symmetric and no
outside hint is advertised. A NAT that rewrites ports but maps
endpoint-independently is treated as symmetric too: we lose its punch, we
never advertise a wrong hint.
"""

import ipaddress
import os

import attr
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.error import CannotListenError
from twisted.internet.tcp import makeBinding
from twisted.python import log

from ._hints import DirectTCPV1Hint

# turns punching off (docs/transit.md); so does the CLI's --no-punch
NO_PUNCH_ENV = "WORMHOLE_NO_PUNCH"
# the outside hint ranks below every local hint (0.0) and above the relay
# (the reference's pull request magic-wormhole#685 uses -1.0 for it too)
OUTSIDE_PRIORITY = -1.0
# what a punched connection's description (the CLI's path line) ends with
THROUGH_NAT = " (through NAT)"
# how long the second observation may take before we give up on punching
SECOND_OBSERVATION_TIMEOUT = 5.0


def punching_disabled(environ=None):
    """Whether the environment turns punching off (any value but empty
    or ``0``)."""
    environ = os.environ if environ is None else environ
    return environ.get(NO_PUNCH_ENV, "").strip() not in ("", "0")


def reusable_binding(port=0, interface=""):
    """A local binding that other sockets of ours may share: the Mailbox
    connection, our Transit/Dilation listener and our punching dials all
    use the same port (SO_REUSEADDR + SO_REUSEPORT)."""
    return makeBinding(interface, port, reuseAddress=True, reusePort=True)


def is_outside(hint):
    """A peer's outside (NAT-mapped) address: a direct hint ranked below
    its local ones (OUTSIDE_PRIORITY, as the reference's pull request
    magic-wormhole#685 sends it)."""
    return isinstance(hint, DirectTCPV1Hint) and hint.priority < 0


def punched_endpoint(reactor, hint, local_port):
    """A dial of the peer's outside ``hint`` from our punching port."""
    return TCP4ClientEndpoint(reactor, hint.hostname, hint.port,
                              bindAddress=reusable_binding(local_port))


def forwarded_hint(mapping, listen_port):
    """Our outside address with the fixed ``listen_port`` (a port the user
    forwarded on the router), or None when either is unknown."""
    if mapping is None or mapping.address is None or listen_port is None:
        return None
    return DirectTCPV1Hint(mapping.address, listen_port, OUTSIDE_PRIORITY)


def punch_listener(reactor, mapping, factory, who):
    """Listen on the Mapping's port (reusable): ``(listening port, our
    outside hint)``, or ``(None, None)`` when there is nothing to punch
    with (the reason is logged, naming ``who``)."""
    if mapping is None:
        return None, None
    if mapping.outside is None:
        log.msg(f"{who}: no outside hint ({mapping.reason})")
        return None, None
    try:
        port = reactor.listenTCP(reusable_binding(mapping.local_port), factory)
    except CannotListenError as e:
        log.msg(f"{who}: cannot listen on port {mapping.local_port} for "
                f"punching: {e}")
        return None, None
    host, outside_port = mapping.outside
    return port, DirectTCPV1Hint(host, outside_port, OUTSIDE_PRIORITY)


def parse_your_address(welcome):
    """``(address, port)`` from a welcome's ``your-address``, or None when
    it is missing or malformed (the server is not trusted with more)."""
    you = welcome.get("your-address") if isinstance(welcome, dict) else None
    if not isinstance(you, dict):
        return None
    port = you.get("port")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        return None
    for family, version in (("ipv4", 4), ("ipv6", 6)):
        value = you.get(family)
        if isinstance(value, str):
            try:
                addr = ipaddress.ip_address(value)
            except ValueError:
                return None
            if addr.version != version:
                return None
            return (str(addr), port)
    return None


@attr.s(frozen=True)
class Mapping:
    """What punching may use: the ``local_port`` to listen and dial from,
    and the ``outside`` (address, port) to advertise, or None with the
    ``reason`` why not. ``address``: our outside address as the server saw
    it, even when the mapping is unusable (None when not behind a NAT): a
    port forwarded on the router (``--listen-port``) is reached there."""
    local_port = attr.ib()
    outside = attr.ib()
    reason = attr.ib(default="")
    address = attr.ib(default=None)


def judge(first, second, local_addresses=()):
    """A Mapping from two observations, each ``(local_port, (addr, port))``
    (the second may be None: it failed). Pure, for the tests."""
    mapping = _judge(first, second, local_addresses)
    seen = first[1]
    if seen is not None and seen[0] not in local_addresses:
        mapping = attr.evolve(mapping, address=seen[0])
    return mapping


def _judge(first, second, local_addresses):
    local_port, seen = first
    if seen is None:
        return Mapping(local_port, None, "the Mailbox server did not say "
                       "where we connect from")
    if seen[0] in local_addresses:
        return Mapping(local_port, None, "not behind a NAT: the local "
                       "hints already name this address")
    if second is None or second[1] is None:
        return Mapping(local_port, None, "no second observation of our "
                       "address: cannot tell the NAT's kind")
    other_port, other = second
    if other[0] != seen[0]:
        return Mapping(local_port, None, "our outside address differs by "
                       "connection (a symmetric NAT)")
    if seen[1] != local_port or other[1] != other_port:
        return Mapping(local_port, None, "the NAT changes our ports (maybe "
                       "per destination: treated as symmetric)")
    return Mapping(local_port, seen, "the NAT keeps our port")


class NatObserver:
    """Collects the observations of one wormhole's Mailbox connection.

    The RendezvousConnector asks it for the ``binding()`` of each Mailbox
    connection (the same local port again after a reconnection, so the
    NAT's mapping stays), tells it the local port once connected and each
    welcome. ``observe_again(url)`` is a function returning a Deferred of
    ``(local_port, welcome)`` from a second connection to the same server
    (``_observe.observe_welcome``). ``mapping()`` fires with a Mapping (or
    None if the Mailbox connection never told us anything) once both
    observations are in, or ``timeout`` seconds on ``clock`` after the
    first; with None if the wormhole stops before.
    ``local_addresses``: this host's addresses, or a function returning
    them when the welcome comes (default: every interface's, loopback
    included: a server that sees one of them sees us without a NAT)."""

    def __init__(self, clock, url, observe_again, local_addresses=None,
                 timeout=SECOND_OBSERVATION_TIMEOUT):
        self._clock = clock
        self._url = url
        self._observe_again = observe_again
        self._local = local_addresses if local_addresses is not None else own_addresses
        self._local_addresses = ()
        self._timeout = timeout
        self._local_port = None
        self._first = None
        self._result = None
        self._waiters = []
        self._timer = None
        self._second_d = None

    def binding(self):
        return reusable_binding(self._local_port or 0)

    def connected(self, local_port):
        self._local_port = local_port

    def connect_failed(self):
        """A Mailbox connection failed (maybe its port is taken now): the
        next one binds any free port; the decided Mapping stays."""
        self._local_port = None

    def welcomed(self, welcome):
        if self._first is not None or self._local_port is None:
            return  # the first welcome decides; a reconnection keeps it
        self._first = (self._local_port, parse_your_address(welcome))
        local = self._local
        self._local_addresses = tuple(local() if callable(local) else local)
        if self._first[1] is None or self._first[1][0] in self._local_addresses:
            self._decide(None)
            return
        self._timer = self._clock.callLater(self._timeout, self._decide, None)
        d = self._second_d = self._observe_again(self._url)
        d.addCallbacks(
            lambda got: self._decide((got[0], parse_your_address(got[1]))),
            lambda f: self._decide(None))

    def _decide(self, second):
        pending, self._second_d = self._second_d, None
        if self._result is not None:
            return
        if pending is not None and not pending.called:
            pending.cancel()  # timed out: drop the second connection
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        self._result = judge(self._first, second, self._local_addresses)
        waiters, self._waiters = self._waiters, []
        for d in waiters:
            d.callback(self._result)

    def mapping(self):
        """Deferred Mapping, once both observations are in (a classic
        sender asks before the first welcome); None if the wormhole
        stopped first."""
        if self._result is not None:
            return _fired(self._result)
        d = Deferred()
        self._waiters.append(d)
        return d

    def stop(self):
        """The wormhole closes: no timer, no second connection left."""
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None
        d, self._second_d = self._second_d, None
        if d is not None and not d.called:
            d.cancel()
        waiters, self._waiters = self._waiters, []
        for d in waiters:
            d.callback(self._result)


def own_addresses():
    """Every IPv4 interface address of this host, and the loopbacks."""
    from ._addresses import _interface_addresses
    return set(_interface_addresses()) | {"127.0.0.1", "::1"}


def _fired(value):
    d = Deferred()
    d.callback(value)
    return d
