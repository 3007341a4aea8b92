"""The Send machine: encrypt application phases once the key is verified.

Client-to-client protocol: every numeric phase is a SecretBox under the key
derived for (our side, phase). Messages sent before the peer has proven it
knows the key wait here, in order.
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook
from ._crypto import derive_phase_key, encrypt_data
from ._serialization import bytes_or_none, hex_or_none


@implementer(_interfaces.ISend)
class Send:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, side, timing):
        self._side = side
        self._timing = timing
        self._key = None
        self._queue = []

    @m.serializer()
    def serialize(self, state):
        return {"state": state, "key": hex_or_none(self._key),
                "queue": [[phase, hex_or_none(plaintext)] for phase, plaintext in self._queue]}

    @m.unserializer()
    def _restore(self, record):
        self._key = bytes_or_none(record["key"])
        self._queue = [(phase, bytes_or_none(plaintext)) for phase, plaintext in record["queue"]]
        return record["state"]

    def wire(self, mailbox):
        self._M = _interfaces.IMailbox(mailbox)

    @m.state(initial=True, serialized="S0_no_key")
    def S0_no_key(self): pass  # noqa

    @m.state(serialized="S1_verified_key")
    def S1_verified_key(self): pass  # noqa

    @m.input()
    def got_verified_key(self, key): pass  # noqa

    @m.input()
    def send(self, phase, plaintext): pass  # noqa

    @m.output()
    def queue(self, phase, plaintext):
        self._queue.append((phase, plaintext))

    @m.output()
    def record_key(self, key):
        self._key = key

    @m.output()
    def drain(self, key):
        queued, self._queue = self._queue, []
        for phase, plaintext in queued:
            self._encrypt_and_send(phase, plaintext)

    @m.output()
    def deliver(self, phase, plaintext):
        self._encrypt_and_send(phase, plaintext)

    def _encrypt_and_send(self, phase, plaintext):
        encrypted = encrypt_data(derive_phase_key(self._key, self._side, phase), plaintext)
        self._M.add_message(phase, encrypted)

    S0_no_key.upon(send, enter=S0_no_key, outputs=[queue])
    S0_no_key.upon(got_verified_key, enter=S1_verified_key, outputs=[record_key, drain])
    S1_verified_key.upon(send, enter=S1_verified_key, outputs=[deliver])
    S1_verified_key.upon(got_verified_key, enter=S1_verified_key, outputs=[])
