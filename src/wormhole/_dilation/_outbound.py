"""L4 outbound (Dilation protocol, "L4 protocol", "Flow Control").

One sequence counter for every OPEN/DATA/CLOSE we send, whatever the
subchannel. Each record stays queued until the peer ACKs it (an ACK for N
retires every seqnum <= N) and the whole queue is resent, in order, on every
new L3 connection. ACKs themselves are never queued.

Flow control: while there is no L3, or the L3's TCP buffer is full (the
transport pauses us, an IPushProducer), every open subchannel is paused.
Once caught up ("flowing"), a full transport is one more pause reason, as
too much unacknowledged data is, not a state of its own: the transport
pauses and resumes us once per buffer-full, thousands of times per GiB,
and the two Automat transitions of each cycle cost ~14 us (~22 us without
_state_paths' transition dictionary) against ~0.6 us for the reason
alone (docs/performance.md, "Dilation"). While resending it is a state:
it decides when the resend goes on.

Resending: on a new L3 the queue is written as the transport takes it
(paused when its buffer is full, resumed when it drains), not all at once,
and records retired by ACKs meanwhile are skipped. The peer ACKs the last
record it had as soon as it uses the new L3 (``_inbound``), so after a
reconnection little that it already has is sent again. Subchannels stay
paused, and their new records queued behind the resend, until it is done.

The queue is bounded (docs/security.md, "Dilation"): once the records the
peer has not acknowledged cost more than ``max_unacked`` bytes (payload plus
a fixed per-record cost, so a flood of tiny writes counts too), every
subchannel's producer is paused until ACKs bring the cost down to half of
it. A peer that reads but never acknowledges therefore stalls our writers
instead of making us keep everything they write. A write larger than
``MAX_DATA_RECORD`` is sent as several DATA records, so no frame we send
exceeds what a peer of ours accepts (``_framing``).
"""

from collections import deque

from automat import MethodicalMachine
from twisted.internet.interfaces import IPushProducer
from zope.interface import implementer

from .._automat_private import trace_hook
from . import _interfaces as I
from ._records import Ack, Close, Data, Open, data_unchecked
from ._state_paths import StatePaths

# A peer of ours ACKs once per _inbound.ACK_EVERY (1 MiB) of DATA, sooner
# only after _inbound.ACK_DELAY: a bound near or below that would wait for
# that delay every time, so keep this well above it
DEFAULT_MAX_UNACKED = 16 * 1024 * 1024
# what a queued record costs beyond its payload: the Python objects
# (record, bytes header, seqnum int, deque slot): ~140 bytes for a
# 1-byte write on CPython 3.11 (tracemalloc)
RECORD_COST = 160
MAX_DATA_RECORD = 1024 * 1024

# the reasons our subchannels' producers are paused
_L3 = "no L3, resending, or its transport full"
_UNACKED = "too much unacknowledged"


# what the transport's pause and resume do in the states where the
# machine's inputs decide
_TRANSPORT_INPUTS = {"_on_paused": lambda s: s._transport_paused,
                     "_on_resumed": lambda s: s._transport_resumed}


def _cost(record):
    if type(record) is Data:
        return RECORD_COST + len(record.data)
    if type(record) is Open:
        return RECORD_COST + len(record.subprotocol)
    return RECORD_COST


