"""The Order machine: the ``pake`` phase first, everything else after the key.

The server keeps no order (spec 003 "Mailboxes"), and after a reconnection
the peer's ``version`` or an application phase can arrive before its
``pake``. Key agreement needs the ``pake`` body and our code; only once the
key exists can the other phases be decrypted, so they wait here.
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._tracing import trace_hook


@implementer(_interfaces.IOrder)
class Order:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self):
        self._queue = []

    def wire(self, key, receive):
        self._K = _interfaces.IKey(key)
        self._R = _interfaces.IReceive(receive)

    @m.state(initial=True)
    def S0_no_key(self): pass  # noqa

    @m.state()
    def S1_has_key(self): pass  # noqa

    def got_message(self, side, phase, body):
        if phase == "pake":
            self._got_pake(side, phase, body)
        else:
            self._got_non_pake(side, phase, body)

    @m.input()
    def _got_pake(self, side, phase, body): pass  # noqa

    @m.input()
    def _got_non_pake(self, side, phase, body): pass  # noqa

    @m.input()
    def got_key(self): pass  # noqa

    @m.output()
    def deliver_pake(self, side, phase, body):
        self._K.got_pake(body)

    @m.output()
    def queue(self, side, phase, body):
        self._queue.append((side, phase, body))

    @m.output()
    def deliver_queued(self):
        queued, self._queue = self._queue, []
        for side, phase, body in queued:
            self._R.got_message(side, phase, body)

    @m.output()
    def deliver(self, side, phase, body):
        self._R.got_message(side, phase, body)

    S0_no_key.upon(_got_pake, enter=S0_no_key, outputs=[deliver_pake])
    S0_no_key.upon(_got_non_pake, enter=S0_no_key, outputs=[queue])
    S0_no_key.upon(got_key, enter=S1_has_key, outputs=[deliver_queued])
    S1_has_key.upon(_got_pake, enter=S1_has_key, outputs=[])
    S1_has_key.upon(_got_non_pake, enter=S1_has_key, outputs=[deliver])
