"""The recipient of the classic protocol (File-transfer protocol,
"Recipient").

``error`` in any message ends the transfer badly (checked before any other
key of that message); ``transit`` hints go to the Transit
(File-transfer protocol, "Transit"); an ``offer`` decides the mode: a
``message`` is shown and acknowledged with ``message_ack``; a ``file`` or
a ``directory`` (``zipfile/deflated``) is handed on (``offered(kind,
offer)``) to be checked and decided (the receiving rules, a policy, maybe
a human: ``_receive.receive``), and answered with ``accept()``
(``file_ack``) or ``decline(reason)`` (``{"error": "transfer rejected"}``,
the reference's words). Other keys are ignored.

Neighbours are plain callables given at construction: ``send_message
(bytes)``, ``display(text)``, ``got_hints(list)``, ``offered(kind,
offer)``, ``finished(error_or_None)``. ``finished(None)`` means "the
mailbox part is over": the text was shown, or the file was accepted and
Transit takes it from here.
"""
from automat import MethodicalMachine
from zope.interface import implementer

from .._automat_private import trace_hook
from .._escape import excerpt
from ..errors import TransferError
from ..util import dict_to_bytes
from ._interfaces import IReceiver
from ._messages import TRANSFER_REJECTED, ZIP_MODE, hints_of, parse_message, peer_gave_up

UNKNOWN_OFFER = "unknown offer type"


@implementer(IReceiver)
class Receiver:
    """The receiving side's machine of the File-transfer protocol (docs/transfer.md):
    fed the peer's messages, it answers an offer, sends ``transit`` hints
    and reports the outcome through its callbacks."""
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, send_message, display, got_hints, offered, finished):
        self._send_message = send_message
        self._display = display
        self._got_hints = got_hints
        self._offered = offered
        self._finished = finished

    @m.state(initial=True)
    def S0_waiting(self): pass  # noqa

    @m.state()
    def S1_deciding(self): pass  # noqa

    @m.state()
    def S2_done(self): pass  # noqa

    def got_message(self, body):
        """One message from the peer (the bytes of a wormhole message)."""
        msg = parse_message(body)
        if msg is None:
            return self._got_garbage()
        # File-transfer protocol, "Recipient": error wins over every other
        # key of the same message
        if "error" in msg:
            return self._got_error(msg["error"])
        if "transit" in msg:
            self._got_transit(hints_of(msg["transit"]))
        if "offer" not in msg:
            return self._got_irrelevant()
        offer = msg["offer"]
        if not isinstance(offer, dict):
            return self._got_unknown_offer(offer)
        if isinstance(offer.get("message"), str):
            return self._got_text(offer["message"])
        if isinstance(offer.get("file"), dict):
            return self._got_file(offer["file"])
        directory = offer.get("directory")
        if isinstance(directory, dict) and directory.get("mode") == ZIP_MODE:
            return self._got_directory(directory)
        return self._got_unknown_offer(offer)

    @m.input()
    def _got_garbage(self): pass  # noqa

    @m.input()
    def _got_error(self, error): pass  # noqa

    @m.input()
    def _got_transit(self, hints): pass  # noqa

    @m.input()
    def _got_text(self, text): pass  # noqa

    @m.input()
    def _got_file(self, offer): pass  # noqa

    @m.input()
    def _got_directory(self, offer): pass  # noqa

    @m.input()
    def _got_unknown_offer(self, offer): pass  # noqa

    @m.input()
    def _got_irrelevant(self): pass  # noqa

    @m.input()
    def accept(self): pass  # noqa

    @m.input()
    def decline(self, reason): pass  # noqa

    @m.output()
    def _give_hints(self, hints):
        self._got_hints(hints)

    @m.output()
    def _show(self, text):
        self._display(text)

    @m.output()
    def _send_message_ack(self, text):
        self._send_message(dict_to_bytes({"answer": {"message_ack": "ok"}}))

    @m.output()
    def _succeed_text(self, text):
        self._finished(None)

    @m.output()
    def _offer_file(self, offer):
        self._offered("file", offer)

    @m.output()
    def _offer_directory(self, offer):
        self._offered("directory", offer)

    @m.output()
    def _send_file_ack(self):
        self._send_message(dict_to_bytes({"answer": {"file_ack": "ok"}}))

    @m.output()
    def _succeed_file(self):
        self._finished(None)

    @m.output()
    def _send_rejection(self, reason):
        self._send_message(dict_to_bytes({"error": TRANSFER_REJECTED}))

    @m.output()
    def _fail_declined(self, reason):
        self._finished(reason if isinstance(reason, Exception) else TransferError(reason))

    @m.output()
    def _fail_garbage(self):
        self._finished(TransferError("the sender sent a message that is not a JSON object "
                                     "(or nests too deeply)"))

    @m.output()
    def _fail_remote(self, error):
        self._finished(peer_gave_up("sender", error))

    @m.output()
    def _refuse_unknown(self, offer):
        self._send_message(dict_to_bytes({"error": UNKNOWN_OFFER}))
        self._finished(TransferError("the sender offered something unknown: "
                                     f"{excerpt(offer)}"))

    S0_waiting.upon(_got_garbage, enter=S2_done, outputs=[_fail_garbage])
    S0_waiting.upon(_got_error, enter=S2_done, outputs=[_fail_remote])
    S0_waiting.upon(_got_transit, enter=S0_waiting, outputs=[_give_hints])
    S0_waiting.upon(_got_text, enter=S2_done, outputs=[_show, _send_message_ack, _succeed_text])
    S0_waiting.upon(_got_file, enter=S1_deciding, outputs=[_offer_file])
    S0_waiting.upon(_got_directory, enter=S1_deciding, outputs=[_offer_directory])
    S0_waiting.upon(_got_unknown_offer, enter=S2_done, outputs=[_refuse_unknown])
    S0_waiting.upon(_got_irrelevant, enter=S0_waiting, outputs=[])
    # while the human decides, the offer stands: later messages change nothing
    S1_deciding.upon(accept, enter=S2_done, outputs=[_send_file_ack, _succeed_file])
    S1_deciding.upon(decline, enter=S2_done, outputs=[_send_rejection, _fail_declined])
    S1_deciding.upon(_got_garbage, enter=S1_deciding, outputs=[])
    S1_deciding.upon(_got_error, enter=S1_deciding, outputs=[])
    S1_deciding.upon(_got_transit, enter=S1_deciding, outputs=[_give_hints])
    S1_deciding.upon(_got_text, enter=S1_deciding, outputs=[])
    S1_deciding.upon(_got_file, enter=S1_deciding, outputs=[])
    S1_deciding.upon(_got_directory, enter=S1_deciding, outputs=[])
    S1_deciding.upon(_got_unknown_offer, enter=S1_deciding, outputs=[])
    S1_deciding.upon(_got_irrelevant, enter=S1_deciding, outputs=[])
    S2_done.upon(_got_garbage, enter=S2_done, outputs=[])
    S2_done.upon(_got_error, enter=S2_done, outputs=[])
    S2_done.upon(_got_transit, enter=S2_done, outputs=[])
    S2_done.upon(_got_text, enter=S2_done, outputs=[])
    S2_done.upon(_got_file, enter=S2_done, outputs=[])
    S2_done.upon(_got_directory, enter=S2_done, outputs=[])
    S2_done.upon(_got_unknown_offer, enter=S2_done, outputs=[])
    S2_done.upon(_got_irrelevant, enter=S2_done, outputs=[])
