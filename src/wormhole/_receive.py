"""The Receive machine: decrypt the peer's phases, judge the mood.

Client-to-client protocol: the first message that decrypts proves someone used
our code (lonely -> happy, and we learn the verifier); any message that
does not decrypt makes the wormhole scary and closes it.

With two keys (``got_keys``: SPAKE2's and the one wormhole-william's
SPAKE2 derives, ``_key``), the peer's first message is tried with each;
the one that opens it is the key from then on, and the Key machine sends
our version under it (``key_settled``) before we say we are happy.
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook
from ._crypto import DecryptError, decrypt_data, derive_phase_key, derive_verifier
from ._serialization import bytes_or_none, hex_or_none


@implementer(_interfaces.IReceive)
class Receive:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, side, timing):
        self._side = side
        self._timing = timing
        self._key = None
        self._alternative = None  # the other key to try, until one opens a message

    @m.serializer()
    def serialize(self, state):
        return {"state": state, "key": hex_or_none(self._key),
                "alternative": hex_or_none(self._alternative)}

    @m.unserializer()
    def _restore(self, record):
        self._key = bytes_or_none(record["key"])
        self._alternative = bytes_or_none(record.get("alternative"))
        return record["state"]

    def wire(self, boss, send, key):
        self._B = _interfaces.IBoss(boss)
        self._S = _interfaces.ISend(send)
        self._K = _interfaces.IKey(key)

    @m.state(initial=True, serialized="S0_unknown_key")
    def S0_unknown_key(self): pass  # noqa

    @m.state(serialized="S1_unverified_key")
    def S1_unverified_key(self): pass  # noqa

    @m.state(serialized="S2_verified_key")
    def S2_verified_key(self): pass  # noqa

    @m.state(serialized="S3_scared")
    def S3_scared(self): pass  # noqa

    @m.input()
    def got_key(self, key): pass  # noqa

    @m.input()
    def got_keys(self, key, alternative): pass  # noqa

    def got_message(self, side, phase, body):
        # the Order machine only calls this once got_key()/got_keys() has happened
        keys = [self._key] if self._alternative is None else [self._key, self._alternative]
        for key in keys:
            try:
                plaintext = decrypt_data(derive_phase_key(key, side, phase), body)
            except DecryptError:
                continue
            if self._alternative is not None:
                self._key, self._alternative = key, None
                self._K.key_settled(key)
            self._got_message_good(phase, plaintext)
            return
        self._got_message_bad()

    @m.input()
    def _got_message_good(self, phase, plaintext): pass  # noqa

    @m.input()
    def _got_message_bad(self): pass  # noqa

    @m.output()
    def record_key(self, key):
        self._key = key

    @m.output()
    def record_keys(self, key, alternative):
        self._key, self._alternative = key, alternative

    @m.output()
    def verified(self, phase, plaintext):
        self._B.happy()
        self._B.got_verifier(derive_verifier(self._key))
        self._S.got_verified_key(self._key)

    @m.output()
    def deliver(self, phase, plaintext):
        self._B.got_message(phase, plaintext)

    @m.output()
    def scared(self):
        self._B.scared()

    S0_unknown_key.upon(got_key, enter=S1_unverified_key, outputs=[record_key])
    S0_unknown_key.upon(got_keys, enter=S1_unverified_key, outputs=[record_keys])
    S1_unverified_key.upon(_got_message_good, enter=S2_verified_key, outputs=[verified, deliver])
    S1_unverified_key.upon(_got_message_bad, enter=S3_scared, outputs=[scared])
    S2_verified_key.upon(_got_message_good, enter=S2_verified_key, outputs=[deliver])
    S2_verified_key.upon(_got_message_bad, enter=S3_scared, outputs=[scared])
    S3_scared.upon(_got_message_good, enter=S3_scared, outputs=[])
    S3_scared.upon(_got_message_bad, enter=S3_scared, outputs=[])
