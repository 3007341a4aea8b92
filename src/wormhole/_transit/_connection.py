"""One Transit connection attempt (Transit protocol, "Handshake", "Relay").

The machine is sans-I/O: bytes come in through ``data_received`` and go out
through the wired ``IConnectionIO``. ``ConnectionProtocol`` is the thin
Twisted shell around it.

Lines, in order:
- relay connections first write RELAY-HANDSHAKE and wait for ``ok\\n``;
  until then "they pretend the connection doesn't even exist" (Transit
  protocol, "Relay");
- both ends write their handshake at once and hang up on anything but the
  peer's handshake (Transit protocol, "Handshake");
- the Sender reports to the Selection; the first connection to get there
  wins and gets ``go\\n``, later ones get ``nevermind\\n`` and a hang-up;
- the Receiver waits for ``go\\n`` and only then reports to its Selection;
- after that, records both ways (``_codec``), dropping the connection on
  any bad or out-of-order record (Transit protocol, "Records").

Records are the bulk of a transfer, so once the machine is in ``S5_records``
they skip it: the output that enters that state installs a reader and a
writer that ``data_received`` and ``send_record`` (and ``send_records``)
call directly, and every transition out of it removes them before anything
else happens. The machine still decides everything that changes state: a bad
record is its ``_bad_record`` input, ``close``/``stop``/``connection_lost``
its inputs (docs/performance.md, "File transfer and relay").
"""

from automat import MethodicalMachine
from twisted.internet import protocol
from twisted.python import log
from zope.interface import implementer

from .._automat_private import trace_hook
from . import _codec
from ._interfaces import (
    IConnectionIO,
    IRecordSink,
    ISelection,
    ITransitConnection,
)


