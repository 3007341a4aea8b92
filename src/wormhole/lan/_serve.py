"""A sender's LAN Mailbox: our Mailbox server in this process on the
local network's addresses, announced by multicast DNS (docs/lan.md)."""

import random
import secrets

from twisted.internet import defer

from .._wordlist import PGPWordList
from ._records import (
    LanError,
    LanUnavailable,
    NameplateTaken,
    is_nameplate,
    mailbox_url,
    usable_address,
)

# every bounded wait, in seconds (docs/lan.md, "Limits")
OPEN_TIMEOUT = 10.0
# a probe is 3 queries 250 ms apart after a random 150-250 ms
CLAIM_TIMEOUT = 10.0
# close sends three goodbyes 125 ms apart
CLOSE_TIMEOUT = 5.0
# how many nameplates we try before giving up (each a probe: ~1 s)
MAX_CLAIMS = 12


def candidates(rng, tries=MAX_CLAIMS):
    """Nameplates to try, shortest first and random within a length, as
    the Mailbox server allocates them (Mailbox server protocol,
    "Nameplates"): 1-9, then 10-99."""
    short = [str(n) for n in range(1, 10)]
    rng.shuffle(short)
    longer = [str(n) for n in rng.sample(range(10, 100), tries)]
    return (short + longer)[:tries]


def lan_addresses():
    """This host's IPv4 addresses a LAN peer may reach."""
    from ..ipaddrs import find_addresses
    return [a for a in find_addresses() if usable_address(a)]


class LanMailbox:
    """A running LAN Mailbox. ``url`` is what a peer without mDNS gives
    as ``--relay-url``; ``nameplate`` is announced; ``make_code()``
    makes a code on it; ``stop()`` says goodbye and stops the server."""

    def __init__(self, reactor, mdns, bridge, mailbox, factory, ports, addresses, nameplate):
        self._reactor = reactor
        self._mdns = mdns
        self._bridge = bridge
        self._mailbox = mailbox
        self._factory = factory
        self._ports = ports
        self.addresses = tuple(addresses)
        self.port = ports[0].getHost().port
        self.urls = tuple(mailbox_url(a, self.port) for a in addresses)
        self.url = self.urls[0]
        self.nameplate = nameplate
        self._stopped = None

    def make_code(self, code_length=2, randbytes=None):
        """A fresh code on the announced nameplate, e.g. "7-guitarist-revenge"."""
        words = PGPWordList(**({"randbytes": randbytes} if randbytes else {}))
        return f"{self.nameplate}-{words.choose_words(code_length)}"

    def stop(self):
        """Goodbye packets first (so no later receiver finds us), then the
        server; bounded by CLOSE_TIMEOUT. Safe to call twice."""
        if self._stopped is None:
            self._stopped = self._stop()
        return self._stopped

    @defer.inlineCallbacks
    def _stop(self):
        try:
            yield self._bridge.run(CLOSE_TIMEOUT, self._mdns.close)
        except Exception:
            pass  # bounded: a stuck zeroconf must not keep us
        yield _stop_server(self._mailbox, self._factory, self._ports)


@defer.inlineCallbacks
def _stop_server(mailbox, factory, ports):
    for p in ports:
        yield p.stopListening()
    yield factory.drop_all()
    yield mailbox.stop()


def _build_server(reactor):
    # our Mailbox server runs in the sender's process: imported only here,
    # so that the client needs no server package unless it serves on a
    # LAN (docs/architecture.md, "Layering")
    try:
        from wormhole_mailbox.server import build_mailbox, make_factory
    except ImportError as e:
        from ._bridge import EXTRA_NEEDED
        raise LanUnavailable(f"{EXTRA_NEEDED} ({e})") from None
    # the memory store, no usage kept: nothing of the session outlives it
    mailbox = build_mailbox(reactor)
    return mailbox, make_factory(mailbox, reactor=reactor)


def _listen(reactor, factory, addresses):
    """One port number on every address; an address where that number is
    taken is left out. Returns (ports, the addresses kept)."""
    from twisted.internet.error import CannotListenError
    first = reactor.listenTCP(0, factory, interface=addresses[0])
    ports, kept = [first], [addresses[0]]
    for a in addresses[1:]:
        try:
            ports.append(reactor.listenTCP(first.getHost().port, factory, interface=a))
            kept.append(a)
        except CannotListenError:
            pass
    return ports, kept


@defer.inlineCallbacks
def serve(reactor, nameplate=None, addresses=None, mdns=None, bridge=None, rng=None):
    """Start a LAN Mailbox and announce it; fires with a LanMailbox.

    ``nameplate``: the one to announce (NameplateTaken if another sender
    holds it); by default the first free one of ``candidates()``.
    ``addresses``: where to listen and what to announce (default: this
    host's LAN addresses). ``mdns``/``bridge``/``rng``: replaced in tests."""
    if nameplate is not None and not is_nameplate(nameplate):
        raise LanError(f"a LAN nameplate is a number of 1 to 4 digits, not {nameplate!r}")
    from ._bridge import ThreadBridge, load_zeroconf
    # the missing extra is said before anything else is looked at
    zeroconf = load_zeroconf() if mdns is None else None
    addresses = list(addresses or lan_addresses())
    if not addresses:
        raise LanError("this computer has no address on a local network (only loopback): "
                       "--lan needs one")
    if mdns is None:
        # announced on the interfaces we serve on, and only there
        from ._zeroconf import ZeroconfMDNS
        mdns = ZeroconfMDNS(zeroconf, addresses)
    bridge = bridge or ThreadBridge(reactor)
    mailbox, factory = _build_server(reactor)
    ports, addresses = _listen(reactor, factory, addresses)
    mailbox.start()
    try:
        yield bridge.run(OPEN_TIMEOUT, mdns.open)
        server = f"wormhole-{secrets.token_hex(4)}.local."
        port = ports[0].getHost().port
        tries = [nameplate] if nameplate else candidates(rng or random.SystemRandom())
        for n in tries:
            try:
                yield bridge.run(CLAIM_TIMEOUT, mdns.claim, n, server, port, addresses)
            except NameplateTaken:
                if nameplate:
                    raise
                continue
            return LanMailbox(reactor, mdns, bridge, mailbox, factory, ports, addresses, n)
        raise NameplateTaken(f"every nameplate tried ({', '.join(tries)}) is already "
                             "announced on this network")
    except BaseException:
        try:
            yield bridge.run(CLOSE_TIMEOUT, mdns.close)
        except Exception:
            pass
        yield _stop_server(mailbox, factory, ports)
        raise