@implementer(I.IOutbound, IPushProducer)
class Outbound:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, max_unacked=DEFAULT_MAX_UNACKED):
        self._next_seqnum = 0
        self._queue = deque()
        self._connection = None
        # Two independent causes pause our subchannels (the L3's state, the
        # unacknowledged queue): each subchannel is paused while at least
        # one reason holds, one added meanwhile starts paused. They start
        # paused: there is no L3 yet.
        self._subchannels = set()
        self._pause_reasons = {_L3}
        self._max_unacked = max_unacked
        self._unacked = 0   # the cost of self._queue
        self._resend_index = 0     # next queue position to resend
        # _send_now: the connection's send_record while we are caught up,
        # None while disconnected or resending (then new records only
        # queue, behind the resend); _transport_full: the transport has
        # paused our resend (or there is none); _on_paused/_on_resumed:
        # what the transport's pause and resume do (the inputs, or once
        # caught up the _L3 pause reason). All set from the state's row on
        # every transition (_state_paths).
        self._paths.install_initial(self, "S_disconnected")

    # -- public, validated, routed to inputs --------------------------------

    def _allocate(self):
        seqnum = self._next_seqnum
        # 4-byte field on the wire (Dilation protocol,
        # "L2 Message Payload Encoding")
        self._next_seqnum = (seqnum + 1) & 0xFFFFFFFF
        return seqnum

    def send_open(self, scid, subprotocol):
        self._queue_record(Open(scid, self._allocate(), subprotocol))

    def unacked_bytes(self):
        """What the records the peer has not acknowledged cost now."""
        return self._unacked

    def send_data(self, scid, data):
        # the hot path: no Automat transition per record
        if len(data) > MAX_DATA_RECORD:
            for i in range(0, len(data), MAX_DATA_RECORD):
                self.send_data(scid, data[i:i + MAX_DATA_RECORD])
            return
        seqnum = self._next_seqnum
        self._next_seqnum = (seqnum + 1) & 0xFFFFFFFF
        record = data_unchecked(scid, seqnum, data)
        self._queue.append(record)
        self._unacked += RECORD_COST + len(data)
        if self._unacked > self._max_unacked:
            self._hold(_UNACKED)
        if self._send_now is not None:
            self._send_now(record)

    # -- IPushProducer: the transport's buffer is full, or drained --------

    def pauseProducing(self):
        self._on_paused()

    def resumeProducing(self):
        self._on_resumed()

    def _pause_for_transport(self):
        self._hold(_L3)

    def _resume_for_transport(self):
        self._release(_L3)

    def send_close(self, scid):
        self._queue_record(Close(scid, self._allocate()))

    def _queue_record(self, record):
        self._queue.append(record)
        self._unacked += _cost(record)
        if self._unacked > self._max_unacked:
            self._hold(_UNACKED)
        if self._send_now is not None:
            self._send_now(record)

    def send_ack(self, resp_seqnum):
        # ACKs are never queued (Dilation protocol, "L4 protocol"): sent if
        # there is a connection (even mid-resend: they carry no seqnum), else
        # dropped (the peer resends, we ACK again)
        if self._connection is not None:
            self._connection.send_record(Ack(resp_seqnum))

    def handle_ack(self, resp_seqnum):
        # retire every seqnum <= resp_seqnum, in serial-number order
        # (RFC 1982 style) so the 4-byte counter may wrap; in any state
        q = self._queue
        retired = 0
        while q and ((resp_seqnum - q[0].seqnum) & 0xFFFFFFFF) < 0x80000000:
            self._unacked -= _cost(q.popleft())
            retired += 1
        self._resend_index = max(0, self._resend_index - retired)
        if self._unacked <= self._max_unacked // 2:
            self._release(_UNACKED)

    # -- states ------------------------------------------------------------

    @m.state(initial=True)
    def S_disconnected(self): pass

    @m.state()
    def S_resending(self): pass

    @m.state()
    def S_resending_paused(self): pass

    @m.state()
    def S_flowing(self): pass

    # -- inputs ------------------------------------------------------------

    @m.input()
    def use_connection(self, connection): pass

    @m.input()
    def stop_using_connection(self): pass

    @m.input()
    def _transport_paused(self): pass

    @m.input()
    def _transport_resumed(self): pass

    @m.input()
    def stopProducing(self): pass

    @m.input()
    def subchannel_opened(self, subchannel): pass

    @m.input()
    def subchannel_closed(self, subchannel): pass

    @m.input()
    def _resent_all(self): pass

    # -- outputs -----------------------------------------------------------

    @m.output()
    def attach(self, connection):
        self._connection = I.IL3Connection(connection)
        self._resend_index = 0
        # the transport pauses us when its buffer is full ("Flow Control")
        self._connection.register_producer(self)

    @m.output()
    def detach(self):
        self._connection.unregister_producer()
        self._connection = None

    @m.output()
    def resend_some(self):
        # Dilation protocol, "L4 protocol": everything unacknowledged, in
        # seqnum order. As much as the transport takes now; resumeProducing brings
        # us back for the rest. ACKs arriving in between retire records
        # (handle_ack moves the index back), so they are never sent again.
        q, c = self._queue, self._connection
        while not self._transport_full and self._resend_index < len(q):
            record = q[self._resend_index]
            self._resend_index += 1
            c.send_record(record)  # may pause us (S_resending_paused) synchronously
        if self._resend_index >= len(q) and self._connection is c:
            self._resent_all()

    @m.output()
    def pause_all(self):
        self._hold(_L3)

    @m.output()
    def resume_all(self):
        self._release(_L3)

    @m.output()
    def add(self, subchannel):
        self._subchannels.add(I.ISubChannel(subchannel))
        if self._pause_reasons:
            subchannel.local_pause()

    @m.output()
    def remove(self, subchannel):
        self._subchannels.discard(subchannel)

    def _hold(self, reason):
        first = not self._pause_reasons
        self._pause_reasons.add(reason)
        if first:
            for sc in list(self._subchannels):
                sc.local_pause()

    def _release(self, reason):
        if reason in self._pause_reasons:
            self._pause_reasons.discard(reason)
            if not self._pause_reasons:
                for sc in list(self._subchannels):
                    sc.local_resume()

    # -- transitions -------------------------------------------------------

    _paths = StatePaths(m, {
        "S_disconnected": {"_send_now": lambda s: None, "_transport_full": lambda s: True,
                           **_TRANSPORT_INPUTS},
        "S_resending": {"_send_now": lambda s: None, "_transport_full": lambda s: False,
                        **_TRANSPORT_INPUTS},
        "S_resending_paused": {"_send_now": lambda s: None, "_transport_full": lambda s: True,
                               **_TRANSPORT_INPUTS},
        # caught up: the transport's fullness is the _L3 pause reason
        "S_flowing": {"_send_now": lambda s: s._connection.send_record,
                      "_transport_full": lambda s: False,
                      "_on_paused": lambda s: s._pause_for_transport,
                      "_on_resumed": lambda s: s._resume_for_transport},
    })

    _paths.upon(S_disconnected, use_connection, S_resending, [attach, resend_some])
    _paths.upon(S_disconnected, _transport_paused, S_disconnected, [])
    _paths.upon(S_disconnected, _transport_resumed, S_disconnected, [])
    _paths.upon(S_disconnected, stopProducing, S_disconnected, [])
    _paths.upon(S_disconnected, subchannel_opened, S_disconnected, [add])
    _paths.upon(S_disconnected, subchannel_closed, S_disconnected, [remove])

    # subchannels stay paused while the queue is resent
    _paths.upon(S_resending, _resent_all, S_flowing, [resume_all])
    _paths.upon(S_resending, _transport_paused, S_resending_paused, [])
    _paths.upon(S_resending, _transport_resumed, S_resending, [])
    _paths.upon(S_resending, stopProducing, S_resending, [])
    _paths.upon(S_resending, stop_using_connection, S_disconnected, [detach])
    _paths.upon(S_resending, subchannel_opened, S_resending, [add])
    _paths.upon(S_resending, subchannel_closed, S_resending, [remove])

    _paths.upon(S_resending_paused, _transport_resumed, S_resending, [resend_some])
    # the last resent record filled the transport: caught up, but full, so
    # the subchannels stay paused (the _L3 reason) until it resumes us
    _paths.upon(S_resending_paused, _resent_all, S_flowing, [])
    _paths.upon(S_resending_paused, _transport_paused, S_resending_paused, [])
    _paths.upon(S_resending_paused, stopProducing, S_resending_paused, [])
    _paths.upon(S_resending_paused, stop_using_connection, S_disconnected, [detach])
    _paths.upon(S_resending_paused, subchannel_opened, S_resending_paused, [add])
    _paths.upon(S_resending_paused, subchannel_closed, S_resending_paused, [remove])

    # caught up. The transport's pause and resume take the paths of this
    # row (the same behaviour as these two transitions); while it is full
    # the transport still takes writes (it buffers): subchannels are asked
    # to stop, and a record they still write is sent, not lost
    _paths.upon(S_flowing, _transport_paused, S_flowing, [pause_all])
    _paths.upon(S_flowing, _transport_resumed, S_flowing, [resume_all])
    _paths.upon(S_flowing, stop_using_connection, S_disconnected, [detach, pause_all])
    _paths.upon(S_flowing, stopProducing, S_flowing, [])
    _paths.upon(S_flowing, subchannel_opened, S_flowing, [add])
    _paths.upon(S_flowing, subchannel_closed, S_flowing, [remove])
