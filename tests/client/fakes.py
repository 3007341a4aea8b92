"""A fake connection for the RendezvousConnector: an endpoint whose
``connect()`` the test completes or fails, and a WebSocket protocol that
records what is sent."""

import json

from twisted.internet.defer import Deferred


class FakeTransport:
    def __init__(self, proto):
        self._proto = proto
        self.lost = False

    def loseConnection(self):
        if not self.lost:
            self.lost = True
            self._proto.rc.ws_close(False, 1006, "lost")


class FakeWS:
    def __init__(self, rc):
        self.rc = rc
        self.sent = []
        self.transport = FakeTransport(self)

    def sendMessage(self, payload, isBinary=False):
        self.sent.append(json.loads(payload.decode("utf-8")))

    def sendClose(self):
        self.transport.loseConnection()

    def types(self):
        return [m["type"] for m in self.sent]


class FakeEndpoint:
    def __init__(self, attempts):
        self._attempts = attempts

    def connect(self, factory):
        d = Deferred()
        self._attempts.append(d)
        return d


class FakeNetwork:
    """Hands out FakeEndpoints; ``attempts`` are the pending connects."""

    def __init__(self):
        self.attempts = []
        self.calls = []

    def endpoint_factory(self, scheme, host, port):
        self.calls.append((scheme, host, port))
        return FakeEndpoint(self.attempts)

    def accept(self, rc, welcome=None):
        """Complete the oldest connect: TCP, WebSocket handshake, welcome."""
        d = self.attempts.pop(0)
        ws = FakeWS(rc)
        d.callback(ws)
        rc.ws_open(ws)
        if welcome is not None:
            server_send(rc, {"type": "welcome", "welcome": welcome})
        return ws


def server_send(rc, msg):
    rc.ws_message(json.dumps(msg).encode("utf-8"))


class FakeServer:
    """Just enough of a Mailbox server (Mailbox server protocol), in memory, for client
    tests driven by a Clock: every delivery happens in a later turn
    (``clock.advance(0)``), as it would over a network."""

    def __init__(self, clock, welcome=None):
        self.clock = clock
        self.welcome = welcome if welcome is not None else {}
        self.net = FakeNetwork()
        self.conns = []
        self.nameplates = {}  # id -> {"mailbox": str, "sides": set}
        self.mailboxes = {}  # id -> {"messages": [...], "sides": set}
        self.moods = []  # (side, mood) from close
        self.received = []  # every message from every client
        self.up = True
        self._counter = 0

    def endpoint_factory(self, scheme, host, port):
        return _ServerEndpoint(self)

    def pump(self):
        """Run every delivery that is due now (not future timers)."""
        while any(c.getTime() <= self.clock.seconds() for c in self.clock.getDelayedCalls()):
            self.clock.advance(0)

    def drop_all(self):
        for conn in list(self.conns):
            conn.transport.loseConnection()

    def _send(self, conn, msg):
        msg = dict(msg, server_tx=self.clock.seconds())
        payload = json.dumps(msg).encode("utf-8")

        def deliver():
            if not conn.transport.lost:
                conn.rc.ws_message(payload)
        self.clock.callLater(0, deliver)

    def inject(self, conn, payload):
        """Deliver raw bytes to a client, as if the server sent them."""
        def deliver():
            if not conn.transport.lost:
                conn.rc.ws_message(payload)
        self.clock.callLater(0, deliver)

    def handle(self, conn, msg):
        self.received.append(msg)
        self._send(conn, {"type": "ack", "id": msg.get("id")})
        getattr(self, "_h_" + msg["type"].replace("-", "_"))(conn, msg)

    def _h_bind(self, conn, msg):
        conn.side = msg["side"]

    def _h_submit_permissions(self, conn, msg):
        pass

    def _h_list(self, conn, msg):
        self._send(conn, {"type": "nameplates",
                          "nameplates": [{"id": n} for n in sorted(self.nameplates)]})

    def _claim(self, conn, nameplate):
        np = self.nameplates.setdefault(nameplate, {"mailbox": f"mb{nameplate}", "sides": set()})
        np["sides"].add(conn.side)
        return np

    def _h_allocate(self, conn, msg):
        n = 1
        while str(n) in self.nameplates:
            n += 1
        self._claim(conn, str(n))
        self._send(conn, {"type": "allocated", "nameplate": str(n)})

    def _h_claim(self, conn, msg):
        np = self._claim(conn, msg["nameplate"])
        self._send(conn, {"type": "claimed", "mailbox": np["mailbox"]})

    def _h_release(self, conn, msg):
        np = self.nameplates.get(msg["nameplate"])
        if np:
            np["sides"].discard(conn.side)
        self._send(conn, {"type": "released"})

    def _h_open(self, conn, msg):
        mb = self.mailboxes.setdefault(msg["mailbox"], {"messages": [], "sides": set()})
        mb["sides"].add(conn.side)
        conn.mailbox = msg["mailbox"]
        for m in mb["messages"]:
            self._send(conn, m)

    def _h_add(self, conn, msg):
        m = {"type": "message", "side": conn.side, "phase": msg["phase"],
             "body": msg["body"], "id": msg.get("id")}
        self.mailboxes[conn.mailbox]["messages"].append(m)
        for other in self.conns:
            if getattr(other, "mailbox", None) == conn.mailbox:
                self._send(other, m)

    def _h_close(self, conn, msg):
        self.moods.append((conn.side, msg.get("mood")))
        conn.mailbox = None
        self._send(conn, {"type": "closed"})


class _ServerConn(FakeWS):
    def __init__(self, rc, server):
        FakeWS.__init__(self, rc)
        self.server = server
        self.side = None
        self.mailbox = None

    def sendMessage(self, payload, isBinary=False):
        FakeWS.sendMessage(self, payload, isBinary)
        self.server.handle(self, self.sent[-1])


class _ServerEndpoint:
    def __init__(self, server):
        self._server = server

    def connect(self, factory):
        server = self._server
        d = Deferred()

        def later():
            if d.called:  # cancelled
                return
            if not server.up:
                from twisted.internet.error import ConnectionRefusedError
                d.errback(ConnectionRefusedError())
                return
            conn = _ServerConn(factory.rc, server)
            server.conns.append(conn)
            orig_lose = conn.transport.loseConnection

            def lose():
                if conn in server.conns:
                    server.conns.remove(conn)
                orig_lose()
            conn.transport.loseConnection = lose
            d.callback(conn)
            conn.rc.ws_open(conn)
            server._send(conn, {"type": "welcome", "welcome": server.welcome})
        server.clock.callLater(0, later)
        return d
