"""The Mailbox machine: open the mailbox, add messages, close with a mood.

Mailbox server protocol, "Mailboxes": the server neither de-duplicates nor orders, and
echoes our own ``add`` back to us. We keep every outbound message until we
have seen its echo, so after a reconnection ``open`` is sent again and
everything not yet echoed is re-added (Mailbox server protocol, "Persistence").
Inbound messages from the peer are de-duplicated by phase here; the first
one tells the Nameplate to release (Mailbox server protocol, "Nameplates").

The record of phases already delivered is bounded (docs/security.md,
"Mailbox client"): every phase the peer adds is remembered
for the life of the wormhole, and a server without a per-mailbox limit (the
reference's) lets a peer add phases without end. An honest peer sends a
handful of phases for a transfer, and Dilation about two per side for each
reconnection; one phase more than ``max_processed`` closes the wormhole with
PhaseOverflow (a ProtocolError, mood ``errory``).
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook
from ._serialization import bytes_or_none, hex_or_none, offline
from .errors import PhaseOverflow, ProtocolError

# far above honest use: Dilation adds two phases per side for each new
# connection generation (reconnect or reconnecting, then connection-hints,
# Dilation protocol, "Initiating Dilation"; measured: 20 reconnections,
# 40 phases a side),
# so a session reconnecting once a minute for a month stays under it. An
# entry costs about 220 bytes (measured, with its two strings), so the
# record stays under ~22 MB
MAX_PROCESSED = 100_000


@implementer(_interfaces.IMailbox)
class Mailbox:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, side, max_processed=MAX_PROCESSED):
        self._side = side
        self._max_processed = max_processed
        self._mailbox = None
        self._pending_outbound = {}  # phase -> body, until echoed
        self._processed = set()  # (side, phase) seen from the peer
        self._mood = None

    # Client API, "Serialization": the disconnected variant is what a checkpoint keeps;
    # a restored S2A re-opens and re-adds everything not yet echoed
    _OFFLINE = {"S0B": "S0A", "S2B": "S2A", "S3B": "S3A", "S4B": "S4A"}

    @m.serializer()
    def serialize(self, state):
        return {"state": offline(state, self._OFFLINE), "mailbox": self._mailbox,
                "mood": self._mood,
                # insertion order is the order they are re-added in
                "pending": [[phase, hex_or_none(body)]
                            for phase, body in self._pending_outbound.items()],
                "processed": sorted([side, phase] for side, phase in self._processed)}

    @m.unserializer()
    def _restore(self, record):
        self._mailbox = record["mailbox"]
        self._mood = record["mood"]
        self._pending_outbound = {phase: bytes_or_none(body)
                                  for phase, body in record["pending"]}
        self._processed = {(side, phase) for side, phase in record["processed"]}
        return record["state"]

    def wire(self, nameplate, rendezvous_connector, ordering, terminator, boss):
        self._B = _interfaces.IBoss(boss)  # hears PhaseOverflow
        self._N = _interfaces.INameplate(nameplate)
        self._RC = _interfaces.IRendezvousConnector(rendezvous_connector)
        self._O = _interfaces.IOrder(ordering)
        self._T = _interfaces.ITerminator(terminator)

    # S0: mailbox unknown; S1: known, never opened (only while disconnected,
    # since learning it while connected opens it at once); S2: open;
    # S3: close sent; S4: closed.
    @m.state(initial=True, serialized="S0A")
    def S0A(self): pass  # noqa

    @m.state(serialized="S0B")
    def S0B(self): pass  # noqa

    @m.state(serialized="S1A")
    def S1A(self): pass  # noqa

    @m.state(serialized="S2A")
    def S2A(self): pass  # noqa

    @m.state(serialized="S2B")
    def S2B(self): pass  # noqa

    @m.state(serialized="S3A")
    def S3A(self): pass  # noqa

    @m.state(serialized="S3B")
    def S3B(self): pass  # noqa

    @m.state(serialized="S4A")
    def S4A(self): pass  # noqa

    @m.state(serialized="S4B")
    def S4B(self): pass  # noqa

    @m.input()
    def connected(self): pass  # noqa

    @m.input()
    def lost(self): pass  # noqa

    @m.input()
    def got_mailbox(self, mailbox): pass  # noqa

    @m.input()
    def add_message(self, phase, body): pass  # noqa

    def rx_message(self, side, phase, body):
        # validate-and-route: our echoes confirm delivery, repeats are
        # dropped, everything else is the peer's
        if side == self._side:
            self._rx_ours(phase)
        elif (side, phase) in self._processed:
            self._rx_duplicate()
        elif len(self._processed) >= self._max_processed:
            self._rx_too_many(side, phase)
        else:
            self._rx_theirs(side, phase, body)

    @m.input()
    def _rx_ours(self, phase): pass  # noqa

    @m.input()
    def _rx_theirs(self, side, phase, body): pass  # noqa

    @m.input()
    def _rx_duplicate(self): pass  # noqa

    @m.input()
    def _rx_too_many(self, side, phase): pass  # noqa

    @m.input()
    def rx_closed(self): pass  # noqa

    @m.input()
    def close(self, mood): pass  # noqa

    @m.output()
    def record_mailbox(self, mailbox):
        self._mailbox = mailbox

    @m.output()
    def record_mailbox_and_open(self, mailbox):
        self._mailbox = mailbox
        self._RC.tx_open(mailbox)

    @m.output()
    def tx_open(self):
        self._RC.tx_open(self._mailbox)

    @m.output()
    def queue(self, phase, body):
        self._pending_outbound[phase] = body

    @m.output()
    def tx_add(self, phase, body):
        self._RC.tx_add(phase, body)

    @m.output()
    def tx_add_queued(self):
        for phase, body in self._pending_outbound.items():
            self._RC.tx_add(phase, body)

    @m.output()
    def readd_before_close(self):
        # a message added just before close() whose echo we have not seen
        # (the connection dropped, or a journalled process restarted before
        # releasing it, Journalled mode, "Requirements") must still reach the
        # peer: the server keeps the mailbox until both sides close (Mailbox
        # server protocol, "Mailboxes")
        if self._pending_outbound:
            self._RC.tx_open(self._mailbox)
            for phase, body in self._pending_outbound.items():
                self._RC.tx_add(phase, body)

    @m.output()
    def dequeue(self, phase):
        self._pending_outbound.pop(phase, None)

    @m.output()
    def release_nameplate(self, side, phase, body):
        # the peer has found the mailbox: the nameplate is no longer needed
        self._N.release()

    @m.output()
    def deliver(self, side, phase, body):
        self._processed.add((side, phase))
        self._O.got_message(side, phase, body)

    @m.output()
    def report_overflow(self, side, phase):
        # the Boss closes us (mood errory): we go to S3B, which drops the rest
        self._B.error(PhaseOverflow(
            f"the peer sent more than {self._max_processed} distinct phases "
            f"(the last was {phase[:40]!r}); the limit is {self._max_processed} "
            "(docs/security.md)"))

    @m.output()
    def report_no_mailbox(self):
        # Mailbox server protocol, "Mailboxes": messages come for a mailbox
        # we opened; one before that is the server's mistake, said as such
        self._B.error(ProtocolError(
            "the server sent a message for a mailbox we have not opened"))

    @m.output()
    def record_mood(self, mood):
        self._mood = mood

    @m.output()
    def tx_close_with_mood(self, mood):
        self._RC.tx_close(self._mailbox, mood)

    @m.output()
    def tx_close(self):
        self._RC.tx_close(self._mailbox, self._mood)

    @m.output()
    def mailbox_done(self):
        self._mailbox = None
        self._T.mailbox_done()

    S0A.upon(connected, enter=S0B, outputs=[])
    S0A.upon(got_mailbox, enter=S1A, outputs=[record_mailbox])
    S0A.upon(add_message, enter=S0A, outputs=[queue])
    S0A.upon(close, enter=S4A, outputs=[mailbox_done])
    S0B.upon(lost, enter=S0A, outputs=[])
    S0B.upon(got_mailbox, enter=S2B, outputs=[record_mailbox_and_open, tx_add_queued])
    S0B.upon(add_message, enter=S0B, outputs=[queue])
    S0B.upon(close, enter=S4B, outputs=[mailbox_done])
    # the Boss closes us (mood errory): we go to S4B, which drops the rest
    S0B.upon(_rx_ours, enter=S0B, outputs=[report_no_mailbox])
    S0B.upon(_rx_theirs, enter=S0B, outputs=[report_no_mailbox])

    S1A.upon(connected, enter=S2B, outputs=[tx_open, tx_add_queued])
    S1A.upon(add_message, enter=S1A, outputs=[queue])
    S1A.upon(close, enter=S4A, outputs=[mailbox_done])

    S2A.upon(connected, enter=S2B, outputs=[tx_open, tx_add_queued])
    S2A.upon(add_message, enter=S2A, outputs=[queue])
    S2A.upon(close, enter=S3A, outputs=[record_mood])
    S2B.upon(lost, enter=S2A, outputs=[])
    S2B.upon(add_message, enter=S2B, outputs=[queue, tx_add])
    S2B.upon(_rx_ours, enter=S2B, outputs=[dequeue])
    S2B.upon(_rx_theirs, enter=S2B, outputs=[release_nameplate, deliver])
    S2B.upon(_rx_duplicate, enter=S2B, outputs=[])
    S2B.upon(_rx_too_many, enter=S2B, outputs=[report_overflow])
    S2B.upon(close, enter=S3B, outputs=[record_mood, tx_close_with_mood])

    S3A.upon(connected, enter=S3B, outputs=[readd_before_close, tx_close])
    S3A.upon(add_message, enter=S3A, outputs=[])
    S3A.upon(close, enter=S3A, outputs=[])
    S3B.upon(lost, enter=S3A, outputs=[])
    S3B.upon(add_message, enter=S3B, outputs=[])
    S3B.upon(_rx_ours, enter=S3B, outputs=[dequeue])
    S3B.upon(_rx_theirs, enter=S3B, outputs=[])
    S3B.upon(_rx_duplicate, enter=S3B, outputs=[])
    S3B.upon(_rx_too_many, enter=S3B, outputs=[])
    S3B.upon(rx_closed, enter=S4B, outputs=[mailbox_done])
    S3B.upon(close, enter=S3B, outputs=[])

    S4A.upon(connected, enter=S4B, outputs=[])
    S4A.upon(add_message, enter=S4A, outputs=[])
    S4A.upon(close, enter=S4A, outputs=[])
    S4B.upon(lost, enter=S4A, outputs=[])
    S4B.upon(add_message, enter=S4B, outputs=[])
    S4B.upon(_rx_ours, enter=S4B, outputs=[])
    S4B.upon(_rx_theirs, enter=S4B, outputs=[])
    S4B.upon(_rx_duplicate, enter=S4B, outputs=[])
    S4B.upon(_rx_too_many, enter=S4B, outputs=[])
    S4B.upon(rx_closed, enter=S4B, outputs=[])
    S4B.upon(close, enter=S4B, outputs=[])
