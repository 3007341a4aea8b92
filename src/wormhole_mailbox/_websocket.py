# -*- test-case-name: tests.unit.server.test_websocket -*-
"""The thin WebSocket glue: autobahn below, a ``Connection`` machine above.

Mailbox server protocol, "WebSocket Transport": one JSON message per WebSocket message.

Output is paced by the reader (docs/security.md, "Mailbox server"): the glue is the transport's
streaming producer, so Twisted pauses it when the socket's buffer is full;
while paused, and until what waits has gone, messages wait in the glue's
queue in order and leave as the transport resumes. Mailbox messages wait as
references to what the mailbox already holds (bounded by the mailbox's own
limits), so a backlog of any size is delivered at the reader's pace instead
of being refused; the server's own answers (acks, errors, pongs) are
encoded and counted, and past ``max_send_buffer`` bytes of those the client
is dropped as too slow: it sends but does not read.
"""

import collections
import ipaddress

from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from twisted.internet.error import AlreadyCalled, AlreadyCancelled
from zope.interface import implementer

from wormhole_ops.logs import hide_peer

from ._interfaces import ITransportGlue
from ._messages import encode

# Memory per idle connection matters (thousands of clients wait for their
# peer). Autobahn keeps ~95 attributes per connection; after the opening
# handshake these are dead weight, or hold a value that the class can hold
# for all connections until autobahn changes it.
_HANDSHAKE_ONLY = (
    "http_headers", "http_request_data", "http_request_host",
    "http_request_params", "http_request_path", "http_request_uri",
    "http_response_data", "http_status_line", "websocket_extensions",
    "websocket_protocols", "websocket_origin", "_wskey",
)
_SHARED_DEFAULTS = {
    # only set by the closing handshake or by auto-ping (which re-creates
    # them on the instance when it changes them)
    "autoPingPending": None, "autoPingPendingCall": None,
    "autoPingPendingSent": None, "autoPingTimeoutCall": None,
    "closeHandshakeTimeoutCall": None, "openHandshakeTimeoutCall": None,
    "closedByMe": False, "droppedByMe": False, "failedByMe": False,
    "localCloseCode": None, "localCloseReason": None,
    "remoteCloseCode": None, "remoteCloseReason": None,
    "wasClean": False, "wasCloseHandshakeTimeout": False,
    "wasMaxFramePayloadSizeExceeded": False,
    "wasMaxMessagePayloadSizeExceeded": False, "wasNotCleanReason": None,
    "wasOpenHandshakeTimeout": False,
    "wasServerConnectionDropTimeout": False,
    "wasServingFlashSocketPolicyFile": False,
    "websocket_protocol_in_use": None, "trackedTimings": None,
    "_perMessageCompress": None,
    # autobahn appends to these only during the handshake
    "websocket_extensions_in_use": (),
    # only used by synchronous/chopped writes, which we never ask for
    "send_queue": (), "triggered": False,
}


# seconds we keep reading (and dropping) the rest of a message far over
# the limit after saying why, before resetting the connection
OVERSIZE_DRAIN = 60


class _Close:
    """The closing handshake, queued behind what the reader has not had."""

    __slots__ = ("code", "reason")

    def __init__(self, code, reason):
        self.code = code
        self.reason = reason


