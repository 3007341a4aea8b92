"""Whether a transfer-v2 session can reach the peer at all, and which leg
fails when it cannot (docs/api.md "Sessions"; docs/cli.md "Messages").

Dilation tries every way to the peer again and again
(Dilation protocol, "Initiating Dilation": "the agent tries forever"),
so on its own a session with no way through only ends when the peer has
been unreachable for the session's peer timeout (60 s), and then blames
the peer. Classic Transit, trying each hint once,
says within seconds that neither a direct connection nor the relay
reaches the other side. ``FirstConnection`` gives transfer-v2 the same
answer in the same time: ``CHECK_AFTER`` seconds after both sides began
dilating (our Dilation status turns ``ConnectingPeer`` when the peer's
``please`` came), if no connection was made yet, it looks at what could
still work:

- a direct connection: we listen (``listen``; the CLI's ``--no-listen``
  turns it off), or the peer sent a direct address among its hints;
- a Transit relay: ours (``transit_helper``) or one the peer named,
  each tried once with a plain TCP connection (no handshake: the relay
  drops it).

When neither can work, the session is closed and ``error`` names the
leg: the relay (it cannot be reached) or the direct path (there is no
relay, and no side listens). Otherwise Dilation goes on trying, and if
the peer timeout ends the session first, the peer is named.
"""
from urllib.parse import urlsplit

from twisted.internet import defer
from twisted.internet.endpoints import HostnameEndpoint
from twisted.internet.protocol import Factory, Protocol

from .._escape import escape_text
from .._status import ConnectedPeer, ConnectingPeer
from .._transit._hints import WebSocketV1Hint, parse_relay_locations
from ..errors import NoPath

# seconds after both sides began dilating before we look (the peer's hints
# come through the Mailbox server right after its please)
CHECK_AFTER = 2.0
# looks while the peer's hints have not come yet, before we decide without them
LOOKS = 3
# seconds one relay may take to accept a TCP connection
PROBE_TIMEOUT = 3.0


class _Hangup(Protocol):
    def connectionMade(self):
        self.transport.loseConnection()


def probe(reactor, host, port, timeout=PROBE_TIMEOUT):
    """Fires with None when ``host:port`` accepts a TCP connection, else
    with why not (a short text)."""
    ep = HostnameEndpoint(reactor, host, port, timeout=timeout)
    d = ep.connect(Factory.forProtocol(_Hangup))
    d.addCallbacks(lambda p: None, lambda f: f.getErrorMessage())
    return d


class FirstConnection:
    """Watches one session's first Dilation connection (feed it the
    Dilation status); see the module's docstring. ``listen``: whether our
    Dilation listens for a direct connection; ``transit_helper``: our
    Transit relay's location, or None. ``hints``: how the failure names
    what turns each leg on (the CLI names its options)."""

    def __init__(self, reactor, listen=True, transit_helper=None, probe=probe,
                 hints=("", "")):
        self._reactor = reactor
        self._listen = listen
        self._transit_helper = transit_helper
        self._listen_hint, self._relay_hint = hints
        self._probe = probe
        self._session = None
        self._connected = False
        self._hints = frozenset()  # the peer's, as DilationHints
        self._timer = None
        self._looks = 0
        self._over = False
        self.error = None  # the NoPath that closed the session

    def watch(self, session):
        """``session`` is closed when no way to the peer can work."""
        self._session = session

    def status_update(self, status):
        self._hints = frozenset(status.hints)
        if isinstance(status.peer_connection, ConnectedPeer):
            self._connected = True
            self._stop()
        elif (isinstance(status.peer_connection, ConnectingPeer) and not self._connected
              and not self._over and self._timer is None and self._looks == 0):
            self._look_later()

    def stop(self):
        """The session is over: nothing more to watch."""
        self._over = True
        self._stop()

    def _stop(self):
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    def _look_later(self):
        self._timer = self._reactor.callLater(CHECK_AFTER, self._look)

    def _direct(self):
        """Why no direct connection can be made, or None when one may."""
        if self._listen or any(h.is_direct for h in self._hints):
            return None
        return (f"no direct connection can be made (we do not listen{self._listen_hint}, "
                "and the peer sent no address of its own)")

    def _relays(self):
        """(description, host, port) of every relay Dilation dials: ours
        and the ones the peer named."""
        relays = []
        if self._transit_helper:
            for relay in parse_relay_locations(self._transit_helper):
                for h in relay.hints:
                    if isinstance(h, WebSocketV1Hint):
                        url = urlsplit(h.url)
                        default = 443 if url.scheme == "wss" else 80
                        relays.append((h.url, url.hostname, url.port or default))
                    else:
                        relays.append((f"tcp:{h.hostname}:{h.port}", h.hostname, h.port))
        for h in sorted(self._hints, key=lambda h: h.url):
            host, _, port = h.url.rpartition(":")
            if not h.is_direct and port.isdigit():
                where = f"tcp:{host}:{port}"
                if where not in [r[0] for r in relays]:
                    # the peer's words: escaped when shown
                    relays.append((escape_text(where), host, int(port)))
        return relays

    @defer.inlineCallbacks
    def _look(self):
        self._timer = None
        self._looks += 1
        if self._connected or self._over or self._session is None:
            return
        no_direct = self._direct()
        if no_direct is None:
            return  # Dilation may still get through: the peer timeout bounds it
        if not self._hints and self._looks < LOOKS:
            self._look_later()  # the peer's hints may still be on their way
            return
        relays = self._relays()
        if not relays:
            self._fail("direct", f"no path to the peer for the transfer: {no_direct}, "
                                 f"and no Transit relay{self._relay_hint}")
            return
        results = yield defer.gatherResults([self._probe(self._reactor, host, port)
                                             for _, host, port in relays])
        if self._connected or self._over or any(why is None for why in results):
            return
        failed = "; ".join(f"the Transit relay {where} cannot be reached ({escape_text(why)})"
                           for (where, _, _), why in zip(relays, results, strict=False))
        self._fail("relay", f"no path to the peer for the transfer: {failed}, and "
                            f"{no_direct}")

    def _fail(self, leg, message):
        self.error = NoPath(leg, message)
        self._session.close()

    def explain(self, error):
        """The error to report for the session's ``error``: ours when we
        closed it; the peer named when the peer timeout ended a session
        that never connected."""
        if self.error is not None:
            return self.error
        if not self._connected and "could not reach the peer's Dilation" in str(error):
            return NoPath("peer", f"no connection to the peer for the transfer: {error}; "
                                  "it may have gone away, or its network blocks "
                                  "every way we tried")
        return error
