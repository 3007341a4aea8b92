"""The text sender of the file-transfer protocol (spec 004 9.1).

It sends ``{"offer": {"message": TEXT}}`` and waits for an ``answer``;
``{"message_ack": "ok"}`` ends the transfer, ``error`` ends it badly,
other keys are ignored. (The receiver, for text and files alike, is
``_receiver.Receiver``; files are sent by ``_filesender.FileSender``.)

The machine only decides; its neighbours are plain callables given at
construction: ``send_message(bytes)`` and ``finished(error_or_None)``.
The public ``got_message`` parses and validates, then routes to one
private input, so the machines have no ``if``s (STYLE.md, "Validate before the machine").
"""
from automat import MethodicalMachine
from zope.interface import implementer

from ..errors import TransferError
from ..util import bytes_to_dict, dict_to_bytes
from ._interfaces import ITextSender

# what each side says on the wire (the values are the peer's to display)
VERIFICATION_REJECTED = "the sender rejected the verification code; transfer abandoned"


def _parse(body):
    """Decode a peer message, or return None when it is not a JSON object."""
    try:
        return bytes_to_dict(body)
    except ValueError:
        return None


@implementer(ITextSender)
class TextSender:
    m = MethodicalMachine()
    set_trace = m._setTrace

    def __init__(self, send_message, finished):
        self._send_message = send_message
        self._finished = finished

    @m.state(initial=True)
    def S0_idle(self): pass  # noqa

    @m.state()
    def S1_offered(self): pass  # noqa

    @m.state()
    def S2_done(self): pass  # noqa

    @m.input()
    def send_offer(self, text): pass  # noqa

    @m.input()
    def reject_verification(self): pass  # noqa

    def got_message(self, body):
        msg = _parse(body)
        if msg is None:
            return self._got_garbage()
        # spec 9.1: the sender reacts to error and answer, ignores the rest
        if "error" in msg:
            return self._got_error(msg["error"])
        if "answer" in msg:
            answer = msg["answer"]
            if isinstance(answer, dict) and answer.get("message_ack") == "ok":
                return self._got_ack()
            return self._got_bad_answer(answer)
        return self._got_irrelevant()

    @m.input()
    def _got_garbage(self): pass  # noqa

    @m.input()
    def _got_error(self, error): pass  # noqa

    @m.input()
    def _got_ack(self): pass  # noqa

    @m.input()
    def _got_bad_answer(self, answer): pass  # noqa

    @m.input()
    def _got_irrelevant(self): pass  # noqa

    @m.output()
    def _send_offer(self, text):
        self._send_message(dict_to_bytes({"offer": {"message": text}}))

    @m.output()
    def _send_rejection(self):
        self._send_message(dict_to_bytes({"error": VERIFICATION_REJECTED}))

    @m.output()
    def _fail_rejected(self):
        self._finished(TransferError(VERIFICATION_REJECTED))

    @m.output()
    def _fail_garbage(self):
        self._finished(TransferError("the receiver sent a message that is not a JSON object"))

    @m.output()
    def _fail_remote(self, error):
        self._finished(TransferError(f"the receiver gave up: {error}"))

    @m.output()
    def _fail_answer(self, answer):
        self._finished(TransferError(f"the receiver did not accept the text: {answer!r}"))

    @m.output()
    def _succeed(self):
        self._finished(None)

    S0_idle.upon(send_offer, enter=S1_offered, outputs=[_send_offer])
    S0_idle.upon(reject_verification, enter=S2_done, outputs=[_send_rejection, _fail_rejected])
    S1_offered.upon(_got_garbage, enter=S2_done, outputs=[_fail_garbage])
    S1_offered.upon(_got_error, enter=S2_done, outputs=[_fail_remote])
    S1_offered.upon(_got_ack, enter=S2_done, outputs=[_succeed])
    S1_offered.upon(_got_bad_answer, enter=S2_done, outputs=[_fail_answer])
    S1_offered.upon(_got_irrelevant, enter=S1_offered, outputs=[])
    # spec 9.1: the ack (or an error) is the last message the sender reads
    S2_done.upon(_got_garbage, enter=S2_done, outputs=[])
    S2_done.upon(_got_error, enter=S2_done, outputs=[])
    S2_done.upon(_got_ack, enter=S2_done, outputs=[])
    S2_done.upon(_got_bad_answer, enter=S2_done, outputs=[])
    S2_done.upon(_got_irrelevant, enter=S2_done, outputs=[])