@implementer(ITransportGlue)
class MailboxWebSocketProtocol(WebSocketServerProtocol):
    _conn = None
    _paused = False
    _queue = None  # a deque while anything waits for the transport
    _queued_bytes = 0  # of the server's own answers in the queue
    _gone = False
    locals().update(_SHARED_DEFAULTS)

    def _slim(self):
        attrs = self.__dict__
        for name in _HANDSHAKE_ONLY:
            attrs.pop(name, None)
        for name, value in _SHARED_DEFAULTS.items():
            if name not in attrs:
                continue
            current = attrs[name]
            if isinstance(value, tuple):
                same = not current  # an empty deque or list
            else:
                same = type(current) is type(value) and current == value
            if same:
                del attrs[name]
        # a dict does not shrink when keys go: copy it into a compact one
        self.__dict__ = dict(attrs)

    def connectionMade(self):
        super().connectionMade()
        hide_peer(self, self.factory.log_addresses)

    # autobahn's dataReceived and sendData build a debug line per call,
    # with click-styled arguments, before the logger drops it (debug is
    # never on here): a tenth of the server's CPU in a burst of clients
    # (docs/performance.md, "A burst of 500 pairs on a fresh server"). Ours
    # do the same work without it.

    def dataReceived(self, data):
        self._dataReceived(data)

    def sendData(self, data, sync=False, chopsize=None):
        if sync or chopsize or self.send_queue or self.logOctets:
            # queued or chopped writes (never ours) and octet logging go
            # the whole way through autobahn
            super().sendData(data, sync, chopsize)
            return
        self.transport.write(data)
        state = self.state
        if state == self.STATE_OPEN:
            self.trafficStats.outgoingOctetsWireLevel += len(data)
        elif state in (self.STATE_CONNECTING, self.STATE_PROXY_CONNECTING):
            self.trafficStats.preopenOutgoingOctetsWireLevel += len(data)

    def onOpen(self):
        # before _slim() drops the request headers; never logged (privacy)
        you = your_address(self.transport.getPeer(), getattr(
            self, "http_headers", {}), self.factory.trust_x_real_ip)
        self._slim()
        self.transport.registerProducer(self, True)
        self._conn = self.factory.mailbox.connection_for(self)
        self._conn.connected(you)

    def _max_message_size_exceeded(self, msg_size, max_msg_size, reason):
        # autobahn's hook for a frame over maxMessagePayloadSize (far over
        # our own limit): say why, as an `error` (Mailbox server protocol,
        # "Connection-Specific (Client-to-Server) Messages") and in the
        # close (1009), and read the rest of the frame, which autobahn
        # drops once failedByMe, for up to OVERSIZE_DRAIN seconds, instead
        # of resetting the connection while the client still sends it:
        # it would never read why (docs/security.md, "Mailbox server")
        self.failedByMe = True
        limit = self.factory.mailbox.limits.max_message_size
        why = (f"message too large: {msg_size} bytes, this server accepts at most "
               f"{limit} bytes per message")
        self._conn.error(why, f"<{msg_size} bytes, not parsed>", "bad_message")
        self.closeHandshakeTimeout = OVERSIZE_DRAIN
        self.drop(self.CLOSE_STATUS_CODE_MESSAGE_TOO_BIG, why)

    def onMessage(self, payload, isBinary):
        # Mailbox server protocol, "WebSocket Transport" says binary; text
        # frames carry the same JSON, accept both
        self._conn.received(payload)

    def connectionLost(self, reason):
        super().connectionLost(reason)
        # autobahn leaves its close-handshake timer armed after the TCP
        # connection is gone; a stopped server must leave no timers behind
        call = getattr(self, "closeHandshakeTimeoutCall", None)
        if call is not None:
            self.closeHandshakeTimeoutCall = None
            try:
                call.cancel()
            except (AlreadyCalled, AlreadyCancelled):
                pass  # it ran or was cancelled already: nothing left armed

    def onClose(self, wasClean, code, reason):
        self._gone = True
        if self._conn is not None:
            conn, self._conn = self._conn, None
            self.factory.mailbox.forget(conn)
            conn.lost()

    # ITransportGlue

    def send_json(self, message):
        if self._gone:
            return
        if not self._paused and not self._queue:
            self._transmit(message)
            return
        if self._queue is None:
            self._queue = collections.deque()
        if message.get("type") == "message":
            self._queue.append(message)
            return
        data = encode(message)
        self._queue.append(data)
        self._queued_bytes += len(data)
        if self._queued_bytes > self.factory.mailbox.limits.max_send_buffer:
            self._conn.too_slow()

    def _transmit(self, item):
        data = item if isinstance(item, bytes) else encode(item)
        # Mailbox server protocol, "WebSocket Transport" says "binary-mode",
        # but the reference server sends text frames and the reference
        # client asserts on it: the wire decides (docs/protocols.md;
        # docs/interop.md, "Frames (`test_wire`, `test_permissions`)").
        # JSON with ensure_ascii is valid UTF-8 text.
        self.sendMessage(data, False)

    def drop(self, code, reason):
        if self._gone:
            return
        self._gone = True
        close = _Close(code, reason.encode("utf-8")[:123])
        if self._queue:
            # after what is queued (the `error` saying why comes first)
            self._queue.append(close)
        else:
            self.sendCloseFrame(close.code, close.reason)

    def abort(self):
        # a client that does not read gets no closing handshake: drop what
        # is queued for it at once
        self._gone = True
        self.transport.abortConnection()

    # IPushProducer, for the transport

    def pauseProducing(self):
        self._paused = True

    def resumeProducing(self):
        self._paused = False
        queue = self._queue
        # sending may pause us again (Twisted calls pauseProducing from
        # inside write): then the rest waits for the next resume
        while queue and not self._paused:
            item = queue.popleft()
            if isinstance(item, _Close):
                queue.clear()
                self.sendCloseFrame(item.code, item.reason)
                break
            if isinstance(item, bytes):
                self._queued_bytes -= len(item)
            self._transmit(item)
        if not queue:
            self._queue = None

    def stopProducing(self):
        pass


