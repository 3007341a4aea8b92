"""The Nameplate machine: claim the nameplate, learn the mailbox, release.

Mailbox server protocol, "Nameplates": a client claims the nameplate of its code, the
server answers with the mailbox id, and the client releases the nameplate as
soon as the peer has shown up (so short nameplates are reused quickly).
Every state has an ``A`` (disconnected) and a ``B`` (connected) variant; on
reconnection a held claim is sent again, and a pending release too.
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook
from ._serialization import offline
from ._status import ConsumedCode
from ._wordlist import PGPWordList


@implementer(_interfaces.INameplate)
class Nameplate:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, status):
        self._status = status
        self._nameplate = None

    # Client API, "Serialization": the disconnected variant is what a checkpoint keeps
    _OFFLINE = {"S0B": "S0A", "S1B": "S1A", "S2B": "S2A", "S3B": "S3A", "S3cB": "S3cA",
                "S4B": "S4A", "S5B": "S5A"}

    @m.serializer()
    def serialize(self, state):
        return {"state": offline(state, self._OFFLINE), "nameplate": self._nameplate}

    @m.unserializer()
    def _restore(self, record):
        self._nameplate = record["nameplate"]
        return record["state"]

    def wire(self, mailbox, input, rendezvous_connector, terminator):
        self._M = _interfaces.IMailbox(mailbox)
        self._I = _interfaces.IInput(input)
        self._RC = _interfaces.IRendezvousConnector(rendezvous_connector)
        self._T = _interfaces.ITerminator(terminator)

    # S0: no nameplate yet; S1: nameplate known, claim not answered;
    # S2: claimed; S3: release sent; S3c: release sent and closing;
    # S4: released; S5: closed.
    @m.state(initial=True, serialized="S0A")
    def S0A(self): pass  # noqa

    @m.state(serialized="S0B")
    def S0B(self): pass  # noqa

    @m.state(serialized="S1A")
    def S1A(self): pass  # noqa

    @m.state(serialized="S1B")
    def S1B(self): pass  # noqa

    @m.state(serialized="S2A")
    def S2A(self): pass  # noqa

    @m.state(serialized="S2B")
    def S2B(self): pass  # noqa

    @m.state(serialized="S3A")
    def S3A(self): pass  # noqa

    @m.state(serialized="S3B")
    def S3B(self): pass  # noqa

    @m.state(serialized="S3cA")
    def S3cA(self): pass  # noqa

    @m.state(serialized="S3cB")
    def S3cB(self): pass  # noqa

    @m.state(serialized="S4A")
    def S4A(self): pass  # noqa

    @m.state(serialized="S4B")
    def S4B(self): pass  # noqa

    @m.state(serialized="S5A")
    def S5A(self): pass  # noqa

    @m.state(serialized="S5B")
    def S5B(self): pass  # noqa

    @m.input()
    def connected(self): pass  # noqa

    @m.input()
    def lost(self): pass  # noqa

    @m.input()
    def set_nameplate(self, nameplate): pass  # noqa

    @m.input()
    def rx_claimed(self, mailbox): pass  # noqa

    @m.input()
    def rx_released(self): pass  # noqa

    @m.input()
    def release(self): pass  # noqa

    @m.input()
    def close(self): pass  # noqa

    @m.output()
    def record_nameplate(self, nameplate):
        self._nameplate = nameplate

    @m.output()
    def give_wordlist(self, nameplate):
        # All nameplates use the PGP word list today; a future server may
        # name one per nameplate (Mailbox server protocol, "Nameplates"),
        # which is why it comes from here.
        self._I.got_wordlist(PGPWordList())

    @m.output()
    def record_nameplate_and_tx_claim(self, nameplate):
        self._nameplate = nameplate
        self._RC.tx_claim(nameplate)

    @m.output()
    def tx_claim(self):
        self._RC.tx_claim(self._nameplate)

    @m.output()
    def tell_mailbox(self, mailbox):
        self._M.got_mailbox(mailbox)

    @m.output()
    def tx_release(self):
        self._RC.tx_release(self._nameplate)

    @m.output()
    def consumed(self):
        # the peer has used the code: nobody else can (Mailbox server
        # protocol, "Nameplates")
        self._status.code(ConsumedCode())

    @m.output()
    def nameplate_done(self):
        self._T.nameplate_done()

    S0A.upon(connected, enter=S0B, outputs=[])
    S0A.upon(set_nameplate, enter=S1A, outputs=[record_nameplate, give_wordlist])
    S0A.upon(release, enter=S0A, outputs=[])
    S0A.upon(close, enter=S5A, outputs=[nameplate_done])
    S0B.upon(lost, enter=S0A, outputs=[])
    S0B.upon(set_nameplate, enter=S1B, outputs=[record_nameplate_and_tx_claim, give_wordlist])
    S0B.upon(release, enter=S0B, outputs=[])
    S0B.upon(close, enter=S5B, outputs=[nameplate_done])

    S1A.upon(connected, enter=S1B, outputs=[tx_claim])
    S1A.upon(release, enter=S1A, outputs=[])
    S1A.upon(close, enter=S5A, outputs=[nameplate_done])
    S1B.upon(lost, enter=S1A, outputs=[])
    S1B.upon(rx_claimed, enter=S2B, outputs=[tell_mailbox])
    S1B.upon(release, enter=S1B, outputs=[])
    S1B.upon(close, enter=S3cB, outputs=[tx_release])

    S2A.upon(connected, enter=S2B, outputs=[tx_claim])
    S2A.upon(release, enter=S3A, outputs=[consumed])
    S2A.upon(close, enter=S3cA, outputs=[])
    S2B.upon(lost, enter=S2A, outputs=[])
    S2B.upon(rx_claimed, enter=S2B, outputs=[])  # answer to a re-claim
    S2B.upon(release, enter=S3B, outputs=[consumed, tx_release])
    S2B.upon(close, enter=S3cB, outputs=[tx_release])

    S3A.upon(connected, enter=S3B, outputs=[tx_release])
    S3A.upon(release, enter=S3A, outputs=[])
    S3A.upon(close, enter=S3cA, outputs=[])
    S3B.upon(lost, enter=S3A, outputs=[])
    S3B.upon(rx_claimed, enter=S3B, outputs=[])
    S3B.upon(rx_released, enter=S4B, outputs=[])
    S3B.upon(release, enter=S3B, outputs=[])
    S3B.upon(close, enter=S3cB, outputs=[])

    S3cA.upon(connected, enter=S3cB, outputs=[tx_release])
    S3cA.upon(release, enter=S3cA, outputs=[])
    S3cA.upon(close, enter=S3cA, outputs=[])
    S3cB.upon(lost, enter=S3cA, outputs=[])
    S3cB.upon(rx_claimed, enter=S3cB, outputs=[])
    S3cB.upon(rx_released, enter=S5B, outputs=[nameplate_done])
    S3cB.upon(release, enter=S3cB, outputs=[])
    S3cB.upon(close, enter=S3cB, outputs=[])

    S4A.upon(connected, enter=S4B, outputs=[])
    S4A.upon(release, enter=S4A, outputs=[])
    S4A.upon(close, enter=S5A, outputs=[nameplate_done])
    S4B.upon(lost, enter=S4A, outputs=[])
    S4B.upon(rx_released, enter=S4B, outputs=[])
    S4B.upon(release, enter=S4B, outputs=[])
    S4B.upon(close, enter=S5B, outputs=[nameplate_done])

    S5A.upon(connected, enter=S5B, outputs=[])
    S5A.upon(release, enter=S5A, outputs=[])
    S5A.upon(close, enter=S5A, outputs=[])
    S5B.upon(lost, enter=S5A, outputs=[])
    S5B.upon(rx_claimed, enter=S5B, outputs=[])
    S5B.upon(rx_released, enter=S5B, outputs=[])
    S5B.upon(release, enter=S5B, outputs=[])
    S5B.upon(close, enter=S5B, outputs=[])
