"""Test doubles for applications that use this library: two real
wormholes that find each other through an in-memory Mailbox server, and
dilate over an in-memory network, with no port opened, no thread, and
(with a ``task.Clock``) no real time passing.

The pattern is Tahoe-LAFS's ``wormholetesting``: the application's code
keeps calling ``create(...)`` as usual, and a test hands it
``server.create`` instead of ``wormhole.create``::

    from twisted.internet.task import Clock
    from wormhole.testing import memory_server

    clock = Clock()
    server = memory_server(clock)
    a = server.create("example.com/app", server.url, clock)
    b = server.create("example.com/app", server.url, clock)
    a.allocate_code()
    code_d = a.get_code()
    server.flush()                       # deliver everything due now
    b.set_code(code_d.result)            # (in trial: successResultOf)
    a.send_message(b"hi")
    got = b.get_message()
    server.flush()                       # got.result == b"hi"

docs/testing.md has the complete example test, Dilation included.

What the two wormholes run is this library itself: the real client
machines against the real Mailbox server logic (``wormhole_mailbox``, with
its memory store), and for Dilation the real Dilation stack whose TCP
listen/connect calls reach a memory network instead of the kernel. Each
delivery happens in a later reactor turn (``callLater(0)``), as over a
network, so with a ``Clock`` the test decides when: ``server.flush()``
runs every delivery that is due now.

``signature_drift(create)`` compares a ``create`` function's signature
with ``wormhole.create``'s public parameters; this module's tests run it
on ``MemoryMailbox.create``, so the double cannot drift from the real API.
"""

import inspect
import sys

from twisted.internet.address import IPv4Address
from twisted.internet.error import ConnectionDone, ConnectionRefusedError
from twisted.internet.interfaces import IConnector, IListeningPort, ITransport
from twisted.python.failure import Failure
from zope.interface import implementer

__all__ = ["MemoryMailbox", "memory_server", "signature_drift"]

MEMORY_URL = "ws://memory.invalid/v1"


def memory_server(reactor, welcome=None):
    """A new in-memory Mailbox server on ``reactor`` (a ``task.Clock`` for
    tests without real time, or the running reactor)."""
    return MemoryMailbox(reactor, welcome)


class MemoryMailbox:
    """The Mailbox server's logic (Mailbox server protocol) with clients attached in
    memory; ``create`` makes wormholes that use it."""

    url = MEMORY_URL

    def __init__(self, reactor, welcome=None):
        # the Mailbox server is a package of its own (the ``mailbox``
        # extra): imported here, so that the client never needs it
        # (docs/architecture.md, tests/unit/test_layering.py)
        try:
            from wormhole_mailbox.server import build_mailbox
        except ImportError as e:
            raise ImportError(
                f"memory_server() runs our Mailbox server, which needs the "
                f"'mailbox' extra: pip install 'wormhole-twisted[mailbox]' ({e})"
            ) from e
        self._reactor = reactor
        self._mailbox = build_mailbox(reactor, motd=(welcome or {}).get("motd"))
        self.network = MemoryNetwork(reactor)

    def create(self, appid, relay_url, reactor,
               versions={},  # noqa: B006  the reference's default (tests/app/test_surface.py); never mutated
               delegate=None, journal=None,
               tor=None, timing=None, stderr=sys.stderr, dilation=False,
               _eventual_queue=None, on_status_update=None, *, welcome_handler=None,
               proxy=None):
        """``wormhole.create`` with the same parameters, making a real
        wormhole whose Mailbox is this one (``relay_url`` is only checked)
        and whose Dilation connections stay in memory (so ``proxy`` is
        checked, as create checks it, and not used)."""
        from .wormhole import _proxy_of, create
        _proxy_of(reactor, proxy, tor)
        return create(appid, relay_url, _NetworkReactor(reactor, self.network), versions,
                      delegate, journal, tor, timing, stderr, dilation, _eventual_queue,
                      on_status_update, welcome_handler=welcome_handler,
                      _endpoint_factory=self._endpoint)

    def flush(self):
        """With a ``task.Clock``: run every delivery (and every other
        call) that is due now, including what they schedule for now."""
        clock = self._reactor
        while any(c.getTime() <= clock.seconds() for c in clock.getDelayedCalls()):
            clock.advance(0)

    def _endpoint(self, scheme, host, port):
        return _MailboxEndpoint(self)

    def stop(self):
        """Drop every client and stop the server logic."""
        return self._mailbox.stop()


