"""One zope Interface per Dilation machine and per object the machines
hand each other (docs/architecture.md, "Interfaces are checked")."""

from zope.interface import Attribute, Interface


class IDilationManager(Interface):
    """L1 (Dilation protocol, "Initiating Dilation"): please, hints, reconnect."""

    def got_dilate(plaintext):
        """A decrypted DILATE-n body from the peer."""

    def send_hints(hints):
        """The Connector's hint dicts, to go out as ``connection-hints``."""

    def connector_connection_made(connection):
        """L2 chose ``connection`` as this generation's L3."""

    def stop():
        """The wormhole is closing: drop everything."""


class IL3Connection(Interface):
    """What L4 may do with the selected L2 connection (Dilation protocol,
    "L3 protocol"): send records, pause reading, be dropped."""

    is_leader = Attribute("True if our side leads this connection: the peer's "
                          "subchannel ids then are even, ours odd "
                          "(Dilation protocol, \"L5 subchannels\")")

    def send_record(record):
        """Encode, encrypt, frame and write one record."""

    def register_producer(producer):
        """Let ``producer`` (L4 Outbound, an IPushProducer) be paused and
        resumed by the TCP transport's buffer."""

    def unregister_producer():
        """Undo ``register_producer``."""

    def pauseProducing():
        """Stop reading from the peer (and stop delivering records already
        read) until ``resumeProducing``."""

    def resumeProducing():
        """Undo ``pauseProducing``."""

    def disconnect():
        """Drop the connection."""


class IOutbound(Interface):
    """L4 outbound (Dilation protocol, "L4 protocol"): one seqnum counter for
    all subchannels, the queue retired by ACKs, resent on each new L3, and
    the outbound half of "Flow Control"."""

    def send_open(scid, subprotocol):
        """Queue and (if connected) send an OPEN."""

    def send_data(scid, data):
        """Queue and (if connected) send a DATA."""

    def send_close(scid):
        """Queue and (if connected) send a CLOSE."""

    def send_ack(resp_seqnum):
        """Send an ACK now if connected (ACKs are never queued)."""

    def handle_ack(resp_seqnum):
        """Retire every queued record with seqnum <= resp_seqnum."""

    def use_connection(connection):
        """A new L3: resend the queue in order, then flow."""

    def stop_using_connection():
        """The L3 is gone: pause every subchannel."""

    def subchannel_opened(subchannel):
        """Flow control covers ``subchannel`` from now on."""

    def subchannel_closed(subchannel):
        """Flow control no longer covers ``subchannel``."""


class IInbound(Interface):
    """L4 inbound (Dilation protocol, "L4 protocol"): de-duplication, ACKs,
    dispatch to subchannels, and the inbound half of "Flow Control"."""

    def got_record(record):
        """An OPEN/DATA/CLOSE from the current L3."""

    def end_of_batch():
        """Send one ACK for the newest record delivered since the last one."""

    def use_connection(connection):
        """A new L3 (paused at once if any subchannel is paused)."""

    def stop_using_connection():
        """The L3 is gone."""

    def subchannel_paused(subchannel):
        """The application paused reading from ``subchannel``."""

    def subchannel_resumed(subchannel):
        """The application resumed reading from ``subchannel``."""

    def subchannel_closed(scid):
        """Forget subchannel ``scid``."""

    def backlog_added(subchannel, nbytes):
        """``subchannel`` (not yet accepted by a listener) now keeps
        ``nbytes`` more of the peer's data."""

    def backlog_released(subchannel):
        """``subchannel`` no longer keeps any (delivered or closed)."""


class ISubChannel(Interface):
    """What L4 tells an L5 subchannel (Dilation protocol, "L5 subchannels")."""

    def remote_data(data):
        """A DATA payload for this subchannel."""

    def remote_close():
        """The peer's CLOSE for this subchannel."""

    def local_pause():
        """L3 is full or gone: pause the application's producer."""

    def local_resume():
        """L3 has room again: resume the application's producer."""


class ISubchannelListener(Interface):
    """Who accepts inbound OPENs (the endpoints of ``listener_for``)."""

    def got_open(scid, subprotocol):
        """The peer opened subchannel ``scid`` for ``subprotocol``."""


class IDilationConnector(Interface):
    """L2 for one generation (Dilation protocol, "L2 protocol", "L3 protocol"):
    races hints, collects viable connections, selects one."""

    def add_candidate(connection):
        """``connection`` finished the Noise handshake and got a KCM."""

    def candidate_lost(connection):
        """``connection`` closed before it was selected."""


class IRecordReceiver(Interface):
    """Who gets the records of the selected L3 connection (the Manager)."""

    def got_record(connection, record):
        """A decoded record from ``connection``."""

    def end_of_batch(connection):
        """Every record of the latest read has been delivered (ACKs for
        them may go out now, as one cumulative ACK)."""

    def connection_lost(connection):
        """The selected ``connection`` is gone."""


class IDilatedConnection(Interface):
    """The L2 connection protocol as its Connector sees it."""

    def select(receiver):
        """Make this the generation's L3; records go to ``receiver``."""

    def disconnect():
        """Drop it (a loser of the selection, or a stale generation)."""
