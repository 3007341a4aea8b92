"""The Code machine: one way of getting the code, chosen once.

Client API, "Code Management": ``allocate_code`` (server nameplate + random words),
``set_code`` (the whole code at once) or ``input_code`` (the human types
it with completion). Whichever way, the nameplate goes to the Nameplate
machine and the finished code to the Boss and the Key.
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook
from ._serialization import SerializationError
from ._status import AllocatedCode


def _nameplate_of(code):
    return code.split("-", 1)[0]


@implementer(_interfaces.ICode)
class Code:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, timing, status):
        self._timing = timing
        self._status = status

    @m.serializer()
    def serialize(self, state):
        if state in ("S2_typing_nameplate", "S3_typing_words"):
            # the input helper belongs to a human at a terminal and to this
            # process: no checkpoint can hand it to the next one
            raise SerializationError(
                "a wormhole whose code is being typed (input_code()) cannot be "
                "serialized: finish the code first, or use set_code()")
        return {"state": state}

    @m.unserializer()
    def _restore(self, record):
        return record["state"]

    def wire(self, boss, allocator, nameplate, key, input):
        self._B = _interfaces.IBoss(boss)
        self._A = _interfaces.IAllocator(allocator)
        self._N = _interfaces.INameplate(nameplate)
        self._K = _interfaces.IKey(key)
        self._I = _interfaces.IInput(input)

    @m.state(initial=True, serialized="S0_idle")
    def S0_idle(self): pass  # noqa

    @m.state(serialized="S1_allocating")
    def S1_allocating(self): pass  # noqa

    @m.state(serialized="S2_typing_nameplate")
    def S2_typing_nameplate(self): pass  # noqa

    @m.state(serialized="S3_typing_words")
    def S3_typing_words(self): pass  # noqa

    @m.state(serialized="S4_known")
    def S4_known(self): pass  # noqa

    @m.input()
    def allocate_code(self, length, wordlist): pass  # noqa

    @m.input()
    def input_code(self): pass  # noqa

    @m.input()
    def set_code(self, code): pass  # noqa

    @m.input()
    def allocated(self, nameplate, code): pass  # noqa

    @m.input()
    def got_nameplate(self, nameplate): pass  # noqa

    @m.input()
    def finished_input(self, code): pass  # noqa

    @m.output()
    def start_allocate(self, length, wordlist):
        self._A.allocate(length, wordlist)

    @m.output()
    def start_input(self):
        return self._I.start()

    @m.output()
    def nameplate_from_code(self, code):
        self._N.set_nameplate(_nameplate_of(code))

    @m.output()
    def nameplate_from_allocation(self, nameplate, code):
        self._N.set_nameplate(nameplate)

    @m.output()
    def set_nameplate(self, nameplate):
        self._N.set_nameplate(nameplate)

    @m.output()
    def code_known(self, code):
        self._status.code(AllocatedCode())
        self._B.got_code(code)
        self._K.got_code(code)

    @m.output()
    def allocated_code_known(self, nameplate, code):
        self._status.code(AllocatedCode())
        self._B.got_code(code)
        self._K.got_code(code)

    S0_idle.upon(allocate_code, enter=S1_allocating, outputs=[start_allocate])
    S0_idle.upon(input_code, enter=S2_typing_nameplate, outputs=[start_input],
                 collector=lambda outputs: list(outputs)[-1])
    S0_idle.upon(set_code, enter=S4_known, outputs=[nameplate_from_code, code_known])
    S1_allocating.upon(allocated, enter=S4_known,
                       outputs=[nameplate_from_allocation, allocated_code_known])
    S2_typing_nameplate.upon(got_nameplate, enter=S3_typing_words, outputs=[set_nameplate])
    S3_typing_words.upon(finished_input, enter=S4_known, outputs=[code_known])
