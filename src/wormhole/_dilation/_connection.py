"""L2 connection protocol and L3 keepalives (Dilation protocol,
"L2 protocol", "L3 protocol").

One DilatedConnectionProtocol per TCP connection of one generation. It
optionally speaks the relay handshake first (``please relay ... for side
...`` / ``ok``), then the handshake lines, then Noise NNpsk0 with the Leader
as initiator. The Follower sends its KCM as its first transport message;
the Leader, having seen it, offers the connection to the Connector, and on
selection sends its own KCM; the Follower offers the connection when that
KCM arrives. After selection every record goes to the Manager.

Keepalive (Dilation protocol, "L3 protocol"), one mechanism for both of its
purposes: every ``keepalive_interval`` seconds (dilate()'s
``ping_interval``, 30 s by default as in the reference 0.24) a tick writes a
PING with id 0 if we wrote nothing since the last tick (so a NAT or relay
sees traffic), and drops the connection if we heard nothing for the last two
intervals (so the Leader reconnects). The Dilation protocol says an idle
side sends a PONG, but the wire behaviour of the reference 0.24 decides: its
Follower keeps no timer and is silent when idle, answering only PINGs (its
Leader PINGs every interval, random ids), and its Leader prints "Weird: pong
for ping that isn't outstanding" on the application's stdout for an
unprovoked PONG. A PING is answered by either kind of peer, so each side
hears the other and the silence check does not drop a healthy idle
connection (tests/dilation/test_interop.py, "idle"). The Dilation protocol
asks only the Leader to drop a silent connection; the Follower does too
(docs/security.md, "Dilation"): a peer that goes silent must not hold our
L3, and our subchannels paused behind it, forever. The Follower then waits
for the Leader's ``reconnect`` as after any loss. A tick at which we
ourselves had stopped reading (flow control) does not count as silent.
Whether anything went either way is read off the Noise message counters, so
the per-record path keeps no keepalive flags. Time comes from an injected
clock.

Every frame length is checked before it is buffered (``_framing``), and a
connection that is not selected within ``HANDSHAKE_TIMEOUT`` of being
made is dropped: anyone can connect to a listening port and then say
nothing (docs/security.md, "Dilation").

Receive-side flow control: pauseProducing() stops the transport reading
*and* stops delivering frames already read, until resumeProducing().
"""

from collections import deque

from automat import MethodicalMachine
from twisted.internet.interfaces import IPushProducer
from twisted.internet.protocol import Protocol
from twisted.internet.task import LoopingCall
from twisted.python import log
from zope.interface import implementer

from .._automat_private import trace_hook
from . import _interfaces as I
from ._framing import (
    DEFAULT_MAX_FRAME,
    FrameReader,
    FramingError,
    NoiseSession,
    handshake_lines,
)
from ._records import (
    KCM,
    Ping,
    RecordError,
    encode_record,
    encode_record_parts,
)
from ._state_paths import StatePaths

DEFAULT_KEEPALIVE_INTERVAL = 30.0  # the reference 0.24's ping_interval
SILENT_TICKS = 2  # keepalive ticks with nothing heard before we drop
# from TCP connected to selected: the relay line, both handshakes and the
# KCMs take a few round trips; the Connector then selects (or drops) at once
HANDSHAKE_TIMEOUT = 60.0
RELAY_OK = b"ok\n"
# Twisted's read size and the write buffer above which it pauses us. Not
# bigger: each buffer is a fresh allocation (a read, the join of the
# pending writes), and glibc gives blocks freed above ~128 KiB back to the
# kernel, so with 1 MiB the sender took ~500k page faults per GiB (perf
# stat; ~1 s of system time) against ~11k at 256 KiB (docs/performance.md,
# "Dilation")
TRANSPORT_BUFFER = 1 << 18
# The most Twisted hands to one send() (its default: 128 KiB). Above the
# buffer, so a buffer-full (TRANSPORT_BUFFER plus the record that crossed
# it, at most _outbound.MAX_DATA_RECORD) goes in one call and one join
# instead of three calls and a second copy of the tail: sender CPU per GiB
# ~0.83 -> ~0.75 s (docs/performance.md, "Dilation")
SEND_LIMIT = 1 << 21
_KCM = encode_record(KCM())


def _nothing():
    pass


_IDLE_PING = encode_record(Ping(b"\x00\x00\x00\x00"))
# every state but "selected": records go through the machine's input
_SLOW_PATHS = {"_on_record": lambda s: s._got_record, "_on_batch_end": lambda s: _nothing}


class _Leader:
    """What the Leader does differently (Dilation protocol, "L2 protocol"):
    it is the Noise initiator, so its first handshake message follows its
    line at once, and it sends its KCM on the selected connection only."""

    @staticmethod
    def prologue(conn):
        return conn._send_line + conn._noise.write_handshake()

    @staticmethod
    def answer_handshake(conn):
        pass

    @staticmethod
    def selected(conn):
        conn._write_frame(_KCM)