def your_address(peer, headers, trust_x_real_ip):
    """The welcome's ``your-address`` (docs/server.md): where the client's
    connection came from as ``{"port": P, "ipv4"|"ipv6": ADDR}``, the way
    the reference 0.8 sends it (a v4-mapped IPv6 peer is ``ipv4``); behind
    a reverse proxy, the operator's ``--trust-x-real-ip`` takes the
    X-Real-IP/X-Real-Port headers instead. None when unknown (a UNIX
    socket, a proxy that sent no or bad headers)."""
    if trust_x_real_ip:
        host, port = headers.get("x-real-ip"), headers.get("x-real-port")
    else:
        host, port = getattr(peer, "host", None), getattr(peer, "port", None)
    try:
        addr = ipaddress.ip_address(str(host).strip())
        port = int(port)
    except (TypeError, ValueError):
        return None
    if not 0 < port < 65536:
        return None
    if addr.version == 6 and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return {"port": port, f"ipv{addr.version}": str(addr)}


class MailboxWebSocketFactory(WebSocketServerFactory):
    protocol = MailboxWebSocketProtocol
    log_addresses = False  # --log-addresses: let autobahn name peers
    trust_x_real_ip = False  # --trust-x-real-ip: a proxy names the client

    def __init__(self, url, mailbox, reactor=None):
        super().__init__(url, reactor=reactor)
        self.mailbox = mailbox

    def setProtocolOptions(self, **options):
        super().setProtocolOptions(**options)
        # Autobahn copies each of its ~30 options onto every connection
        # unless the protocol class already has it: give them to a
        # per-factory subclass instead (same values, one copy).
        base = self.__class__.protocol
        shared = {name: getattr(self, name) for name in base.CONFIG_ATTRS
                  if hasattr(self, name)}
        # a function option (perMessageCompressionAccept) must not become
        # a method of the class: clients offering permessage-deflate (Go's
        # wormhole-william) would hang in the opening handshake
        shared = {name: staticmethod(v) if callable(v) else v
                  for name, v in shared.items()}
        # With every option on the class, autobahn's per-connection copy
        # loop has nothing to copy, but it still pretty-prints the ~30
        # options for a debug line that is never logged: a tenth of the
        # CPU of a connection (docs/performance.md, "A burst of 500 pairs on
        # a fresh server"). Nothing
        # left to copy, nothing to print.
        shared["CONFIG_ATTRS"] = ()
        self.protocol = type(base.__name__, (base,), shared)
