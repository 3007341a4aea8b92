# -*- test-case-name: tests.relay.test_websocket -*-
"""The thin WebSocket glue (``--websocket``): autobahn below, the same
``RelayConnection`` machine above.

Binary messages carry the same byte stream as TCP: message boundaries mean
nothing (a handshake may come in pieces, or with nothing else in its
message), and what the partner sends reaches a WebSocket client as binary
messages. A text message is refused: the stream is bytes. Reading stops at
the TCP level when the partner is slow (``ReadingProducer``), and frames
are handed on piece by piece, so memory stays bounded here too.
"""

from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from twisted.internet.error import AlreadyCalled, AlreadyCancelled
from zope.interface import implementer

from wormhole_ops.logs import hide_peer

from ._interfaces import IPair, ITransitRelay, ITransportGlue
from ._tcp import ReadingProducer

# RFC 6455 section 7.4.1
CLOSE_NORMAL = 1000
CLOSE_UNSUPPORTED_DATA = 1003


@implementer(ITransportGlue)
class RelayWebSocketProtocol(WebSocketServerProtocol):
    _conn = None
    _closing = False
    _partner = None  # once relaying: where our client's bytes go
    _pair = None

    def connectionMade(self):
        super().connectionMade()
        hide_peer(self, self.factory.log_addresses)

    def onOpen(self):
        # reading stops at the TCP level: autobahn then reads no frames
        self.producer = ReadingProducer(self.transport)
        self._conn = self.factory.relay.connection_for(self)
        self._conn.start()

    # autobahn's advanced API: each piece of a frame goes to the machine
    # as it arrives, so a client sending one huge message cannot make us
    # hold it whole (the default onMessage joins the message first)

    def onMessageBegin(self, isBinary):
        super().onMessageBegin(isBinary)
        if not isBinary and not self._closing:
            # RFC 6455 7.4.1: 1003 is "a type of data it cannot accept"
            # (autobahn's sendClose only allows 1000 and 3000-4999)
            self._closing = True
            self.sendCloseFrame(CLOSE_UNSUPPORTED_DATA,
                                b"the relay carries bytes: send binary "
                                b"messages")

    def onMessageFrameData(self, payload):
        if self.message_is_binary and self._conn is not None:
            partner = self._partner
            if partner is not None:
                # relaying: straight to the partner (as the TCP glue does)
                self._pair.count(len(payload))
                partner.write(payload)
            else:
                self._conn.data_received(payload)

    def onMessageFrameEnd(self):
        self.frame_data = None

    def onMessageEnd(self):
        self.message_data = None

    def connectionLost(self, reason):
        super().connectionLost(reason)
        # autobahn may leave its closing-handshake timers armed once the
        # TCP connection is gone; a stopped relay leaves no timers behind
        for name in ("closeHandshakeTimeoutCall",
                     "serverConnectionDropTimeoutCall"):
            call = getattr(self, name, None)
            if call is not None:
                setattr(self, name, None)
                try:
                    call.cancel()
                except (AlreadyCalled, AlreadyCancelled):
                    pass  # it ran or was cancelled already: nothing left armed
        conn, self._conn = self._conn, None
        if conn is not None:
            # the record is written before the relay may stop (forget
            # fires drop_all's Deferred when the last one goes)
            conn.connection_lost()
            self.factory.relay.forget(conn)

    # ITransportGlue

    def write(self, data):
        # the client may have gone (its close or TCP loss) before our
        # partner's last bytes: autobahn refuses to send then
        if not self._closing and self.state == self.STATE_OPEN:
            self.sendMessage(data, isBinary=True)

    def close(self):
        if not self._closing:
            self._closing = True
            # reading may be paused (our partner's transport was full when
            # it went): the client's close frame must get through
            self.transport.resumeProducing()
            self.sendClose(CLOSE_NORMAL)

    def abort(self):
        self._closing = True
        self.transport.abortConnection()

    def stream_with(self, other, pair):
        self._partner = ITransportGlue(other)
        self._pair = IPair(pair)
        self.transport.registerProducer(other.producer, True)

    def stop_streaming(self):
        self._partner = None
        if self.transport is not None:
            self.transport.unregisterProducer()


class RelayWebSocketFactory(WebSocketServerFactory):
    protocol = RelayWebSocketProtocol
    log_addresses = False  # --log-addresses: let autobahn name peers

    def __init__(self, url, relay, reactor=None):
        super().__init__(url, reactor=reactor)
        self.relay = ITransitRelay(relay)
        # autobahn's timers go through txaio's batched timer, which rounds
        # the due time down to a whole second: its default 1 s closing
        # handshake timeout can fire a few ms after our close frame, abort
        # the TCP connection, and the reset makes the client lose the last
        # bytes and the close frame. Our own close timer bounds a client
        # that never answers, so give autobahn's at least as long.
        self.setProtocolOptions(
            closeHandshakeTimeout=relay.limits.close_timeout or 30.0)
