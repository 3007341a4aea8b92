# -*- test-case-name: tests.relay.test_server -*-
"""The thin TCP glue: a Twisted Protocol in front of a ``RelayConnection``."""

from twisted.internet.interfaces import IPushProducer
from twisted.internet.protocol import Factory, Protocol
from zope.interface import implementer

from ._interfaces import ITransitRelay, ITransportGlue


@implementer(IPushProducer)
class ReadingProducer:
    """Pauses and resumes reading from one client, for the partner's
    transport (spec 004 6.4 says nothing about flow control; without it a
    fast sender and a slow receiver make the relay buffer without bound).

    ``stopProducing`` does nothing: when a partner's transport goes, the
    machine decides how this connection closes."""

    def __init__(self, transport):
        self._transport = transport

    def pauseProducing(self):
        self._transport.pauseProducing()

    def resumeProducing(self):
        self._transport.resumeProducing()

    def stopProducing(self):
        pass


@implementer(ITransportGlue)
class RelayTCPProtocol(Protocol):
    _conn = None

    def connectionMade(self):
        self.producer = ReadingProducer(self.transport)
        self._conn = self.factory.relay.connection_for(self)
        self._conn.start()

    def dataReceived(self, data):
        self._conn.data_received(data)

    def connectionLost(self, reason):
        conn, self._conn = self._conn, None
        if conn is not None:
            # the record is written before the relay may stop (forget
            # fires drop_all's Deferred when the last one goes)
            conn.connection_lost()
            self.factory.relay.forget(conn)

    # ITransportGlue

    def write(self, data):
        self.transport.write(data)

    def close(self):
        # Half-close: our last words go out followed by FIN, and we go on
        # reading (the machine discards it) until the client closes. A full
        # close with unread bytes in the kernel would send a RST, and the
        # client could lose "bad handshake\n" before reading it. A client
        # that never closes is aborted by the machine's close timer.
        self.transport.loseWriteConnection()

    def abort(self):
        self.transport.abortConnection()

    def stream_from(self, other):
        self.transport.registerProducer(other.producer, True)

    def stop_streaming(self):
        self.transport.unregisterProducer()


class RelayTCPFactory(Factory):
    protocol = RelayTCPProtocol

    def __init__(self, relay):
        self.relay = ITransitRelay(relay)
