"""One zope Interface per object of the Transit relay (docs/architecture.md, "Adding code")."""

from zope.interface import Attribute, Interface

from wormhole_ops.usage import IUsageWriter as _IUsageWriter


class ITransportGlue(Interface):
    """What a relay connection machine may do to its byte stream.

    The TCP and the WebSocket glue both provide it, so the machine does not
    know which one it drives."""

    producer = Attribute(
        "the IPushProducer that stops and restarts reading from this client "
        "(registered on the partner's transport for backpressure)")

    def write(data):
        """Send ``data`` (bytes) to this client."""

    def close():
        """Close after what was written has been sent."""

    def abort():
        """Drop the connection now, discarding what is queued."""

    def stream_with(other, pair):
        """Relay between this client and ``other`` (an ITransportGlue),
        without the machines: from now on bytes from this client go
        straight to ``other.write``, counted with ``pair.count``. And
        ``other.producer`` becomes the streaming producer of this
        connection's transport: when this client reads slower than the
        other one writes, Twisted pauses reading from the other one. A
        glue may move the bytes some cheaper way (TCP pairs splice)."""

    def stop_streaming():
        """Undo ``stream_with``: bytes from this client go to the machine
        again (which drops them)."""


class IRelayConnection(Interface):
    """The per-connection machine (states awaiting handshake, waiting for a
    partner, relaying, closing, done)."""

    glue = Attribute("this connection's ITransportGlue (the partner "
                     "registers its producer on it)")
    started = Attribute("when the connection was made (clock seconds)")

    def start():
        """The connection is up: arm the handshake timer."""

    def data_received(data):
        """Bytes from the client."""

    def connection_lost():
        """The client's connection is gone."""

    def paired(pair, partner):
        """The pairing found a partner: say ``ok`` and relay."""

    def displaced():
        """Another connection of the same side won the pairing."""

    def crowded():
        """Too many connections already wait for this token."""

    def partner_lost():
        """The partner's connection is gone: close ours."""

    def timed_out():
        """A timer of ours (or of our pair) expired."""

    def forward(data):
        """Write ``data`` received from the partner to our client."""


class IPairing(Interface):
    """Tokens waiting for a partner, and the live pairs (Transit protocol, "Relay Handshake":
    "The relay waits for a second connection that uses the same token")."""

    def add(conn, token, side):
        """A connection gave a good handshake. Either pairs it at once (it
        and its partner get ``paired``), or refuses it (``crowded``), or
        keeps it waiting."""

    def remove(conn):
        """A waiting connection leaves (lonely, jilted or impatient)."""

    def pair_finished(pair):
        """Both connections of ``pair`` are gone."""

    def stats():
        """(connected, waiting, incomplete_bytes): connections in pairs,
        connections waiting, bytes moved by pairs not yet finished."""


class IPair(Interface):
    """Two connections relaying to each other; writes the pair's record."""

    def moved(conn, data):
        """``conn`` received ``data``: count it, hand it to the partner."""

    def count(nbytes):
        """A glue moved ``nbytes`` from one client to the other itself:
        count them (and restart the idle timer)."""

    def lost(conn):
        """``conn`` is gone; the partner is told, and when both are gone
        the pair's usage record is written."""


class ISplicer(Interface):
    """Moves the bytes of one pair of TCP clients with splice(2)
    (``_splice.Splicer``)."""

    def start():
        """Pause both transports and splice; their write buffers must be
        empty."""

    def write(transport, data):
        """Bytes from user space for the client of ``transport``: before
        anything spliced after them (and straight to the transport once
        stopped)."""

    def stop():
        """Hand both transports back to Twisted, with anything we still
        hold written to them in order."""


class IPipePool(Interface):
    """Empty pipes shared by the Splicers of one relay
    (``_splice.PipePool``)."""

    def get():
        """An empty pipe (``r``, ``w``, ``size``); OSError when the kernel
        gives none big enough."""

    def put(pipe):
        """``pipe`` is empty again: keep it for the next one, or close it."""

    def discard(pipe):
        """Close ``pipe`` (it may hold bytes)."""

    def idle():
        """How many empty pipes wait in the pool."""

    def close():
        """Close the idle pipes, and every pipe given back from now on."""


class IUsageRecorder(Interface):
    """Receives one record per finished pair or unpaired connection."""

    def record(started, total_time, waiting_time, total_bytes, mood):
        """Times in seconds (``waiting_time`` None when never paired)."""

    def update_current(connected, waiting, incomplete_bytes):
        """The live counts, for the ``current`` table of ``--usage-db``."""

    def records():
        """Every record kept in memory, oldest first (list of dicts)."""

    def close():
        """Write what the writers hold and close them; returns a
        Deferred."""


# one writer interface for both servers' usage (wormhole_ops.usage)
IUsageWriter = _IUsageWriter


class ITransitRelay(Interface):
    """The whole relay as the glue and the services see it: it makes one
    machine per connection and knows every live one."""

    pairing = Attribute("the IPairing")
    usage = Attribute("the IUsageRecorder")
    limits = Attribute("the Limits")

    def connection_for(glue):
        """A new IRelayConnection driving ``glue`` (an ITransportGlue)."""

    def forget(conn):
        """``conn`` is gone."""

    def connections():
        """Every live IRelayConnection."""

    def set_trace(tracer):
        """Trace every machine made from now on."""

    def update_current():
        """Hand the live counts to the usage recorder."""

    def start():
        """Start the periodic ``current`` updates."""

    def drop_all():
        """Abort every connection; a Deferred fires when all are gone."""

    def stop():
        """Stop the updates, write the last counts, close the writers."""