@implementer(ITransitConnection)
class TransitConnection:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, key, is_sender, relay_line=None, description=""):
        """``relay_line``: RELAY-HANDSHAKE for relay connections, else None."""
        self._is_sender = is_sender
        self._relay_line = relay_line
        self._description = description
        if is_sender:
            self._our_handshake = _codec.sender_handshake(key)
            self._their_handshake = _codec.receiver_handshake(key)
        else:
            self._our_handshake = _codec.receiver_handshake(key)
            self._their_handshake = _codec.sender_handshake(key)
        self._send_key, self._receive_key = _codec.record_keys(key, is_sender)
        self._expect = None
        self._on_match = None
        self._stash = b""
        self._encoder = None
        self._decoder = None
        self._max_record = _codec.DEFAULT_MAX_RECORD
        self._sink = None
        # the records fast path, present exactly while in S5_records
        self._reader = None
        self._writer = None

    def wire(self, io, selection):
        self._io = IConnectionIO(io)
        self._selection = ISelection(selection)

    def describe(self):
        return self._description

    def __repr__(self):
        role = "sender" if self._is_sender else "receiver"
        return f"<TransitConnection {role} {self._description}>"

    # states

    @m.state(initial=True)
    def S0_unconnected(self): pass

    @m.state()
    def S1_waiting_relay_ok(self): pass

    @m.state()
    def S2_handshaking(self): pass

    @m.state()
    def S3_waiting_go(self): pass

    @m.state()
    def S4_waiting_selection(self): pass

    @m.state()
    def S5_records(self): pass

    @m.state()
    def S6_closing(self): pass

    @m.state()
    def S7_closing_records(self): pass

    @m.state()
    def S8_closed(self): pass

    # public inputs route by our fixed configuration (relay or direct,
    # sender or receiver), so the machine itself has no ifs

    def connection_made(self):
        if self._relay_line is None:
            self._connected_direct()
        else:
            self._connected_to_relay()

    def select(self, sink):
        if self._is_sender:
            self._selected_as_sender(sink)
        else:
            self._selected_as_receiver(sink)

    def data_received(self, data):
        reader = self._reader
        if reader is not None:
            reader(data)
        else:
            self._data_received(data)

    def send_record(self, record):
        writer = self._writer
        if writer is not None:
            writer(record)
        else:
            self._send_record(record)

    def send_records(self, records):
        # several records in one write (the file sender's batches): same
        # frames as send_record one by one, one bytes for the transport
        if self._writer is not None:
            self._io.write(self._encoder.encode_many(records))
        else:
            for record in records:
                self._send_record(record)

    def set_max_record(self, max_record):
        # data, not state: the limit the decoder applies to each length
        self._max_record = max_record
        if self._decoder is not None:
            self._decoder.set_max_record(max_record)

    def reject(self):
        if self._is_sender:
            self._rejected_as_sender()
        else:
            self._rejected_as_receiver()

    @m.input()
    def _connected_direct(self): pass

    @m.input()
    def _connected_to_relay(self): pass

    @m.input()
    def _data_received(self, data): pass

    @m.input()
    def connection_lost(self): pass

    @m.input()
    def _selected_as_sender(self, sink): pass

    @m.input()
    def _selected_as_receiver(self, sink): pass

    @m.input()
    def _rejected_as_sender(self): pass

    @m.input()
    def _rejected_as_receiver(self): pass

    @m.input()
    def stop(self): pass

    @m.input()
    def _send_record(self, record): pass

    @m.input()
    def close(self): pass

    # internal inputs, fed by _feed when an expected line completed

    @m.input()
    def _relay_ok(self, data): pass

    @m.input()
    def _handshake_ok_as_sender(self, data): pass

    @m.input()
    def _handshake_ok_as_receiver(self, data): pass

    @m.input()
    def _go(self, data): pass

    @m.input()
    def _bad_bytes(self): pass

    @m.input()
    def _bad_record(self): pass

    # outputs

    @m.output()
    def _write_relay_line(self):
        self._io.write(self._relay_line)

    @m.output()
    def _expect_relay_ok(self):
        self._expect = _codec.Expect(_codec.RELAY_OK)
        self._on_match = self._relay_ok

    @m.output()
    def _write_handshake(self):
        self._io.write(self._our_handshake)

    @m.output()
    def _expect_handshake(self):
        self._expect = _codec.Expect(self._their_handshake)
        self._on_match = (self._handshake_ok_as_sender if self._is_sender
                          else self._handshake_ok_as_receiver)

    @m.output()
    def _expect_go(self):
        self._expect = _codec.Expect(_codec.GO)
        self._on_match = self._go

    @m.output()
    def _feed(self, data):
        # must be the last output of its transition: a match re-enters
        matched, leftover = self._expect.feed(data)
        if matched:
            self._on_match(leftover)
        elif matched is False:
            self._bad_bytes()

    @m.output()
    def _stash_data(self, data):
        # bytes after the last line: records the peer sent right after go
        self._stash += data

    @m.output()
    def _report_ready(self):
        self._selection.connection_ready(self)

    @m.output()
    def _write_go(self, sink):
        self._io.write(_codec.GO)

    @m.output()
    def _write_nevermind(self):
        self._io.write(_codec.NEVERMIND)

    @m.output()
    def _start_records(self, sink):
        self._sink = IRecordSink(sink)
        self._encoder = _codec.RecordEncoder(self._send_key)
        self._decoder = _codec.RecordDecoder(self._receive_key, self._max_record)
        self._reader = self._decode_bytes
        self._writer = self._encode_and_write_record

    @m.output()
    def _stop_records(self):
        # first output of every way out of S5_records: later bytes and
        # records go through the machine again, which drops or refuses them
        self._reader = None
        self._writer = None

    @m.output()
    def _deliver_stash(self, sink):
        stash, self._stash = self._stash, b""
        if stash:
            self._decode_bytes(stash)

    @m.output()
    def _decode(self, data):
        self._decode_bytes(data)

    def _decode_bytes(self, data):
        # last thing in its transition: a bad record re-enters the machine
        try:
            records = self._decoder.feed(data)
        except _codec.BadRecord as e:
            log.msg(f"transit {self._description}: {e}; dropping the connection")
            if e.records:
                self._sink.records_received(e.records)
            self._sink.records_refused(str(e))
            self._bad_record()
            return
        if records:
            self._sink.records_received(records)

    @m.output()
    def _encode_and_write(self, record):
        self._encode_and_write_record(record)

    def _encode_and_write_record(self, record):
        self._io.write(self._encoder.encode(record))

    @m.output()
    def _hang_up(self):
        self._io.lose()

    @m.output()
    def _report_failed(self):
        self._selection.connection_failed(self)

    @m.output()
    def _tell_sink_lost(self):
        self._sink.connection_lost()

    @m.output()
    def _refuse_record(self, record):
        raise ConnectionError(
            "the transit connection is closed; records can no longer be sent")

    S0_unconnected.upon(_connected_direct, enter=S2_handshaking,
                        outputs=[_write_handshake, _expect_handshake])
    S0_unconnected.upon(_connected_to_relay, enter=S1_waiting_relay_ok,
                        outputs=[_write_relay_line, _expect_relay_ok])
    S0_unconnected.upon(stop, enter=S8_closed, outputs=[_hang_up])
    S0_unconnected.upon(connection_lost, enter=S8_closed, outputs=[_report_failed])

    S1_waiting_relay_ok.upon(_data_received, enter=S1_waiting_relay_ok, outputs=[_feed])
    S1_waiting_relay_ok.upon(_relay_ok, enter=S2_handshaking,
                             outputs=[_write_handshake, _expect_handshake, _feed])
    S1_waiting_relay_ok.upon(_bad_bytes, enter=S6_closing, outputs=[_hang_up])
    S1_waiting_relay_ok.upon(stop, enter=S6_closing, outputs=[_hang_up])
    S1_waiting_relay_ok.upon(connection_lost, enter=S8_closed, outputs=[_report_failed])

    S2_handshaking.upon(_data_received, enter=S2_handshaking, outputs=[_feed])
    S2_handshaking.upon(_handshake_ok_as_sender, enter=S4_waiting_selection,
                        outputs=[_stash_data, _report_ready])
    S2_handshaking.upon(_handshake_ok_as_receiver, enter=S3_waiting_go, outputs=[_expect_go, _feed])
    S2_handshaking.upon(_bad_bytes, enter=S6_closing, outputs=[_hang_up])
    S2_handshaking.upon(stop, enter=S6_closing, outputs=[_hang_up])
    S2_handshaking.upon(connection_lost, enter=S8_closed, outputs=[_report_failed])

    S3_waiting_go.upon(_data_received, enter=S3_waiting_go, outputs=[_feed])
    S3_waiting_go.upon(_go, enter=S4_waiting_selection, outputs=[_stash_data, _report_ready])
    S3_waiting_go.upon(_bad_bytes, enter=S6_closing, outputs=[_hang_up])
    S3_waiting_go.upon(stop, enter=S6_closing, outputs=[_hang_up])
    S3_waiting_go.upon(connection_lost, enter=S8_closed, outputs=[_report_failed])

    S4_waiting_selection.upon(_data_received, enter=S4_waiting_selection, outputs=[_stash_data])
    S4_waiting_selection.upon(_selected_as_sender, enter=S5_records,
                              outputs=[_write_go, _start_records, _deliver_stash])
    S4_waiting_selection.upon(_selected_as_receiver, enter=S5_records,
                              outputs=[_start_records, _deliver_stash])
    S4_waiting_selection.upon(_rejected_as_sender, enter=S6_closing,
                              outputs=[_write_nevermind, _hang_up])
    S4_waiting_selection.upon(_rejected_as_receiver, enter=S6_closing, outputs=[_hang_up])
    S4_waiting_selection.upon(stop, enter=S6_closing, outputs=[_hang_up])
    S4_waiting_selection.upon(connection_lost, enter=S8_closed, outputs=[_report_failed])

    # what the records fast path does while it is installed (see above)
    S5_records.upon(_data_received, enter=S5_records, outputs=[_decode])
    S5_records.upon(_send_record, enter=S5_records, outputs=[_encode_and_write])
    S5_records.upon(_bad_record, enter=S7_closing_records, outputs=[_stop_records, _hang_up])
    S5_records.upon(close, enter=S7_closing_records, outputs=[_stop_records, _hang_up])
    S5_records.upon(stop, enter=S7_closing_records, outputs=[_stop_records, _hang_up])
    S5_records.upon(connection_lost, enter=S8_closed, outputs=[_stop_records, _tell_sink_lost])

    # after we hung up, the peer's last bytes and our own late calls are moot
    S6_closing.upon(_data_received, enter=S6_closing, outputs=[])
    S6_closing.upon(_send_record, enter=S6_closing, outputs=[_refuse_record])
    S6_closing.upon(close, enter=S6_closing, outputs=[])
    S6_closing.upon(stop, enter=S6_closing, outputs=[])
    S6_closing.upon(_rejected_as_sender, enter=S6_closing, outputs=[])
    S6_closing.upon(_rejected_as_receiver, enter=S6_closing, outputs=[])
    S6_closing.upon(connection_lost, enter=S8_closed, outputs=[_report_failed])

    S7_closing_records.upon(_data_received, enter=S7_closing_records, outputs=[])
    S7_closing_records.upon(_send_record, enter=S7_closing_records, outputs=[_refuse_record])
    S7_closing_records.upon(close, enter=S7_closing_records, outputs=[])
    S7_closing_records.upon(stop, enter=S7_closing_records, outputs=[])
    S7_closing_records.upon(connection_lost, enter=S8_closed, outputs=[_tell_sink_lost])

    S8_closed.upon(_data_received, enter=S8_closed, outputs=[])
    S8_closed.upon(_send_record, enter=S8_closed, outputs=[_refuse_record])
    S8_closed.upon(close, enter=S8_closed, outputs=[])
    S8_closed.upon(stop, enter=S8_closed, outputs=[])
    S8_closed.upon(_rejected_as_sender, enter=S8_closed, outputs=[])
    S8_closed.upon(_rejected_as_receiver, enter=S8_closed, outputs=[])


