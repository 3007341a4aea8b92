"""How a selected L2 connection's frames reach its socket (docs/performance.md,
"Dilation").

A sealed frame is a list of byte strings (length prefix, then each Noise
message). Twisted's TCP transport keeps what it is given in a list and joins
it into one buffer before each ``send()``: a copy of every byte on top of
the sealing and the kernel's. ``GatherWriter`` hands the pieces to the
kernel as they are, with one ``sendmsg`` per frame, while the transport has
nothing of ours buffered; what the kernel does not take (its buffer full,
or an error) goes to the transport, and so does everything after it until
the transport reports its buffer drained, so the bytes stay in order and
Twisted still reports a broken connection and flushes before closing.

To hear of that drain it registers with the transport as a pull producer:
Twisted then calls its ``resumeProducing`` each time its buffer has emptied
(and once at registration, ignored: the buffer may still hold the
handshake). Our Outbound, the streaming producer behind it, is paused once
the transport holds more than ``limit`` bytes of ours and resumed at the
drain, as Twisted itself would pause it.

``TransportWriter`` is the same interface over the transport's own
``writeSequence`` and producer registration, for a transport that offers
no socket with ``sendmsg`` (tests' in-memory transports, other platforms).
"""

from twisted.internet.interfaces import IPullProducer, IPushProducer, ISSLTransport, ITCPTransport
from zope.interface import implementer


def plain_socket(transport):
    """The socket under a plain TCP transport, one we may write with
    ``sendmsg`` and read with ``recv_into`` ourselves, else None. Never
    under TLS (``startTLS`` makes a TCP transport an ISSLTransport): its
    socket carries ciphertext only the transport can make."""
    if not ITCPTransport.providedBy(transport) or ISSLTransport.providedBy(transport):
        return None
    # (Twisted's iosim.FakeTransport says ITCPTransport and has no handle)
    handle = getattr(transport, "getHandle", None)
    sock = handle() if handle is not None else None
    if not (hasattr(sock, "sendmsg") and hasattr(sock, "recv_into")):
        return None
    return sock


def gather_writer_for(transport, limit):
    """A GatherWriter when the transport is plain TCP (``plain_socket``),
    else a TransportWriter."""
    sock = plain_socket(transport)
    if sock is None:
        return TransportWriter(transport)
    return GatherWriter(transport, sock, limit)


class TransportWriter:
    """The transport's own buffering: ``write(pieces)`` is its
    ``writeSequence``, the producer registered with it."""

    def __init__(self, transport):
        self._transport = transport
        self.write = transport.writeSequence

    def register(self, producer):
        self._transport.registerProducer(IPushProducer(producer), True)

    def unregister(self):
        self._transport.unregisterProducer()

    def close(self):
        pass


def _rest(pieces, sent):
    """What of ``pieces`` is left after the first ``sent`` bytes (as bytes:
    the transport takes nothing else)."""
    for i, piece in enumerate(pieces):
        if sent < len(piece):
            return [piece[sent:], *pieces[i + 1:]]
        sent -= len(piece)
    return []


@implementer(IPullProducer)
class GatherWriter:
    """``write(pieces)``: one frame, sent with ``sendmsg`` while the
    transport holds nothing of ours (``_direct``), else given to the
    transport (``_via_transport``); ``write`` is one of the two, switched
    when the kernel refuses bytes and when the transport drains."""

    def __init__(self, transport, sock, limit):
        self._transport = transport
        self._sendmsg = sock.sendmsg
        self._limit = limit
        self._producer = None
        self._producer_paused = False
        self._given = 0   # bytes handed to the transport since it last drained
        # until the transport says it is empty, it may hold the handshake
        self.write = self._via_transport
        self.resumeProducing = _ignore
        transport.registerProducer(self, False)
        self.resumeProducing = self._drained

    def _direct(self, pieces):
        try:
            sent = self._sendmsg(pieces)
        except OSError:
            # EAGAIN, or a broken connection: the transport keeps the
            # bytes, and finds and reports the error on its own
            sent = 0
        total = 0
        for piece in pieces:
            total += len(piece)
        if sent != total:
            self.write = self._via_transport
            self._via_transport(_rest(pieces, sent))

    def _via_transport(self, pieces):
        self._transport.writeSequence(pieces)
        for piece in pieces:
            self._given += len(piece)
        if self._given > self._limit:
            self._pause_producer()

    def _pause_producer(self):
        if self._producer is not None and not self._producer_paused:
            self._producer_paused = True
            self._producer.pauseProducing()

    def _drained(self):
        # IPullProducer, from the transport: everything it held is sent
        self._given = 0
        self.write = self._direct
        if self._producer_paused:
            self._producer_paused = False
            self._producer.resumeProducing()

    def stopProducing(self):
        # the transport lost its connection
        producer, self._producer = self._producer, None
        if producer is not None:
            producer.stopProducing()

    def register(self, producer):
        self._producer = IPushProducer(producer)
        self._producer_paused = False
        if self._given > self._limit:
            self._pause_producer()

    def unregister(self):
        self._producer = None
        self._producer_paused = False

    def close(self):
        """Before the transport's loseConnection: a registered pull
        producer would keep it from closing once it has flushed."""
        self.write = self._via_transport
        self.resumeProducing = _ignore
        self._transport.unregisterProducer()


def _ignore():
    pass
