"""One zope Interface per Transit machine and per object they talk to.

Each machine stores its neighbours as ``IFoo(obj)`` at ``wire()`` time, so
a swapped argument fails at wiring, not in the middle of a transfer.
"""
# pylint: disable=no-self-argument,no-method-argument,inherit-non-class
from zope.interface import Interface


class ITransitConnection(Interface):
    """One TCP connection attempt: relay line, handshake, records (Transit
    protocol, "Handshake")."""

    def connection_made():
        """The TCP connection is up: write our first line."""

    def data_received(data):
        """Bytes from the peer (or the relay), in any split."""

    def connection_lost():
        """TCP closed, from either end."""

    def select(sink):
        """We won the race: switch to records, delivering them to ``sink``."""

    def reject():
        """Another connection won: hang up (the sender says nevermind)."""

    def stop():
        """Abandon this attempt, whatever it was doing."""

    def send_record(record):
        """Encrypt and write one record (records state only)."""

    def send_records(records):
        """``send_record`` for each, written to the socket as one piece."""

    def set_max_record(max_record):
        """Refuse (and hang up on) records longer than ``max_record`` bytes
        from now on (docs/security.md, "Transit")."""

    def close():
        """Hang up after what we wrote so far has been flushed."""


class IConnectionIO(Interface):
    """What a connection machine needs from its socket (the Protocol shell)."""

    def write(data):
        """Write bytes to the socket."""

    def lose():
        """Close the socket after flushing."""


class IRecordSink(Interface):
    """Where the winning connection's records go (the record pipe)."""

    def records_received(records):
        """Decrypted records, in order."""

    def connection_lost():
        """The connection is gone; no more records."""

    def records_refused(why):
        """The peer broke the record layer (``why``: one line saying how);
        the connection is being dropped, ``connection_lost`` follows."""


class ISelection(Interface):
    """The race of connection attempts behind one ``connect()`` (Transit
    protocol, "Handshake", "Relay")."""

    def start(relay_delay):
        """Launch direct attempts now, relay ones after ``relay_delay``."""

    def connection_ready(connection):
        """``connection`` passed negotiation: the first one wins."""

    def connection_failed(connection):
        """``connection`` closed before it passed negotiation."""

    def all_failed(reason):
        """No attempt is left and none can arrive: give up now."""

    def cancel():
        """The application gave up (or the Transit was shut down)."""

    def when_connected():
        """Deferred firing with the record pipe, or failing."""


class IAttempts(Interface):
    """The side effects the Selection asks for (see _attempts.Attempts)."""

    def launch_direct():
        """Start connecting to every direct hint."""

    def launch_relay():
        """Start connecting to every relay hint."""

    def stop_all_except(winner):
        """Stop every attempt but ``winner`` (None: stop all), stop listening."""

    def connection_failed(connection):
        """Count a failed attempt; may answer with Selection.all_failed."""

    def make_pipe(connection):
        """The record pipe around the winning connection."""


class IRecordPipe(Interface):
    """What ``connect()`` yields (Transit protocol, "API"); also
    IProducer/IConsumer."""

    def send_record(record):
        """Send one record (bytes)."""

    def send_records(records):
        """Send several records (bytes each) in order, in one write."""

    def receive_record():
        """Deferred firing with the next record."""

    def close():
        """Deferred firing once written data is flushed and the socket closed."""

    def describe():
        """Short text saying how we are connected (direct or relay)."""
