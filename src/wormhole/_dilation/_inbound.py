"""L4 inbound (spec 000 "L4 protocol", "Flow Control").

Every OPEN/DATA/CLOSE is ACKed; one whose seqnum we have already seen (a
resend after reconnection) is ACKed again but not delivered twice. The
resend always starts at or before our next seqnum, so "newer than the
last delivered" is enough for exactly-once, in-order delivery.

Flow control: while *any* subchannel is paused by its application, the L3
connection stops reading (and a new L3 starts paused).
"""

from automat import MethodicalMachine
from twisted.python import log
from zope.interface import implementer

from . import _interfaces as I
from ._records import Close, Data, Open


@implementer(I.IInbound)
class Inbound:
    m = MethodicalMachine()
    set_trace = m._setTrace

    def __init__(self):
        self._last_seqnum = None  # nothing delivered yet
        self._subchannels = {}
        self._paused = set()
        self._connection = None
        self._ack_due = None
        # per-record hot path, installed by the machine's attach/detach
        # outputs: while connected, new records are handled by _accept
        # without an Automat transition each (docs/dilation.md "Speed")
        self._on_new = self._got_new

    def wire(self, outbound, listener):
        self._outbound = I.IOutbound(outbound)
        self._listener = I.ISubchannelListener(listener)

    # -- public, validated, routed to inputs --------------------------------

    def register_subchannel(self, scid, subchannel):
        """A subchannel we opened ourselves (its DATA/CLOSE come here)."""
        self._subchannels[scid] = I.ISubChannel(subchannel)

    def subchannel_closed(self, scid):
        sc = self._subchannels.pop(scid, None)
        if sc is not None:
            self.subchannel_resumed(sc)

    def got_record(self, record):
        last = self._last_seqnum
        # "at or before the last delivered" in serial-number order, so the
        # 4-byte seqnum may wrap after 2**32 records
        if last is not None and ((last - record.seqnum) & 0xFFFFFFFF) < 0x80000000:
            self._got_old(record)
        else:
            self._on_new(record)

    def _accept(self, record):
        # spec 000 "L4 protocol": deliver once, then acknowledge. ACKs are
        # cumulative, so one per batch of records read (end_of_batch)
        self._last_seqnum = record.seqnum
        if isinstance(record, Data):
            sc = self._subchannels.get(record.scid)
            if sc is None:
                # spec 000 "L5 subchannels": logged and discarded
                log.msg(f"Dilation: DATA for unknown subchannel {record.scid}")
            else:
                sc.remote_data(record.data)
        elif isinstance(record, Open):
            if record.scid in self._subchannels:
                log.msg(f"Dilation: OPEN for existing subchannel {record.scid}")
            else:
                sc = self._listener.got_open(record.scid, record.subprotocol)
                self._subchannels[record.scid] = I.ISubChannel(sc)
        elif isinstance(record, Close):
            sc = self._subchannels.get(record.scid)
            if sc is None:
                log.msg(f"Dilation: CLOSE for unknown subchannel {record.scid}")
            else:
                sc.remote_close()
        self._ack_due = record.seqnum

    def end_of_batch(self):
        due, self._ack_due = self._ack_due, None
        if due is not None:
            self._outbound.send_ack(due)

    def subchannel_paused(self, subchannel):
        first = not self._paused
        self._paused.add(subchannel)
        if first:
            self._first_paused()

    def subchannel_resumed(self, subchannel):
        if subchannel in self._paused:
            self._paused.discard(subchannel)
            if not self._paused:
                self._all_resumed()

    # -- states ------------------------------------------------------------

    @m.state(initial=True)
    def S_disconnected_flowing(self): pass

    @m.state()
    def S_disconnected_paused(self): pass

    @m.state()
    def S_connected_flowing(self): pass

    @m.state()
    def S_connected_paused(self): pass

    # -- inputs ------------------------------------------------------------

    @m.input()
    def _got_old(self, record): pass

    @m.input()
    def _got_new(self, record): pass

    @m.input()
    def use_connection(self, connection): pass

    @m.input()
    def stop_using_connection(self): pass

    @m.input()
    def _first_paused(self): pass

    @m.input()
    def _all_resumed(self): pass

    # -- outputs -----------------------------------------------------------

    @m.output()
    def ack(self, record):
        self._outbound.send_ack(record.seqnum)

    @m.output()
    def attach(self, connection):
        self._connection = I.IL3Connection(connection)
        self._on_new = self._accept
        # tell the peer at once what we already have, so its resend on this
        # new connection skips it (an ACK for an old seqnum is harmless)
        if self._last_seqnum is not None:
            self._outbound.send_ack(self._last_seqnum)

    @m.output()
    def detach(self):
        # an ACK not sent is harmless: the peer resends, we ACK the duplicate
        self._ack_due = None
        self._connection = None
        self._on_new = self._got_new

    @m.output()
    def refuse(self, record):
        log.msg(f"Dilation: record {record!r} with no connection ignored")

    @m.output()
    def pause_connection(self):
        self._connection.pauseProducing()

    @m.output()
    def resume_connection(self):
        self._connection.resumeProducing()

    # -- transitions -------------------------------------------------------

    # new records while connected go to _accept (installed by attach);
    # with no connection there is nobody to deliver them
    S_disconnected_flowing.upon(_got_new, enter=S_disconnected_flowing, outputs=[refuse])
    S_disconnected_paused.upon(_got_new, enter=S_disconnected_paused, outputs=[refuse])
    S_disconnected_flowing.upon(use_connection, enter=S_connected_flowing, outputs=[attach])
    S_disconnected_flowing.upon(_first_paused, enter=S_disconnected_paused, outputs=[])
    S_disconnected_flowing.upon(stop_using_connection, enter=S_disconnected_flowing, outputs=[])
    S_disconnected_paused.upon(use_connection, enter=S_connected_paused, outputs=[attach, pause_connection])
    S_disconnected_paused.upon(_all_resumed, enter=S_disconnected_flowing, outputs=[])
    S_disconnected_paused.upon(stop_using_connection, enter=S_disconnected_paused, outputs=[])

    S_connected_flowing.upon(_got_old, enter=S_connected_flowing, outputs=[ack])
    S_connected_flowing.upon(_first_paused, enter=S_connected_paused, outputs=[pause_connection])
    S_connected_flowing.upon(stop_using_connection, enter=S_disconnected_flowing, outputs=[detach])

    S_connected_paused.upon(_got_old, enter=S_connected_paused, outputs=[ack])
    S_connected_paused.upon(_all_resumed, enter=S_connected_flowing, outputs=[resume_connection])
    S_connected_paused.upon(stop_using_connection, enter=S_disconnected_paused, outputs=[detach])
