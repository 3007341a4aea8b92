"""The sending side of the classic protocol (File-transfer protocol,
"Sender"): one machine for texts, files and directories.

It sends its offer (a file or directory offer preceded by our ``transit``
message) and reads the recipient's messages: ``error`` ends the transfer
badly, ``answer`` with the expected ack (``message_ack`` for a text,
``file_ack`` otherwise) ends it well and is the last message read, any
other answer is a refusal, other keys are ignored. A file sender also
passes the recipient's ``transit`` hints on (File-transfer protocol,
"Transit").

The machine only decides; its neighbours are plain callables given at
construction: ``send_message(bytes)``, ``finished(error_or_None)`` and,
for files, ``got_hints(list)``. ``finished(None)`` means the offer was
accepted (for a file: Transit takes it from here). The public
``got_message`` parses and routes to one private input, so the machine has
no ``if``s (STYLE.md, "Validate before the machine").
"""
from automat import MethodicalMachine
from zope.interface import implementer

from .._automat_private import trace_hook
from ..errors import TransferError
from ..util import dict_to_bytes
from ._interfaces import IOfferSender
from ._messages import VERIFICATION_REJECTED, Declined, hints_of, parse_message, peer_gave_up


def text_sender(send_message, finished):
    """Offers ``{"message": TEXT}``; the recipient acks with ``message_ack``."""
    return OfferSender(send_message, finished, ack="message_ack", what="text")


def file_sender(send_message, got_hints, finished):
    """Offers a file or directory after our ``transit`` message; the
    recipient's hints go to ``got_hints``, its ``file_ack`` lets the bytes go."""
    return OfferSender(send_message, finished, ack="file_ack", what="file",
                       got_hints=got_hints)


@implementer(IOfferSender)
class OfferSender:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, send_message, finished, ack, what, got_hints=None):
        self._send_message = send_message
        self._finished = finished
        self._ack = ack
        self._what = what
        self._got_hints = got_hints

    @m.state(initial=True)
    def S0_idle(self): pass  # noqa

    @m.state()
    def S1_offered(self): pass  # noqa

    @m.state()
    def S2_done(self): pass  # noqa

    @m.input()
    def send_offer(self, offer, transit=None): pass  # noqa

    @m.input()
    def reject_verification(self): pass  # noqa

    def got_message(self, body):
        msg = parse_message(body)
        if msg is None:
            return self._got_garbage()
        # File-transfer protocol, "Sender": keys may come together or
        # apart; error ends it first
        if "error" in msg:
            return self._got_error(msg["error"])
        if "transit" in msg and self._got_hints is not None:
            self._got_transit(hints_of(msg["transit"]))
        if "answer" not in msg:
            return self._got_irrelevant()
        answer = msg["answer"]
        if isinstance(answer, dict) and answer.get(self._ack) == "ok":
            return self._got_ack()
        return self._got_bad_answer(answer)

    @m.input()
    def _got_garbage(self): pass  # noqa

    @m.input()
    def _got_error(self, error): pass  # noqa

    @m.input()
    def _got_transit(self, hints): pass  # noqa

    @m.input()
    def _got_ack(self): pass  # noqa

    @m.input()
    def _got_bad_answer(self, answer): pass  # noqa

    @m.input()
    def _got_irrelevant(self): pass  # noqa

    @m.output()
    def _send_offer(self, offer, transit=None):
        # File-transfer protocol, "Transit": our hints before the offer
        if transit is not None:
            self._send_message(dict_to_bytes({"transit": transit}))
        self._send_message(dict_to_bytes({"offer": offer}))

    @m.output()
    def _send_rejection(self):
        self._send_message(dict_to_bytes({"error": VERIFICATION_REJECTED}))

    @m.output()
    def _fail_rejected(self):
        self._finished(Declined(VERIFICATION_REJECTED))

    @m.output()
    def _give_hints(self, hints):
        self._got_hints(hints)

    @m.output()
    def _fail_garbage(self):
        self._finished(TransferError("the receiver sent a message that is not a JSON object"))

    @m.output()
    def _fail_remote(self, error):
        self._finished(peer_gave_up("receiver", error))

    @m.output()
    def _fail_answer(self, answer):
        self._finished(TransferError(f"the receiver did not accept the {self._what}: {answer!r}"))

    @m.output()
    def _succeed(self):
        self._finished(None)

    S0_idle.upon(send_offer, enter=S1_offered, outputs=[_send_offer])
    S0_idle.upon(reject_verification, enter=S2_done, outputs=[_send_rejection, _fail_rejected])
    S1_offered.upon(_got_garbage, enter=S2_done, outputs=[_fail_garbage])
    S1_offered.upon(_got_error, enter=S2_done, outputs=[_fail_remote])
    S1_offered.upon(_got_transit, enter=S1_offered, outputs=[_give_hints])
    S1_offered.upon(_got_ack, enter=S2_done, outputs=[_succeed])
    S1_offered.upon(_got_bad_answer, enter=S2_done, outputs=[_fail_answer])
    S1_offered.upon(_got_irrelevant, enter=S1_offered, outputs=[])
    # File-transfer protocol, "Sender": the ack (or an error) is the last
    # message the sender reads
    S2_done.upon(_got_garbage, enter=S2_done, outputs=[])
    S2_done.upon(_got_error, enter=S2_done, outputs=[])
    S2_done.upon(_got_transit, enter=S2_done, outputs=[])
    S2_done.upon(_got_ack, enter=S2_done, outputs=[])
    S2_done.upon(_got_bad_answer, enter=S2_done, outputs=[])
    S2_done.upon(_got_irrelevant, enter=S2_done, outputs=[])