# -- the Mailbox connection: the client's WebSocket, in memory -------------

class _MailboxEndpoint:
    def __init__(self, server):
        self._server = server

    def connect(self, factory):
        from twisted.internet.defer import Deferred
        d = Deferred()
        reactor = self._server._reactor

        def open_it():
            if d.called:  # cancelled meanwhile
                return
            ws = _ClientWebSocket(factory.rc, reactor)
            from wormhole_mailbox.testing import MemoryGlue
            glue = MemoryGlue(ws)
            ws.server_side = self._server._mailbox.connection_for(glue)
            ws.mailbox = self._server._mailbox
            d.callback(ws)
            factory.rc.ws_open(ws)
            ws.server_side.connected()
        reactor.callLater(0, open_it)
        return d


class _Transport:
    def __init__(self, ws):
        self._ws = ws

    def loseConnection(self):
        self._ws.close(True, 1000, "closed")

    abortConnection = loseConnection


class _ClientWebSocket:
    """What the RendezvousConnector holds: sendMessage/sendClose, with the
    server side of this connection behind it."""

    def __init__(self, rc, reactor):
        self._rc = rc
        self._reactor = reactor
        self.transport = _Transport(self)
        self.server_side = None
        self.mailbox = None
        self.gone = False

    def sendMessage(self, payload, isBinary=False):  # noqa: N802 (autobahn's name)
        if not self.gone:
            self._reactor.callLater(0, self._to_server, payload)

    def _to_server(self, payload):
        if not self.gone:
            self.server_side.received(payload)

    def to_client(self, payload):
        if not self.gone:
            self._reactor.callLater(0, self._deliver, payload)

    def _deliver(self, payload):
        if not self.gone:
            self._rc.ws_message(payload)

    def sendClose(self, code=None, reason=None):  # noqa: N802
        self.close(True, 1000, "closed")

    def close(self, was_clean, code, reason):
        if self.gone:
            return
        self.gone = True
        self.mailbox.forget(self.server_side)
        self.server_side.lost()
        self._reactor.callLater(0, self._rc.ws_close, was_clean, code, reason)


# -- Dilation's TCP: a memory network --------------------------------------

class _NetworkReactor:
    """The application's reactor, except that TCP listen/connect go to a
    MemoryNetwork (Dilation's direct and relay connections)."""

    def __init__(self, reactor, network):
        self._reactor = reactor
        self._network = network

    def listenTCP(self, port, factory, backlog=50, interface=""):  # noqa: N802
        return self._network.listenTCP(port, factory, backlog, interface)

    def connectTCP(self, host, port, factory, timeout=30, bindAddress=None):  # noqa: N802
        return self._network.connectTCP(host, port, factory, timeout, bindAddress)

    def __getattr__(self, name):
        return getattr(self._reactor, name)


class MemoryNetwork:
    """listenTCP/connectTCP between the wormholes of one MemoryMailbox:
    a connection to an address someone listens on is made in a later
    turn, anything else is refused. No socket is ever opened."""

    def __init__(self, reactor):
        self._reactor = reactor
        self._listeners = {}  # (host, port) -> factory
        self._next_port = 40000

    def listenTCP(self, port, factory, backlog=50, interface=""):  # noqa: N802
        if port == 0:
            self._next_port += 1
            port = self._next_port
        key = (interface or "0.0.0.0", port)
        if key in self._listeners:
            from twisted.internet.error import CannotListenError
            raise CannotListenError(interface, port, "address already in use (in memory)")
        self._listeners[key] = factory
        factory.doStart()
        return _MemoryPort(self, key, factory)

    def connectTCP(self, host, port, factory, timeout=30, bindAddress=None):  # noqa: N802
        connector = _MemoryConnector(self, host, port, factory)
        # as a reactor does: an endpoint's wrapping factory keeps the
        # connector to stop it when its Deferred is cancelled
        factory.startedConnecting(connector)
        self._reactor.callLater(0, connector.connect_now)
        return connector

    def _server_for(self, host, port):
        return self._listeners.get((host, port)) or self._listeners.get(("0.0.0.0", port))


