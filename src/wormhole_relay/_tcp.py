# -*- test-case-name: tests.relay.test_server -*-
"""The thin TCP glue: a Twisted Protocol in front of a ``RelayConnection``."""

from twisted.internet import tcp
from twisted.internet.interfaces import IPushProducer, ISSLTransport
from twisted.internet.protocol import Factory, Protocol
from zope.interface import implementer

from ._interfaces import IPair, ITransitRelay, ITransportGlue
from ._splice import PipePool, Splicer, big_pipe_budget, splice_available

# Reads on the plain path stay Twisted's 64 KiB: 128 and 256 KiB saved no
# measurable CPU under 100 pairs and cost 15-40 MiB of RSS (the write
# buffers grow with bufferSize too; docs/relay.md "Performance").


@implementer(IPushProducer)
class ReadingProducer:
    """Pauses and resumes reading from one client, for the partner's
    transport (Transit protocol, "Relay Handshake" says nothing about flow
    control; without it a
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
    # once relaying: where our client's bytes go, and what counts them
    # (the machine is not told of every chunk)
    _partner = None
    _pair = None
    # the pair's Splicer, when both are TCP and splice(2) works
    _splicer = None

    def connectionMade(self):
        self.producer = ReadingProducer(self.transport)
        self._conn = self.factory.relay.connection_for(self)
        self._conn.start()

    def dataReceived(self, data):
        partner = self._partner
        if partner is not None:
            self._pair.count(len(data))
            partner.write(data)
        else:
            self._conn.data_received(data)

    def connectionLost(self, reason):
        conn, self._conn = self._conn, None
        if conn is not None:
            # the record is written before the relay may stop (forget
            # fires drop_all's Deferred when the last one goes)
            conn.connection_lost()
            self.factory.relay.forget(conn)

    def _can_splice_with(self, other):
        # only the bare socket of both: TLS (a wrapper, or a socket that
        # started TLS) must see every byte, and WebSocket frames them
        return (self.factory.splice and isinstance(other, RelayTCPProtocol)
                and all(isinstance(t, tcp.Connection)
                        and not ISSLTransport.providedBy(t)
                        for t in (self.transport, other.transport)))

    # ITransportGlue

    def write(self, data):
        if self._splicer is not None:
            self._splicer.write(self.transport, data)
        else:
            self.transport.write(data)

    def close(self):
        # Half-close: our last words go out followed by FIN, and we go on
        # reading (the machine discards it) until the client closes. A full
        # close with unread bytes in the kernel would send a RST, and the
        # client could lose "bad handshake\n" before reading it. A client
        # that never closes is aborted by the machine's close timer.
        if self._splicer is not None:
            self._splicer.stop()
        # reading may be paused (our partner's transport was full when it
        # went): resume, or we would never see the client close
        self.transport.resumeProducing()
        self.transport.loseWriteConnection()

    def abort(self):
        if self._splicer is not None:
            self._splicer.stop()
        self.transport.abortConnection()

    def stream_with(self, other, pair):
        self._partner = ITransportGlue(other)
        self._pair = IPair(pair)
        self.transport.registerProducer(other.producer, True)
        if self._splicer is None and self._can_splice_with(other):
            # the first of the two to get here starts it for both; neither
            # has written anything yet (the machine says ok after this)
            splicer = Splicer(self.factory.reactor, self.transport,
                              other.transport, pair.count,
                              self.factory.pipes)
            self._splicer = other._splicer = splicer
            splicer.start()

    def stop_streaming(self):
        self._partner = None
        if self._splicer is not None:
            self._splicer.stop()
        self.transport.unregisterProducer()


class RelayTCPFactory(Factory):
    """``splice``: let TCP pairs use splice(2) when this system has it
    (``reactor`` must then be the one the ports listen with)."""

    protocol = RelayTCPProtocol

    def __init__(self, relay, reactor=None, splice=True):
        self.relay = ITransitRelay(relay)
        if reactor is None:
            from twisted.internet import reactor
        self.reactor = reactor
        self.splice = splice and splice_available()
        self.pipes = self._new_pool()

    def _new_pool(self):
        return PipePool(max_big=big_pipe_budget()) if self.splice else None

    def stopFactory(self):
        # the port is closed; pairs still splicing close their pipes as
        # they give them back (and a port listening again gets a new pool)
        if self.pipes is not None:
            self.pipes.close()
            self.pipes = self._new_pool()