@implementer(IConnectionIO)
class ConnectionProtocol(protocol.Protocol):
    """The socket under one TransitConnection.

    Outbound connections get their machine before the socket is up. An
    inbound one may arrive before ``connect()`` (our peer can be quicker
    than we are to learn the key), so it holds its bytes until ``attach``.
    Anyone who reaches our port can send them, and an honest peer sends
    nothing but its handshake line (under 100 bytes) before ours: past
    ``EARLY_LIMIT`` bytes we stop reading until ``attach``
    (docs/security.md, "Transit").
    """

    EARLY_LIMIT = 1024

    def __init__(self):
        self._machine = None
        self._early = []
        self._early_bytes = 0
        self._paused_early = False
        self._made = False
        self._lost = False

    def attach(self, machine):
        self._machine = ITransitConnection(machine)
        if self._made:
            machine.connection_made()
        if self._paused_early and not self._lost:
            # new bytes come in a later reactor turn, after the kept ones
            self.transport.resumeProducing()
        self._paused_early = False
        early, self._early = self._early, []
        for data in early:
            machine.data_received(data)
        if self._lost:
            machine.connection_lost()

    def connectionMade(self):
        self._made = True
        if self._machine is not None:
            self._machine.connection_made()

    def dataReceived(self, data):
        if self._machine is None:
            self._early.append(data)
            self._early_bytes += len(data)
            if self._early_bytes > self.EARLY_LIMIT and not self._paused_early:
                self._paused_early = True
                self.transport.pauseProducing()
        else:
            self._machine.data_received(data)

    def connectionLost(self, reason=protocol.connectionDone):
        self._lost = True
        if self._machine is not None:
            self._machine.connection_lost()

    # IConnectionIO

    def write(self, data):
        self.transport.write(data)

    def lose(self):
        self.transport.loseConnection()