@implementer(IListeningPort)
class _MemoryPort:
    def __init__(self, network, key, factory):
        self._network = network
        self._key = key
        self._factory = factory

    def startListening(self):  # noqa: N802
        pass

    def stopListening(self):  # noqa: N802
        if self._network._listeners.pop(self._key, None) is not None:
            self._factory.doStop()

    def getHost(self):  # noqa: N802
        return IPv4Address("TCP", self._key[0], self._key[1])


@implementer(IConnector)
class _MemoryConnector:
    def __init__(self, network, host, port, factory):
        self._network = network
        self._host, self._port = host, port
        self._factory = factory
        self._stopped = False

    def connect_now(self):
        if self._stopped:
            return
        server_factory = self._network._server_for(self._host, self._port)
        if server_factory is None:
            self._factory.clientConnectionFailed(self, Failure(ConnectionRefusedError(
                f"nothing listens on {self._host}:{self._port} in this memory network")))
            return
        here = IPv4Address("TCP", "127.0.0.1", 50000)
        there = IPv4Address("TCP", self._host, self._port)
        client = self._factory.buildProtocol(there)
        server = server_factory.buildProtocol(here)
        if client is None or server is None:
            return
        reactor = self._network._reactor
        a, b = _PipeEnd(reactor, here, there), _PipeEnd(reactor, there, here)
        a.peer, b.peer = b, a
        a.protocol, b.protocol = client, server
        client.makeConnection(a)
        server.makeConnection(b)

    def stopConnecting(self):  # noqa: N802
        self._stopped = True

    def disconnect(self):
        self._stopped = True

    def getDestination(self):  # noqa: N802
        return IPv4Address("TCP", self._host, self._port)


@implementer(ITransport)
class _PipeEnd:
    """One end of an in-memory TCP connection: what is written arrives at
    the other end in a later turn; no flow control is needed (nothing
    ever waits on a kernel buffer)."""

    def __init__(self, reactor, host, peer_address):
        self._reactor = reactor
        self._host = host
        self._peer_address = peer_address
        self.peer = None
        self.protocol = None
        self.disconnecting = False
        self._closed = False
        self._producer = None

    def write(self, data):
        if not self.disconnecting and data:
            self._reactor.callLater(0, self.peer._receive, bytes(data))

    def writeSequence(self, data):  # noqa: N802
        self.write(b"".join(data))

    def _receive(self, data):
        if not self._closed:
            self.protocol.dataReceived(data)

    def loseConnection(self):  # noqa: N802
        if not self.disconnecting:
            self.disconnecting = True
            # after what was written before: the peer sees it first
            self._reactor.callLater(0, self._lost_both)

    abortConnection = loseConnection

    def _lost_both(self):
        for end in (self, self.peer):
            end._lose()

    def _lose(self):
        if self._closed:
            return
        self._closed = self.disconnecting = True
        self.protocol.connectionLost(Failure(ConnectionDone()))

    def getPeer(self):  # noqa: N802
        return self._peer_address

    def getHost(self):  # noqa: N802
        return self._host

    def registerProducer(self, producer, streaming):  # noqa: N802
        self._producer = producer

    def unregisterProducer(self):  # noqa: N802
        self._producer = None

    def pauseProducing(self):  # noqa: N802
        pass

    def resumeProducing(self):  # noqa: N802
        pass

    def stopProducing(self):  # noqa: N802
        self.loseConnection()


# -- the drift check ---------------------------------------------------------

def signature_drift(create_function):
    """Differences between ``create_function``'s parameters and the public
    ones (no leading underscore, plus ``_eventual_queue``, which the
    reference exports) of ``wormhole.create``: names, order, kinds and
    defaults. An empty list means no drift."""
    from .wormhole import create

    def public(f):
        return [p for p in inspect.signature(f).parameters.values()
                if not p.name.startswith("_") or p.name == "_eventual_queue"]

    def describe(p):
        return (p.name, p.kind.name, repr(p.default))

    ours = [describe(p) for p in public(create)]
    theirs = [describe(p) for p in public(create_function)]
    drift = []
    for i in range(max(len(ours), len(theirs))):
        want = ours[i] if i < len(ours) else None
        got = theirs[i] if i < len(theirs) else None
        if want != got:
            drift.append(f"parameter {i}: wormhole.create has {want}, the double has {got}")
    return drift