class _Follower:
    """The Follower answers the Leader's handshake message, then sends its
    KCM as its first transport message; nothing more on selection."""

    @staticmethod
    def prologue(conn):
        return conn._send_line

    @staticmethod
    def answer_handshake(conn):
        conn.transport.write(conn._noise.write_handshake())
        conn._write_frame(_KCM)

    @staticmethod
    def selected(conn):
        pass


@implementer(I.IDilatedConnection, I.IL3Connection)
class DilatedConnectionProtocol(Protocol):
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, dilation_key, is_leader, connector, clock,
                 relay_handshake=None, description="?", max_frame=DEFAULT_MAX_FRAME,
                 dial_key=None, keepalive_interval=DEFAULT_KEEPALIVE_INTERVAL):
        # the role's steps, chosen once (no role flag consulted per step)
        self._role = _Leader if is_leader else _Follower
        self.is_leader = is_leader  # IL3Connection: tells L4 the peer's id parity
        # which of the Connector's dials made us (None: accepted), given
        # here rather than set on the built protocol afterwards
        self._dial_key = dial_key
        self._connector = I.IDilationConnector(connector)
        self._clock = clock
        self._relay_line = relay_handshake
        self.description = description
        self._noise = NoiseSession(dilation_key, is_leader)
        self._send_line, expected = handshake_lines(is_leader)
        self._reader = FrameReader(expected, max_frame=max_frame)
        self._relay_buf = b""
        self._receiver = None
        self._held = deque()     # frames read but not yet delivered
        # per-record hot path (_on_record, _on_batch_end), set from the
        # state's row on every transition (_state_paths): the _got_record
        # input until selected, then the receiver
        self._paths.install_initial(self, "S_unconnected")
        self._paused = False
        self._keepalive_interval = keepalive_interval
        self._keepalive = LoopingCall(self._keepalive_tick)
        self._keepalive.clock = clock
        # the Noise counters at the last keepalive tick, and how many ticks
        # in a row found nothing heard
        self._counted = (0, 0)
        self._silent_ticks = 0
        self._handshake_timer = None

    @property
    def dial_key(self):
        """Which of the Connector's dials made this connection, or None
        when the peer dialled us (accepted on our listening port)."""
        return self._dial_key

    # -- Twisted Protocol glue (validated, routed to inputs) ---------------

    def connectionMade(self):
        # bigger reads and a bigger write buffer before the transport
        # pauses us: fewer calls per MB (Twisted's default is 64 KiB;
        # TRANSPORT_BUFFER says why not more)
        if hasattr(self.transport, "bufferSize"):
            self.transport.bufferSize = TRANSPORT_BUFFER
        if hasattr(self.transport, "SEND_LIMIT"):
            self.transport.SEND_LIMIT = SEND_LIMIT
        # the handshake, KCMs and ACKs are small writes: without NODELAY,
        # Nagle and delayed ACKs stall each exchange by ~40 ms
        if hasattr(self.transport, "setTcpNoDelay"):
            self.transport.setTcpNoDelay(True)
        self._handshake_timer = self._clock.callLater(HANDSHAKE_TIMEOUT, self._not_selected)
        if self._relay_line is not None:
            self._connected_via_relay()
        else:
            self._connected_direct()

    def dataReceived(self, data):
        try:
            if self._relay_line is not None and self._relay_buf is not None:
                data = self._relay_data(data)
                if not data:
                    return
            frames = self._reader.add_data(data)
        except FramingError as e:
            self._bad(str(e))
            return
        if frames:
            self._held.extend(frames)
            self._deliver_frames()

    def _relay_data(self, data):
        buf = self._relay_buf + data
        if not RELAY_OK.startswith(buf[:len(RELAY_OK)]):
            raise FramingError(f"transit relay refused: {buf[:80]!r}")
        if len(buf) < len(RELAY_OK):
            self._relay_buf = buf
            return b""
        self._relay_buf = None
        self._relay_ok()
        return buf[len(RELAY_OK):]

    def _deliver_frames(self):
        held = self._held
        delivered = False
        while held and not self._paused:
            f = held.popleft()
            try:
                if not self._noise.handshake_done():
                    self._noise.read_handshake(f)
                    self._got_handshake()
                    continue
                record = self._noise.decrypt_record(f)
            except (FramingError, RecordError) as e:
                held.clear()
                self._bad(str(e))
                return
            if isinstance(record, KCM):
                self._got_kcm()
            else:
                # the machine input, or once selected the receiver itself
                self._on_record(record)
                delivered = True
        if delivered:
            self._on_batch_end()

    def connectionLost(self, reason=None):
        self._cancel_handshake_timer()
        self._lost()

    def _cancel_handshake_timer(self):
        t, self._handshake_timer = self._handshake_timer, None
        if t is not None and t.active():
            t.cancel()

    def _not_selected(self):
        self._handshake_timer = None
        log.msg(f"Dilation connection {self.description}: not selected within "
                f"{HANDSHAKE_TIMEOUT:g} s of connecting, dropped")
        self.disconnect()

    def _to_receiver(self, record):
        self._receiver.got_record(self, record)

    def _batch_to_receiver(self):
        self._receiver.end_of_batch(self)

    # -- IL3Connection (used by L4 and the Manager once selected) ----------

    def send_record(self, record):
        head, body = encode_record_parts(record)
        self.transport.writeSequence(self._noise.encrypt_parts(head, body))

    def register_producer(self, producer):
        self.transport.registerProducer(IPushProducer(producer), True)

    def unregister_producer(self):
        self.transport.unregisterProducer()

    def pauseProducing(self):
        if not self._paused:
            self._paused = True
            self.transport.pauseProducing()

    def resumeProducing(self):
        if self._paused:
            self._paused = False
            self.transport.resumeProducing()
            self._deliver_frames()

    # -- states ------------------------------------------------------------

    @m.state(initial=True)
    def S_unconnected(self): pass

    @m.state()
    def S_relaying(self): pass

    @m.state()
    def S_handshaking(self): pass

    @m.state()
    def S_want_kcm(self): pass

    @m.state()
    def S_candidate(self): pass

    @m.state()
    def S_selected(self): pass

    @m.state()
    def S_disconnecting(self): pass

    @m.state()
    def S_dropping_l3(self): pass

    @m.state()
    def S_closed(self): pass

    # -- inputs ------------------------------------------------------------

    @m.input()
    def _connected_direct(self): pass

    @m.input()
    def _connected_via_relay(self): pass

    @m.input()
    def _relay_ok(self): pass

    @m.input()
    def _got_handshake(self): pass

    @m.input()
    def _got_kcm(self): pass

    @m.input()
    def _got_record(self, record): pass

    @m.input()
    def _bad(self, why): pass

    @m.input()
    def _lost(self): pass

    @m.input()
    def select(self, receiver): pass

    @m.input()
    def disconnect(self): pass

    # -- outputs -----------------------------------------------------------

    def _write_frame(self, plaintext):
        self.transport.writeSequence(self._noise.encrypt_parts(plaintext))

    @m.output()
    def send_relay_line(self):
        self.transport.write(self._relay_line)

    @m.output()
    def send_prologue(self):
        # Dilation protocol, "L2 protocol": the line, and the Leader's first
        # Noise message right away (the Follower answers after reading it)
        self.transport.write(self._role.prologue(self))

    @m.output()
    def answer_handshake(self):
        self._role.answer_handshake(self)

    @m.output()
    def offer(self):
        # the Leader on the Follower's KCM, the Follower on the Leader's
        # (sent on selection): either way the peer is ready
        self._connector.add_candidate(self)

    @m.output()
    def become_l3(self, receiver):
        self._cancel_handshake_timer()
        self._receiver = I.IRecordReceiver(receiver)
        self._role.selected(self)
        self._counted = self._noise.messages_counted()
        self._keepalive.start(self._keepalive_interval, now=False)

    @m.output()
    def deliver(self, record):
        self._receiver.got_record(self, record)

    @m.output()
    def complain(self, why):
        log.msg(f"Dilation connection {self.description} dropped: {why}")

    @m.output()
    def complain_kcm(self):
        log.msg(f"Dilation connection {self.description}: unexpected KCM, dropped")

    @m.output()
    def complain_record(self, record):
        log.msg(f"Dilation connection {self.description}: record before selection, dropped")

    @m.output()
    def drop(self):
        self._cancel_handshake_timer()  # moot once we hang up
        self.transport.loseConnection()

    @m.output()
    def stop_timers(self):
        if self._keepalive.running:
            self._keepalive.stop()

    @m.output()
    def tell_connector(self):
        self._connector.candidate_lost(self)

    @m.output()
    def tell_receiver(self):
        self._receiver.connection_lost(self)

    # the keepalive tick: data, not transitions (Dilation protocol, "L3 protocol")
    def _keepalive_tick(self):
        sent, heard = self._noise.messages_counted()
        last_sent, last_heard = self._counted
        if heard != last_heard or self._paused:
            self._silent_ticks = 0
        else:
            self._silent_ticks += 1
            if self._silent_ticks >= SILENT_TICKS:
                log.msg(f"Dilation connection {self.description}: nothing heard for "
                        f"{SILENT_TICKS * self._keepalive_interval:g} s, dropped")
                self.disconnect()  # stops the LoopingCall (stop_timers)
                return
        if sent == last_sent:
            self._write_frame(_IDLE_PING)
        self._counted = self._noise.messages_counted()

    # -- transitions -------------------------------------------------------

    _paths = StatePaths(m, {
        "S_unconnected": _SLOW_PATHS, "S_relaying": _SLOW_PATHS, "S_handshaking": _SLOW_PATHS,
        "S_want_kcm": _SLOW_PATHS, "S_candidate": _SLOW_PATHS,
        "S_selected": {"_on_record": lambda s: s._to_receiver,
                       "_on_batch_end": lambda s: s._batch_to_receiver},
        "S_disconnecting": _SLOW_PATHS, "S_dropping_l3": _SLOW_PATHS, "S_closed": _SLOW_PATHS,
    })

    _paths.upon(S_unconnected, _connected_direct, S_handshaking, [send_prologue])
    _paths.upon(S_unconnected, _connected_via_relay, S_relaying, [send_relay_line])
    _paths.upon(S_unconnected, disconnect, S_closed, [])
    _paths.upon(S_unconnected, _lost, S_closed, [tell_connector])

    _paths.upon(S_relaying, _relay_ok, S_handshaking, [send_prologue])
    _paths.upon(S_relaying, _bad, S_disconnecting, [complain, drop])
    _paths.upon(S_relaying, disconnect, S_disconnecting, [drop])
    _paths.upon(S_relaying, _lost, S_closed, [tell_connector])

    _paths.upon(S_handshaking, _got_handshake, S_want_kcm, [answer_handshake])
    _paths.upon(S_handshaking, _bad, S_disconnecting, [complain, drop])
    _paths.upon(S_handshaking, disconnect, S_disconnecting, [drop])
    _paths.upon(S_handshaking, _lost, S_closed, [tell_connector])

    _paths.upon(S_want_kcm, _got_kcm, S_candidate, [offer])
    _paths.upon(S_want_kcm, _got_record, S_disconnecting, [complain_record, drop])
    _paths.upon(S_want_kcm, _bad, S_disconnecting, [complain, drop])
    _paths.upon(S_want_kcm, disconnect, S_disconnecting, [drop])
    _paths.upon(S_want_kcm, _lost, S_closed, [tell_connector])

    _paths.upon(S_candidate, select, S_selected, [become_l3])
    _paths.upon(S_candidate, _got_kcm, S_disconnecting, [complain_kcm, drop])
    _paths.upon(S_candidate, _got_record, S_disconnecting, [complain_record, drop])
    _paths.upon(S_candidate, _bad, S_disconnecting, [complain, drop])
    _paths.upon(S_candidate, disconnect, S_disconnecting, [drop])
    _paths.upon(S_candidate, _lost, S_closed, [tell_connector])

    # (records reach the receiver by the path of S_selected's row; this
    # transition is the same behaviour for a record delivered otherwise)
    _paths.upon(S_selected, _got_record, S_selected, [deliver])
    _paths.upon(S_selected, _got_kcm, S_dropping_l3, [complain_kcm, stop_timers, drop])
    _paths.upon(S_selected, _bad, S_dropping_l3, [complain, stop_timers, drop])
    _paths.upon(S_selected, disconnect, S_dropping_l3, [stop_timers, drop])
    _paths.upon(S_selected, _lost, S_closed, [stop_timers, tell_receiver])

    # the L3 dropped by us (keepalive, bad data, Manager): the Manager
    # learns of it when TCP reports the loss
    _paths.upon(S_dropping_l3, _got_record, S_dropping_l3, [])
    _paths.upon(S_dropping_l3, _got_kcm, S_dropping_l3, [])
    _paths.upon(S_dropping_l3, _bad, S_dropping_l3, [])
    _paths.upon(S_dropping_l3, disconnect, S_dropping_l3, [])
    _paths.upon(S_dropping_l3, _lost, S_closed, [tell_receiver])

    # dropped by us: the loss still has to reach whoever holds us
    _paths.upon(S_disconnecting, _got_record, S_disconnecting, [])
    _paths.upon(S_disconnecting, _got_kcm, S_disconnecting, [])
    _paths.upon(S_disconnecting, _bad, S_disconnecting, [])
    _paths.upon(S_disconnecting, disconnect, S_disconnecting, [])
    _paths.upon(S_disconnecting, _relay_ok, S_disconnecting, [])
    _paths.upon(S_disconnecting, _got_handshake, S_disconnecting, [])
    _paths.upon(S_disconnecting, _lost, S_closed, [tell_connector])

    _paths.upon(S_closed, disconnect, S_closed, [])
    _paths.upon(S_closed, select, S_closed, [])
