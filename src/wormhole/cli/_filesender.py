"""The sender of a file or directory (spec 004 9.1).

It sends its ``transit`` message first, then the ``offer``; then it reads
the recipient's messages: ``error`` ends the transfer badly, ``transit``
hints go to our Transit (9.3), ``answer`` with ``file_ack: ok`` means the
bytes may go (the last message read from the mailbox), any other answer is
a refusal; other keys are ignored.

Neighbours are plain callables: ``send_message(bytes)``,
``got_hints(list)``, ``finished(error_or_None)``; ``finished(None)`` means
the offer was accepted and Transit takes it from here.
"""
from automat import MethodicalMachine
from zope.interface import implementer

from ..errors import TransferError
from ..util import dict_to_bytes
from ._interfaces import IFileSender
from ._receiver import _hints_of
from ._text import VERIFICATION_REJECTED, _parse


@implementer(IFileSender)
class FileSender:
    m = MethodicalMachine()
    set_trace = m._setTrace

    def __init__(self, send_message, got_hints, finished):
        self._send_message = send_message
        self._got_hints = got_hints
        self._finished = finished

    @m.state(initial=True)
    def S0_idle(self): pass  # noqa

    @m.state()
    def S1_offered(self): pass  # noqa

    @m.state()
    def S2_done(self): pass  # noqa

    @m.input()
    def send_offer(self, transit, offer): pass  # noqa

    @m.input()
    def reject_verification(self): pass  # noqa

    def got_message(self, body):
        msg = _parse(body)
        if msg is None:
            return self._got_garbage()
        # spec 9.1: keys may come together or apart; error ends it first
        if "error" in msg:
            return self._got_error(msg["error"])
        if "transit" in msg:
            self._got_transit(_hints_of(msg["transit"]))
        if "answer" not in msg:
            return self._got_irrelevant()
        answer = msg["answer"]
        if isinstance(answer, dict) and answer.get("file_ack") == "ok":
            return self._got_file_ack()
        return self._got_bad_answer(answer)

    @m.input()
    def _got_garbage(self): pass  # noqa

    @m.input()
    def _got_error(self, error): pass  # noqa

    @m.input()
    def _got_transit(self, hints): pass  # noqa

    @m.input()
    def _got_file_ack(self): pass  # noqa

    @m.input()
    def _got_bad_answer(self, answer): pass  # noqa

    @m.input()
    def _got_irrelevant(self): pass  # noqa

    @m.output()
    def _send_transit_and_offer(self, transit, offer):
        self._send_message(dict_to_bytes({"transit": transit}))
        self._send_message(dict_to_bytes({"offer": offer}))

    @m.output()
    def _send_rejection(self):
        self._send_message(dict_to_bytes({"error": VERIFICATION_REJECTED}))

    @m.output()
    def _fail_rejected(self):
        self._finished(TransferError(VERIFICATION_REJECTED))

    @m.output()
    def _give_hints(self, hints):
        self._got_hints(hints)

    @m.output()
    def _fail_garbage(self):
        self._finished(TransferError("the receiver sent a message that is not a JSON object"))

    @m.output()
    def _fail_remote(self, error):
        self._finished(TransferError(f"the receiver gave up: {error}"))

    @m.output()
    def _fail_answer(self, answer):
        self._finished(TransferError(f"the receiver did not accept the file: {answer!r}"))

    @m.output()
    def _succeed(self):
        self._finished(None)

    S0_idle.upon(send_offer, enter=S1_offered, outputs=[_send_transit_and_offer])
    S0_idle.upon(reject_verification, enter=S2_done, outputs=[_send_rejection, _fail_rejected])
    S1_offered.upon(_got_garbage, enter=S2_done, outputs=[_fail_garbage])
    S1_offered.upon(_got_error, enter=S2_done, outputs=[_fail_remote])
    S1_offered.upon(_got_transit, enter=S1_offered, outputs=[_give_hints])
    S1_offered.upon(_got_file_ack, enter=S2_done, outputs=[_succeed])
    S1_offered.upon(_got_bad_answer, enter=S2_done, outputs=[_fail_answer])
    S1_offered.upon(_got_irrelevant, enter=S1_offered, outputs=[])
    # spec 9.1: the file_ack is the last message the sender reads
    S2_done.upon(_got_garbage, enter=S2_done, outputs=[])
    S2_done.upon(_got_error, enter=S2_done, outputs=[])
    S2_done.upon(_got_transit, enter=S2_done, outputs=[])
    S2_done.upon(_got_file_ack, enter=S2_done, outputs=[])
    S2_done.upon(_got_bad_answer, enter=S2_done, outputs=[])
    S2_done.upon(_got_irrelevant, enter=S2_done, outputs=[])
