"""L4 inbound (Dilation protocol, "L4 protocol", "Flow Control").

Every OPEN/DATA/CLOSE is ACKed; one whose seqnum we have already seen (a
resend after reconnection) is ACKed again but not delivered twice. ACKs
are cumulative (Dilation protocol, "L4 protocol": an ACK for N retires
every seqnum up to N), so we send one at the end of a read batch once
``ACK_EVERY`` bytes of DATA, or any OPEN or CLOSE, arrived since the last:
ACKing every read cost the sender a wake-up, a decryption and a dispatch
per ~100 KiB (docs/performance.md, "Dilation"). Less than that is ACKed
``ACK_DELAY`` seconds after the batch that left it owed (with a clock): a
stream that goes quiet, or a peer whose window of unacknowledged data is
smaller than ``ACK_EVERY``, still gets its ACK, and a bulk stream pays for
at most one timer per ``ACK_DELAY``. A record resent after reconnection is
ACKed and dropped. The resend always starts at or before our next seqnum,
so "newer than the last delivered" is enough for exactly-once, in-order
delivery.

Flow control: while *any* subchannel is paused by its application, the L3
connection stops reading (and a new L3 starts paused).

OPENs are checked before a subchannel exists (docs/security.md,
"Dilation"): id 0 is reserved and each side allocates ids of its own
parity (Dilation protocol, "L5 subchannels": the Leader odd, the Follower
even), so an OPEN with id 0 or with our parity could collide with a
subchannel we open later; and the peer may have at most
``max_peer_subchannels`` open at once. A refused OPEN is answered with a
CLOSE, which is how the reference 0.24 turns away an OPEN it does not want
(an unexpected subprotocol): the peer's subchannel ends cleanly, ours is
never made. An OPEN for an id that is open already is only logged: a CLOSE
would end it. Each CLOSE waits in L4 outbound until the peer ACKs it, so a
peer that keeps sending refused OPENs (``max_refused_opens`` on one
connection) is not answered any more: the connection is dropped.

Data for subchannels no listener has accepted yet waits in them; once all
of it together exceeds ``max_backlog`` bytes the L3 stops reading (the
same flow control as an application's pause) until a listener takes it.
"""

from automat import MethodicalMachine
from twisted.python import log
from zope.interface import implementer

from .._automat_private import trace_hook
from . import _interfaces as I
from ._records import Close, Data, Open
from ._state_paths import StatePaths

DEFAULT_MAX_PEER_SUBCHANNELS = 1024
DEFAULT_MAX_BACKLOG = 4 * 1024 * 1024
# DATA bytes per ACK; far below what makes an Outbound pause for ACKs
# (its 16 MiB max_unacked), so a peer of ours never waits for one. Each
# ACK costs both sides a record, a send() and a wake-up: 1 MiB rather than
# 256 KiB took ~0.06 s/GiB off each side's CPU (docs/performance.md,
# "Dilation")
ACK_EVERY = 1024 * 1024
# how long fewer bytes than ACK_EVERY wait for their ACK
ACK_DELAY = 0.05
# complaints about one connection's records that reach the log: a peer
# must not be able to fill the operator's disk one bad record at a time
LOGGED_COMPLAINTS = 10


def _describe(record):
    """A record for the log, without its payload."""
    fields = [f"{name}={getattr(record, name)!r}"
              for name in ("scid", "seqnum", "resp_seqnum", "subprotocol")
              if hasattr(record, name)]
    if hasattr(record, "data"):
        fields.append(f"{len(record.data)} bytes")
    return f"{type(record).__name__}({', '.join(fields)})"


class _Backlog:
    """The pause reason of data waiting for a listener (one for all of it)."""

    def __repr__(self):
        return "<data waiting for a listener>"


