"""The text part of the file-transfer protocol (spec 004 chapter 9).

Sender (9.1): sends ``{"offer": {"message": TEXT}}`` and waits for an
``answer``; ``{"message_ack": "ok"}`` ends the transfer, ``error`` ends it
badly, other keys are ignored. Receiver (9.2): ``error`` ends it badly
(checked before any other key), an ``offer`` of a ``message`` is shown and
acknowledged, other keys are ignored.

Both machines only decide; their neighbours are plain callables given at
construction: ``send_message(bytes)``, ``display(text)`` and
``finished(error_or_None)``. The public ``got_message`` parses and
validates, then routes to one private input, so the machines have no
``if``s (STYLE.md, "Validate before the machine").
"""
from automat import MethodicalMachine
from zope.interface import implementer

from ..errors import TransferError
from ..util import bytes_to_dict, dict_to_bytes
from ._interfaces import ITextReceiver, ITextSender

# what each side says on the wire (the values are the peer's to display)
UNKNOWN_OFFER = "unknown offer type"
FILES_NOT_SUPPORTED = "this receiver accepts only text messages for now"
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


@implementer(ITextReceiver)
class TextReceiver:
    m = MethodicalMachine()
    set_trace = m._setTrace

    def __init__(self, send_message, display, finished):
        self._send_message = send_message
        self._display = display
        self._finished = finished

    @m.state(initial=True)
    def S0_waiting(self): pass  # noqa

    @m.state()
    def S1_done(self): pass  # noqa

    def got_message(self, body):
        msg = _parse(body)
        if msg is None:
            return self._got_garbage()
        # spec 9.2: error wins over every other key of the same message
        if "error" in msg:
            return self._got_error(msg["error"])
        if "offer" not in msg:
            # "transit" only matters for files (spec 9.3): ignored here
            return self._got_irrelevant()
        offer = msg["offer"]
        if isinstance(offer, dict) and isinstance(offer.get("message"), str):
            return self._got_text(offer["message"])
        if isinstance(offer, dict) and ("file" in offer or "directory" in offer):
            return self._got_file_offer(offer)
        return self._got_unknown_offer(offer)

    @m.input()
    def _got_garbage(self): pass  # noqa

    @m.input()
    def _got_error(self, error): pass  # noqa

    @m.input()
    def _got_text(self, text): pass  # noqa

    @m.input()
    def _got_file_offer(self, offer): pass  # noqa

    @m.input()
    def _got_unknown_offer(self, offer): pass  # noqa

    @m.input()
    def _got_irrelevant(self): pass  # noqa

    @m.output()
    def _show(self, text):
        self._display(text)

    @m.output()
    def _send_ack(self, text):
        self._send_message(dict_to_bytes({"answer": {"message_ack": "ok"}}))

    @m.output()
    def _succeed(self, text):
        self._finished(None)

    @m.output()
    def _fail_garbage(self):
        self._finished(TransferError("the sender sent a message that is not a JSON object"))

    @m.output()
    def _fail_remote(self, error):
        self._finished(TransferError(f"the sender gave up: {error}"))

    @m.output()
    def _refuse_files(self, offer):
        self._send_message(dict_to_bytes({"error": FILES_NOT_SUPPORTED}))
        self._finished(TransferError(
            "the sender offered a file or directory: receiving files is not supported yet"))

    @m.output()
    def _refuse_unknown(self, offer):
        self._send_message(dict_to_bytes({"error": UNKNOWN_OFFER}))
        self._finished(TransferError(f"the sender offered something unknown: {offer!r}"))

    S0_waiting.upon(_got_garbage, enter=S1_done, outputs=[_fail_garbage])
    S0_waiting.upon(_got_error, enter=S1_done, outputs=[_fail_remote])
    S0_waiting.upon(_got_text, enter=S1_done, outputs=[_show, _send_ack, _succeed])
    S0_waiting.upon(_got_file_offer, enter=S1_done, outputs=[_refuse_files])
    S0_waiting.upon(_got_unknown_offer, enter=S1_done, outputs=[_refuse_unknown])
    S0_waiting.upon(_got_irrelevant, enter=S0_waiting, outputs=[])
    S1_done.upon(_got_garbage, enter=S1_done, outputs=[])
    S1_done.upon(_got_error, enter=S1_done, outputs=[])
    S1_done.upon(_got_text, enter=S1_done, outputs=[])
    S1_done.upon(_got_file_offer, enter=S1_done, outputs=[])
    S1_done.upon(_got_unknown_offer, enter=S1_done, outputs=[])
    S1_done.upon(_got_irrelevant, enter=S1_done, outputs=[])
