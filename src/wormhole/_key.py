"""The Key machine: SPAKE2 from the code and the peer's ``pake`` body.

Client-to-client protocol: as soon as the code is known we send our ``pake``
phase; with the peer's ``pake`` we compute the shared key, then send our
encrypted ``version`` phase (which doubles as key confirmation for the
peer). The peer's ``pake`` may arrive before our code (while the human is
still typing the words), so it is kept until then.

One exception to "our version at once": wormhole-william's SPAKE2 derives
another key in about one exchange in 256 (``_gospake2``, docs/interop.md
"wormhole-william 1.0.6"). When that may be the case (a peer whose ``pake`` body
is not a Python implementation's JSON, and a K it would hash differently),
Receive gets both keys and tries them on the peer's first message, which
every implementation sends without waiting for ours; the one that opens
it is the key, and only then does our version go, under it
(``key_settled``). Python peers (the reference, ours) compute SPAKE2's
key and get our version at once, as before: two of ours never wait for
each other.
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook
from ._crypto import derive_phase_key, encode_version, encrypt_data, finish_pake, make_pake
from ._gospake2 import SPAKE2, gospake2_key
from ._serialization import bytes_or_none, hex_or_none


@implementer(_interfaces.IKey)
class Key:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, appid, versions, side, version_extra, timing, entropy_f=None):
        self._appid = appid
        self._versions = versions
        self._side = side
        self._version_extra = version_extra
        self._timing = timing
        self._entropy_f = entropy_f
        self._sp = None
        self._their_pake = None

    @m.serializer()
    def serialize(self, state):
        # our SPAKE2 half is only needed between sending our pake and
        # receiving theirs (S10); spake2 serializes its own secret scalar
        sp = self._sp.serialize().decode("ascii") if state == "S10_have_code" else None
        return {"state": state, "versions": self._versions,
                "version_extra": self._version_extra,
                "their_pake": hex_or_none(self._their_pake), "spake2": sp}

    @m.unserializer()
    def _restore(self, record):
        self._versions = record["versions"]
        self._version_extra = record["version_extra"]
        self._their_pake = bytes_or_none(record["their_pake"])
        sp = record["spake2"]
        self._sp = None if sp is None else SPAKE2.from_serialized(sp.encode("ascii"))
        return record["state"]

    def wire(self, boss, mailbox, receive, ordering):
        self._B = _interfaces.IBoss(boss)
        self._M = _interfaces.IMailbox(mailbox)
        self._R = _interfaces.IReceive(receive)
        self._O = _interfaces.IOrder(ordering)

    @m.state(initial=True, serialized="S00_nothing")
    def S00_nothing(self): pass  # noqa

    @m.state(serialized="S01_have_pake")
    def S01_have_pake(self): pass  # noqa

    @m.state(serialized="S10_have_code")
    def S10_have_code(self): pass  # noqa

    @m.state(serialized="S11_done")
    def S11_done(self): pass  # noqa

    @m.input()
    def got_code(self, code): pass  # noqa

    @m.input()
    def got_pake(self, body): pass  # noqa

    @m.input()
    def key_settled(self, key):
        """Receive opened the peer's first message with ``key``, one of
        the two it was given (``got_keys``): our version goes now."""

    @m.output()
    def stash_pake(self, body):
        self._their_pake = body

    @m.output()
    def send_pake(self, code):
        with self._timing.add("pake1", waiting="crypto"):
            self._sp, body = make_pake(code, self._appid, self._entropy_f)
        self._M.add_message("pake", body)

    @m.output()
    def compute_key_from_stash(self, code):
        self._compute_key(self._their_pake)

    @m.output()
    def compute_key(self, body):
        self._compute_key(body)

    def _compute_key(self, body):
        try:
            with self._timing.add("pake2", waiting="crypto"):
                key = finish_pake(self._sp, body)
        except ValueError:
            # a pake body that cannot finish the exchange is as bad as a
            # message that does not decrypt (Client-to-client protocol)
            self._B.scared()
            return
        alternative = None if _from_python(body) else gospake2_key(self._sp)
        if alternative is None:
            self._send_version(key)
            self._R.got_key(key)
        else:
            self._R.got_keys(key, alternative)
        self._O.got_key()

    def _send_version(self, key):
        self._B.got_key(key)
        plaintext = encode_version(self._versions, self._version_extra)
        phase_key = derive_phase_key(key, self._side, "version")
        self._M.add_message("version", encrypt_data(phase_key, plaintext))

    @m.output()
    def send_version(self, key):
        self._send_version(key)

    S00_nothing.upon(got_code, enter=S10_have_code, outputs=[send_pake])
    S00_nothing.upon(got_pake, enter=S01_have_pake, outputs=[stash_pake])
    S01_have_pake.upon(got_code, enter=S11_done, outputs=[send_pake, compute_key_from_stash])
    S01_have_pake.upon(got_pake, enter=S01_have_pake, outputs=[])
    S10_have_code.upon(got_pake, enter=S11_done, outputs=[compute_key])
    S11_done.upon(got_pake, enter=S11_done, outputs=[])
    S11_done.upon(key_settled, enter=S11_done, outputs=[send_version])


def _from_python(pake_body):
    """Is this ``pake`` body a Python implementation's (``json.dumps``
    puts a space after the colon; Go's and Rust's encoders do not)? Such a
    peer computes SPAKE2's key, as we do.

    Our own bodies must pass this test (``util.dict_to_bytes`` writes
    them): otherwise two of our clients would each wait for the other's
    first message whenever two keys are derived (docs/interop.md,
    "wormhole-william 1.0.6: one exchange in a few hundred gets two
    keys"). tests/unit/crypto/test_python_peer.py holds the two
    together."""
    return b'"pake_v1": "' in pake_body