@implementer(I.IInbound)
class Inbound:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, max_peer_subchannels=DEFAULT_MAX_PEER_SUBCHANNELS,
                 max_backlog=DEFAULT_MAX_BACKLOG,
                 max_refused_opens=DEFAULT_MAX_PEER_SUBCHANNELS, clock=None):
        # with a clock, fewer than ACK_EVERY bytes are ACKed ACK_DELAY later
        self._clock = clock
        self._late_ack = None  # the DelayedCall that will send them
        self._max_refused_opens = max_refused_opens
        self._refused_opens = 0    # on the current connection
        self._complaints = 0       # likewise
        self._last_seqnum = None  # nothing delivered yet
        self._max_backlog = max_backlog
        self._backlogs = {}        # subchannel -> bytes it keeps for a listener
        self._backlog_total = 0
        self._backlog_reason = _Backlog()
        self._subchannels = {}
        self._max_peer_subchannels = max_peer_subchannels
        self._peer_opened = set()  # ids of the open subchannels the peer opened
        self._peer_parity = None   # 1 or 0, from the connection's role
        self._paused = set()
        self._connection = None
        self._ack_due = None
        self._ack_owed = 0  # DATA bytes (OPEN/CLOSE: ACK_EVERY) since the last ACK
        # per-record hot path (_on_new), set from the state's row on every
        # transition (_state_paths): while connected, new records are
        # handled by _accept without an Automat transition each
        self._paths.install_initial(self, "S_disconnected_flowing")

    def wire(self, outbound, listener):
        self._outbound = I.IOutbound(outbound)
        self._listener = I.ISubchannelListener(listener)

    # -- public, validated, routed to inputs --------------------------------

    def register_subchannel(self, scid, subchannel):
        """A subchannel we opened ourselves (its DATA/CLOSE come here)."""
        self._subchannels[scid] = I.ISubChannel(subchannel)

    def subchannel_closed(self, scid):
        self._peer_opened.discard(scid)
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
        # Dilation protocol, "L4 protocol": deliver once, then acknowledge.
        # ACKs are cumulative, so one per ACK_EVERY bytes at a batch end
        # (end_of_batch)
        self._last_seqnum = record.seqnum
        if isinstance(record, Data):
            sc = self._subchannels.get(record.scid)
            if sc is None:
                # Dilation protocol, "L5 subchannels": logged and discarded
                self._complain(f"Dilation: DATA for unknown subchannel {record.scid}")
            else:
                sc.remote_data(record.data)
            self._ack_owed += len(record.data)
        elif isinstance(record, Open):
            self._open(record)
            self._ack_owed += ACK_EVERY
        elif isinstance(record, Close):
            self._ack_owed += ACK_EVERY
            sc = self._subchannels.get(record.scid)
            if sc is None:
                self._complain(f"Dilation: CLOSE for unknown subchannel {record.scid}")
            else:
                sc.remote_close()
        self._ack_due = record.seqnum

    def _open(self, record):
        scid = record.scid
        why = self._refusal(scid)
        if why is None:
            sc = self._listener.got_open(scid, record.subprotocol)
            self._subchannels[scid] = I.ISubChannel(sc)
            self._peer_opened.add(scid)
            return
        self._complain(f"Dilation: OPEN for subchannel {scid} ({record.subprotocol!r}) "
                       f"refused: {why}")
        self._refused_opens += 1
        if self._refused_opens > self._max_refused_opens:
            log.msg(f"Dilation: the peer sent {self._refused_opens} refused OPENs on this "
                    "connection; dropping it (docs/security.md)")
            self._connection.disconnect()
        elif scid not in self._subchannels:
            self._outbound.send_close(scid)

    def _complain(self, text):
        self._complaints += 1
        if self._complaints <= LOGGED_COMPLAINTS:
            log.msg(text)
        elif self._complaints == LOGGED_COMPLAINTS + 1:
            log.msg("Dilation: further complaints about this connection's records "
                    "are not logged")

    def _refusal(self, scid):
        if scid in self._subchannels:
            return "that subchannel is open already"
        if scid == 0:
            return "id 0 is reserved (Dilation protocol, \"L5 subchannels\")"
        if scid % 2 != self._peer_parity:
            return ("the id has our parity, not the peer's "
                    "(Dilation protocol, \"L5 subchannels\": "
                    "the Leader's ids are odd, the Follower's even)")
        if len(self._peer_opened) >= self._max_peer_subchannels:
            return (f"the peer has {len(self._peer_opened)} subchannels open, "
                    f"the limit (docs/security.md)")
        return None

    def end_of_batch(self):
        if self._ack_due is None:
            return
        if self._ack_owed >= ACK_EVERY:
            self._send_ack()
        elif self._late_ack is None and self._clock is not None:
            self._late_ack = self._clock.callLater(ACK_DELAY, self._ack_late)

    def _send_ack(self):
        due, self._ack_due, self._ack_owed = self._ack_due, None, 0
        self._outbound.send_ack(due)

    def _ack_late(self):
        # not cancelled when a full ACK goes first: it then finds nothing due
        self._late_ack = None
        if self._ack_due is not None:
            self._send_ack()

    def backlog_added(self, subchannel, nbytes):
        self._backlogs[subchannel] = self._backlogs.get(subchannel, 0) + nbytes
        self._backlog_total += nbytes
        if self._backlog_total > self._max_backlog:
            self.subchannel_paused(self._backlog_reason)

    def backlog_released(self, subchannel):
        self._backlog_total -= self._backlogs.pop(subchannel, 0)
        if self._backlog_total <= self._max_backlog:
            self.subchannel_resumed(self._backlog_reason)

    def backlog_bytes(self):
        """Data kept for subchannels no listener has accepted yet."""
        return self._backlog_total

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
        # the peer's ids: even if we lead, odd if we follow
        self._peer_parity = 0 if connection.is_leader else 1
        self._refused_opens = 0
        self._complaints = 0
        # tell the peer at once what we already have, so its resend on this
        # new connection skips it (an ACK for an old seqnum is harmless)
        if self._last_seqnum is not None:
            self._outbound.send_ack(self._last_seqnum)

    @m.output()
    def detach(self):
        # an ACK not sent is harmless: the peer resends, we ACK the duplicate
        self._ack_due = None
        self._ack_owed = 0
        if self._late_ack is not None:
            self._late_ack.cancel()
            self._late_ack = None
        self._connection = None

    @m.output()
    def refuse(self, record):
        self._complain(f"Dilation: {_describe(record)} with no connection ignored")

    @m.output()
    def pause_connection(self):
        self._connection.pauseProducing()

    @m.output()
    def resume_connection(self):
        self._connection.resumeProducing()

    # -- transitions -------------------------------------------------------

    _paths = StatePaths(m, {
        "S_disconnected_flowing": {"_on_new": lambda s: s._got_new},
        "S_disconnected_paused": {"_on_new": lambda s: s._got_new},
        "S_connected_flowing": {"_on_new": lambda s: s._accept},
        "S_connected_paused": {"_on_new": lambda s: s._accept},
    })

    # new records while connected go to _accept (the connected rows);
    # with no connection there is nobody to deliver them
    _paths.upon(S_disconnected_flowing, _got_new, S_disconnected_flowing, [refuse])
    _paths.upon(S_disconnected_paused, _got_new, S_disconnected_paused, [refuse])
    _paths.upon(S_disconnected_flowing, use_connection, S_connected_flowing, [attach])
    _paths.upon(S_disconnected_flowing, _first_paused, S_disconnected_paused, [])
    _paths.upon(S_disconnected_flowing, stop_using_connection, S_disconnected_flowing, [])
    _paths.upon(S_disconnected_paused, use_connection, S_connected_paused,
                [attach, pause_connection])
    _paths.upon(S_disconnected_paused, _all_resumed, S_disconnected_flowing, [])
    _paths.upon(S_disconnected_paused, stop_using_connection, S_disconnected_paused, [])

    _paths.upon(S_connected_flowing, _got_old, S_connected_flowing, [ack])
    _paths.upon(S_connected_flowing, _first_paused, S_connected_paused, [pause_connection])
    _paths.upon(S_connected_flowing, stop_using_connection, S_disconnected_flowing, [detach])

    _paths.upon(S_connected_paused, _got_old, S_connected_paused, [ack])
    _paths.upon(S_connected_paused, _all_resumed, S_connected_flowing, [resume_connection])
    _paths.upon(S_connected_paused, stop_using_connection, S_disconnected_paused, [detach])
