"""L4 outbound (spec 000 "L4 protocol", "Flow Control").

One sequence counter for every OPEN/DATA/CLOSE we send, whatever the
subchannel. Each record stays queued until the peer ACKs it (an ACK for N
retires every seqnum <= N) and the whole queue is resent, in order, on every
new L3 connection. ACKs themselves are never queued.

Flow control: while there is no L3, or the L3's TCP buffer is full (the
transport pauses us, an IPushProducer), every open subchannel is paused.
"""

from collections import deque

from automat import MethodicalMachine
from twisted.internet.interfaces import IPushProducer
from zope.interface import implementer

from . import _interfaces as I
from ._records import Ack, Close, Open, data_unchecked


@implementer(I.IOutbound, IPushProducer)
class Outbound:
    m = MethodicalMachine()
    set_trace = m._setTrace

    def __init__(self):
        self._next_seqnum = 0
        self._queue = deque()
        self._connection = None
        self._subchannels = set()

    # -- public, validated, routed to inputs --------------------------------

    def _allocate(self):
        seqnum = self._next_seqnum
        # 4-byte field on the wire (spec 000 "L2 Message Payload Encoding")
        self._next_seqnum = (seqnum + 1) & 0xFFFFFFFF
        return seqnum

    def send_open(self, scid, subprotocol):
        self._queue_record(Open(scid, self._allocate(), subprotocol))

    def send_data(self, scid, data):
        # the hot path: no Automat transition per record. Queueing does not
        # depend on the state; sending needs the connection that the
        # machine's attach/detach outputs set and clear
        seqnum = self._next_seqnum
        self._next_seqnum = (seqnum + 1) & 0xFFFFFFFF
        record = data_unchecked(scid, seqnum, data)
        self._queue.append(record)
        if self._connection is not None:
            self._connection.send_record(record)

    def send_close(self, scid):
        self._queue_record(Close(scid, self._allocate()))

    def _queue_record(self, record):
        self._queue.append(record)
        if self._connection is not None:
            self._connection.send_record(record)

    def send_ack(self, resp_seqnum):
        # ACKs are never queued (spec 000 "L4 protocol"): sent if there is
        # a connection, else dropped (the peer resends, we ACK again)
        if self._connection is not None:
            self._connection.send_record(Ack(resp_seqnum))

    def handle_ack(self, resp_seqnum):
        # retire every seqnum <= resp_seqnum, in serial-number order
        # (RFC 1982 style) so the 4-byte counter may wrap; in any state
        q = self._queue
        while q and ((resp_seqnum - q[0].seqnum) & 0xFFFFFFFF) < 0x80000000:
            q.popleft()

    # -- states ------------------------------------------------------------

    @m.state(initial=True)
    def S_disconnected(self): pass  # noqa

    @m.state()
    def S_flowing(self): pass  # noqa

    @m.state()
    def S_paused(self): pass  # noqa

    # -- inputs ------------------------------------------------------------

    @m.input()
    def use_connection(self, connection): pass  # noqa

    @m.input()
    def stop_using_connection(self): pass  # noqa

    @m.input()
    def pauseProducing(self): pass  # noqa

    @m.input()
    def resumeProducing(self): pass  # noqa

    @m.input()
    def stopProducing(self): pass  # noqa

    @m.input()
    def subchannel_opened(self, subchannel): pass  # noqa

    @m.input()
    def subchannel_closed(self, subchannel): pass  # noqa

    # -- outputs -----------------------------------------------------------

    @m.output()
    def attach(self, connection):
        self._connection = I.IL3Connection(connection)
        # the transport pauses us when its buffer is full ("Flow Control")
        self._connection.register_producer(self)

    @m.output()
    def detach(self):
        self._connection.unregister_producer()
        self._connection = None

    @m.output()
    def resend_queue(self):
        # spec 000 "L4 protocol": everything unacknowledged, in seqnum
        # order, on every new L3. A snapshot: ACKs may retire records
        # while we write.
        c = self._connection
        for record in list(self._queue):
            c.send_record(record)

    @m.output()
    def pause_all(self):
        for sc in list(self._subchannels):
            sc.local_pause()

    @m.output()
    def resume_all(self):
        for sc in list(self._subchannels):
            sc.local_resume()

    @m.output()
    def add(self, subchannel):
        self._subchannels.add(I.ISubChannel(subchannel))

    @m.output()
    def pause_one(self, subchannel):
        subchannel.local_pause()

    @m.output()
    def remove(self, subchannel):
        self._subchannels.discard(subchannel)

    # -- transitions -------------------------------------------------------

    S_disconnected.upon(use_connection, enter=S_flowing, outputs=[attach, resume_all, resend_queue])
    S_disconnected.upon(pauseProducing, enter=S_disconnected, outputs=[])
    S_disconnected.upon(resumeProducing, enter=S_disconnected, outputs=[])
    S_disconnected.upon(stopProducing, enter=S_disconnected, outputs=[])
    S_disconnected.upon(subchannel_opened, enter=S_disconnected, outputs=[add, pause_one])
    S_disconnected.upon(subchannel_closed, enter=S_disconnected, outputs=[remove])

    S_flowing.upon(stop_using_connection, enter=S_disconnected, outputs=[detach, pause_all])
    S_flowing.upon(pauseProducing, enter=S_paused, outputs=[pause_all])
    S_flowing.upon(resumeProducing, enter=S_flowing, outputs=[])
    S_flowing.upon(stopProducing, enter=S_flowing, outputs=[])
    S_flowing.upon(subchannel_opened, enter=S_flowing, outputs=[add])
    S_flowing.upon(subchannel_closed, enter=S_flowing, outputs=[remove])

    # paused: the transport still takes writes (it buffers); subchannels
    # are asked to stop, and a record they still write is sent, not lost
    S_paused.upon(stop_using_connection, enter=S_disconnected, outputs=[detach])
    S_paused.upon(pauseProducing, enter=S_paused, outputs=[])
    S_paused.upon(resumeProducing, enter=S_flowing, outputs=[resume_all])
    S_paused.upon(stopProducing, enter=S_paused, outputs=[])
    S_paused.upon(subchannel_opened, enter=S_paused, outputs=[add, pause_one])
    S_paused.upon(subchannel_closed, enter=S_paused, outputs=[remove])
