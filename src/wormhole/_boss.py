"""The Boss: builds and wires every machine, and decides the mood.

Client API, "Events" to "Closing": lonely until a message from the peer decrypts, then
happy; scary if one does not decrypt; errory on a server or protocol
error. Whatever ends the wormhole goes through the Terminator, and when it
is done the facade learns the result: the mood ``"happy"``, or the error
(LonelyError, WrongPasswordError, ServerError, WelcomeError, ...).
"""

import re

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._allocator import Allocator
from ._automat_private import trace_hook
from ._code import Code
from ._crypto import decode_version
from ._dilator_hook import NullDilator
from ._input import Input
from ._key import Key
from ._lister import Lister
from ._mailbox import MAX_PROCESSED, Mailbox
from ._nameplate import Nameplate
from ._order import Order
from ._receive import Receive
from ._rendezvous import RendezvousConnector
from ._send import Send
from ._serialization import (
    SerializationError,
    decode_result,
    encode_result,
    restore_machines,
    serialize_machines,
)
from ._status import AllegedSharedKey, ConfirmedKey, StatusTracker
from ._terminator import Terminator
from ._unread import UnreadBudget, UnreadOverflow
from ._wordlist import PGPWordList
from .errors import (
    LonelyError,
    OnlyOneCodeError,
    ProtocolError,
    ServerError,
    WormholeClosedError,
    WrongPasswordError,
)
from .util import bytes_to_hexstr, hexstr_to_bytes

# Dilation is advertised in the version message (Dilation protocol,
# "Versions and can-dilate");
# the Dilation machines live in wormhole._dilation.
DILATION_VERSIONS = ["ged"]
DILATION_ABILITIES = [{"type": "direct-tcp-v1"}, {"type": "relay-v1"}]

_NUMERIC = re.compile(r"^\d+$")


def _last(outputs):
    return list(outputs)[-1]


@implementer(_interfaces.IBoss)
class Boss:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, wormhole, side, url, appid, versions, client_version, reactor,
                 eventual_queue, journal, tor, timing, dilation=False,
                 reconnect_delay=1.0, reconnect_max_delay=60.0, endpoint_factory=None,
                 entropy_f=None, on_status_update=None, dilator=None,
                 dilation_options=None, unread=None, max_phases=MAX_PROCESSED, nat=None,
                 proxy=None):
        """``dilator``: a ready IDilator (tests); by default the Boss builds
        the Dilator itself when ``dilation`` is true (``dilation_options``
        go to its constructor), else the null one. ``unread``: the
        UnreadBudget bounding the peer's messages not yet read (default:
        ``_unread.MAX_UNREAD`` messages, ``MAX_UNREAD_BYTES``); the facade
        calls ``message_taken`` as the application takes each one.
        ``max_phases``: how many distinct phases of the peer the Mailbox
        machine remembers before it ends the wormhole with PhaseOverflow."""
        self._W = _interfaces.IWormholeEvents(wormhole)
        self._side = side
        self._appid = appid
        self._timing = timing
        self._dilation = dilation
        self._next_tx_phase = 0
        self._next_rx_phase = 0
        self._rx_phases = {}  # phase number -> plaintext, for in-order delivery
        self._unread = unread if unread is not None else UnreadBudget()
        self._result = None
        extra = {}
        if dilation:
            extra = {"can-dilate": DILATION_VERSIONS,
                     "dilation-abilities": DILATION_ABILITIES}

        self._status = StatusTracker(on_status_update, eventual_queue)
        # Dilation plugs in here (wormhole._dilation._dilator); it sends its
        # dilate-N phases through send_dilate_phase like any other phase
        if dilator is None:
            dilator = NullDilator()
            if dilation:
                from ._dilation._dilator import Dilator  # only when asked for
                dilator = Dilator(reactor, eventual_queue, self.send_dilate_phase,
                                  self._status, tor=tor, nat=nat, proxy=proxy,
                                  **(dilation_options or {}))
        self._D = _interfaces.IDilator(dilator)
        self._N = Nameplate(self._status)
        self._M = Mailbox(side, max_phases)
        self._O = Order()
        self._K = Key(appid, versions, side, extra, timing, entropy_f)
        self._R = Receive(side, timing)
        self._S = Send(side, timing)
        self._RC = RendezvousConnector(url, appid, side, reactor, journal, tor, timing,
                                       client_version, self._status,
                                       initial_delay=reconnect_delay,
                                       max_delay=reconnect_max_delay,
                                       endpoint_factory=endpoint_factory, nat=nat,
                                       proxy=proxy)
        # docs/transit.md, "Through a NAT: hole punching":
        self._nat = nat  # wormhole._transit._punch.NatObserver
        self._L = Lister(timing)
        self._A = Allocator(timing)
        self._I = Input(timing, eventual_queue)
        self._C = Code(timing, self._status)
        self._T = Terminator()

        # the whole graph, in one place
        self._N.wire(self._M, self._I, self._RC, self._T)
        self._M.wire(self._N, self._RC, self._O, self._T, self)
        self._O.wire(self._K, self._R)
        self._K.wire(self, self._M, self._R, self._O)
        self._R.wire(self, self._S, self._K)
        self._S.wire(self._M)
        self._RC.wire(self, self._N, self._M, self._A, self._L, self._T)
        self._L.wire(self._RC, self._I)
        self._A.wire(self._RC, self._C)
        self._I.wire(self._C, self._L)
        self._C.wire(self, self._A, self._N, self._K, self._I)
        self._T.wire(self, self._RC, self._N, self._M)

    def _machines(self):
        return {"B": self, "N": self._N, "M": self._M, "S": self._S, "O": self._O,
                "K": self._K, "R": self._R, "RC": self._RC, "L": self._L,
                "C": self._C, "I": self._I, "A": self._A, "T": self._T}

    def _set_trace(self, client_name, which, file):
        names = {"B": "Boss", "N": "Nameplate", "M": "Mailbox", "S": "Send",
                 "O": "Order", "K": "Key", "R": "Receive", "RC": "RendezvousConnector",
                 "L": "Lister", "C": "Code", "I": "Input", "A": "Allocator",
                 "T": "Terminator"}
        machines = self._machines()
        unknown = [letter for letter in which.split() if letter not in names]
        if unknown:
            raise ValueError(f"unknown machine letters {unknown} in which=; "
                             f"choose from {' '.join(names)}")
        for letter in which.split():
            name = names[letter]

            def tracer(old_state, input, new_state, name=name):
                print(f"{client_name}.{name}[{old_state}].{input} -> [{new_state}]",
                      file=file)
                file.flush()
            machines[letter].set_trace(tracer)

    def start(self):
        self._RC.start()

    def dilate(self, **options):
        """The application's dilate() (Dilation protocol, "Initiating Dilation")."""
        return self._D.dilate(**options)

    def stop_dilation(self):
        self._D.stop()

    # -- serialization (Client API, "Serialization"; the format: docs/journal.md)
    def serialize(self):
        if self._dilation:
            raise SerializationError(
                "a wormhole created with dilation=True cannot be serialized "
                "(Client API, 'Serialization': only non-dilated wormholes can)")
        return serialize_machines(self._machines(), self._serialize_own())

    @m.serializer()
    def _serialize_own(self, state):
        return {"state": state, "side": self._side, "appid": self._appid,
                "next_tx_phase": self._next_tx_phase, "next_rx_phase": self._next_rx_phase,
                "rx_phases": {str(n): bytes_to_hexstr(p) for n, p in self._rx_phases.items()},
                "result": encode_result(self._result)}

    @m.unserializer()
    def _restore(self, record):
        self._next_tx_phase = int(record["next_tx_phase"])
        self._next_rx_phase = int(record["next_rx_phase"])
        self._rx_phases = {int(n): hexstr_to_bytes(p) for n, p in record["rx_phases"].items()}
        self._result = decode_result(record["result"])
        return record["state"]

    def restore(self, records):
        """Put every machine back as ``serialize()`` found it (no output
        fires); ``resume()`` then starts them."""
        restore_machines(self._machines(), records, self)

    def resume(self, records):
        """Reconnect, or finish stopping: the checkpoint kept only the wish."""
        want = records["rendezvous"]["want"]
        if want == "connect":
            self._RC.resume()
        elif want == "stop":
            self._RC.stop()

    # -- states -----------------------------------------------------------
    @m.state(initial=True, serialized="S0_empty")
    def S0_empty(self): pass  # noqa

    @m.state(serialized="S1_lonely")
    def S1_lonely(self): pass  # noqa

    @m.state(serialized="S2_happy")
    def S2_happy(self): pass  # noqa

    @m.state(serialized="S3_closing")
    def S3_closing(self): pass  # noqa

    @m.state(serialized="S4_closed")
    def S4_closed(self): pass  # noqa

    # -- inputs from the facade --------------------------------------------
    @m.input()
    def allocate_code(self, code_length): pass  # noqa

    @m.input()
    def input_code(self): pass  # noqa

    @m.input()
    def set_code(self, code): pass  # noqa

    def send(self, plaintext):
        phase = str(self._next_tx_phase)
        self._next_tx_phase += 1
        self._send(phase, plaintext)

    def send_dilate_phase(self, phase, plaintext):
        # Dilation numbers its own ``dilate-N`` phases (Dilation protocol,
        # "Connection Layers")
        self._send(phase, plaintext)

    @m.input()
    def _send(self, phase, plaintext): pass  # noqa

    @m.input()
    def close(self): pass  # noqa

    # -- inputs from the machines ------------------------------------------
    @m.input()
    def rx_welcome(self, welcome): pass  # noqa

    @m.input()
    def rx_unwelcome(self, err): pass  # noqa

    def rx_error(self, errmsg, orig):
        self.error(ServerError(errmsg, orig))

    @m.input()
    def error(self, err): pass  # noqa

    @m.input()
    def got_code(self, code): pass  # noqa

    @m.input()
    def got_key(self, key): pass  # noqa

    @m.input()
    def happy(self): pass  # noqa

    @m.input()
    def scared(self): pass  # noqa

    @m.input()
    def got_verifier(self, verifier): pass  # noqa

    def got_message(self, phase, plaintext):
        # Client-to-client protocol: "version", numeric application phases; other
        # phases (e.g. Dilation's) are the library's own and unknown ones
        # are ignored
        if phase == "version":
            try:
                versions = decode_version(plaintext)
            except (TypeError, ValueError) as e:
                self.error(ProtocolError(f"the peer's version message is malformed: {e}"))
                return
            self._got_version(versions)
        elif _NUMERIC.match(phase):
            number = int(phase)
            if number < self._next_rx_phase or number in self._rx_phases:
                # "01" after "1": the Mailbox tells phases apart by name,
                # we by number; a second one would wait here forever
                return
            try:
                self._unread.admit(len(plaintext))
            except UnreadOverflow as e:
                self.error(e)
                return
            self._got_phase(number, plaintext)
        elif phase.startswith("dilate-"):
            self._got_dilate(plaintext)

    def nat_mapping(self):
        """Deferred Mapping of our NAT for punching, or None (docs/transit.md,
        "Through a NAT: hole punching")."""
        if self._nat is None:
            from twisted.internet.defer import succeed
            return succeed(None)
        return self._nat.mapping()

    def message_taken(self, plaintext):
        """The application has this message (the facade says when)."""
        self._unread.taken(len(plaintext))

    @m.input()
    def _got_version(self, versions): pass  # noqa

    @m.input()
    def _got_phase(self, phase, plaintext): pass  # noqa

    @m.input()
    def _got_dilate(self, plaintext): pass  # noqa

    @m.input()
    def closed(self): pass  # noqa

    # -- outputs ------------------------------------------------------------
    @m.output()
    def do_allocate_code(self, code_length):
        self._C.allocate_code(code_length, PGPWordList())

    @m.output()
    def do_input_code(self):
        return self._C.input_code()

    @m.output()
    def do_set_code(self, code):
        self._C.set_code(code)

    @m.output()
    def raise_only_one_code(self):
        raise OnlyOneCodeError()

    @m.output()
    def raise_closed(self):
        raise WormholeClosedError(reason=self._result)

    @m.output()
    def do_send(self, phase, plaintext):
        self._S.send(phase, plaintext)

    @m.output()
    def deliver_welcome(self, welcome):
        self._W.got_welcome(welcome)

    @m.output()
    def deliver_code(self, code):
        self._W.got_code(code)

    @m.output()
    def deliver_key(self, key):
        self._status.peer_key(AllegedSharedKey())
        self._W.got_key(key)
        self._D.got_key(key)

    @m.output()
    def key_confirmed(self):
        # a message from the peer decrypted: the key is shared (Client API, "Events")
        self._status.peer_key(ConfirmedKey())

    @m.output()
    def deliver_verifier(self, verifier):
        self._timing.add("got verifier")  # a milestone for misc/dump-timing.py
        self._W.got_verifier(verifier)

    @m.output()
    def deliver_versions(self, versions):
        self._timing.add("got version")  # the end of the "version" phase
        self._D.got_wormhole_versions(versions)
        self._W.got_versions(versions.get("app_versions", {}))

    @m.output()
    def deliver_dilate(self, plaintext):
        self._D.received_dilate(plaintext)

    @m.output()
    def deliver_in_order(self, phase, plaintext):
        # Client-to-client protocol: strict numeric order, whatever the arrival order
        self._rx_phases[phase] = plaintext
        while self._next_rx_phase in self._rx_phases:
            self._W.received(self._rx_phases.pop(self._next_rx_phase))
            self._next_rx_phase += 1

    def _closing(self, result, mood):
        self._result = result
        # the code-entry helper refuses from now on, saying why (a code
        # typed later has no nameplate to claim): docs/api.md "After close"
        self._I.close(result)
        self._T.close(mood)

    @m.output()
    def close_lonely(self):
        self._closing(LonelyError(), "lonely")

    @m.output()
    def close_happy(self):
        self._closing("happy", "happy")

    @m.output()
    def close_scary(self):
        self._closing(WrongPasswordError(), "scary")

    @m.output()
    def close_error(self, err):
        self._closing(err, "errory")

    @m.output()
    def tell_closed(self):
        self._W.closed(self._result)

    # -- transitions ----------------------------------------------------------
    S0_empty.upon(allocate_code, enter=S1_lonely, outputs=[do_allocate_code])
    S0_empty.upon(input_code, enter=S1_lonely, outputs=[do_input_code], collector=_last)
    S0_empty.upon(set_code, enter=S1_lonely, outputs=[do_set_code])
    S0_empty.upon(_send, enter=S0_empty, outputs=[do_send])
    S0_empty.upon(rx_welcome, enter=S0_empty, outputs=[deliver_welcome])
    S0_empty.upon(rx_unwelcome, enter=S3_closing, outputs=[close_error])
    S0_empty.upon(error, enter=S3_closing, outputs=[close_error])
    S0_empty.upon(close, enter=S3_closing, outputs=[close_lonely])

    S1_lonely.upon(allocate_code, enter=S1_lonely, outputs=[raise_only_one_code])
    S1_lonely.upon(input_code, enter=S1_lonely, outputs=[raise_only_one_code])
    S1_lonely.upon(set_code, enter=S1_lonely, outputs=[raise_only_one_code])
    S1_lonely.upon(_send, enter=S1_lonely, outputs=[do_send])
    S1_lonely.upon(rx_welcome, enter=S1_lonely, outputs=[deliver_welcome])
    S1_lonely.upon(got_code, enter=S1_lonely, outputs=[deliver_code])
    S1_lonely.upon(got_key, enter=S1_lonely, outputs=[deliver_key])
    S1_lonely.upon(happy, enter=S2_happy, outputs=[key_confirmed])
    S1_lonely.upon(scared, enter=S3_closing, outputs=[close_scary])
    S1_lonely.upon(rx_unwelcome, enter=S3_closing, outputs=[close_error])
    S1_lonely.upon(error, enter=S3_closing, outputs=[close_error])
    S1_lonely.upon(close, enter=S3_closing, outputs=[close_lonely])

    S2_happy.upon(allocate_code, enter=S2_happy, outputs=[raise_only_one_code])
    S2_happy.upon(input_code, enter=S2_happy, outputs=[raise_only_one_code])
    S2_happy.upon(set_code, enter=S2_happy, outputs=[raise_only_one_code])
    S2_happy.upon(_send, enter=S2_happy, outputs=[do_send])
    S2_happy.upon(rx_welcome, enter=S2_happy, outputs=[deliver_welcome])
    S2_happy.upon(got_verifier, enter=S2_happy, outputs=[deliver_verifier])
    S2_happy.upon(_got_version, enter=S2_happy, outputs=[deliver_versions])
    S2_happy.upon(_got_phase, enter=S2_happy, outputs=[deliver_in_order])
    S2_happy.upon(_got_dilate, enter=S2_happy, outputs=[deliver_dilate])
    S2_happy.upon(scared, enter=S3_closing, outputs=[close_scary])
    S2_happy.upon(rx_unwelcome, enter=S3_closing, outputs=[close_error])
    S2_happy.upon(error, enter=S3_closing, outputs=[close_error])
    S2_happy.upon(close, enter=S3_closing, outputs=[close_happy])

    S3_closing.upon(allocate_code, enter=S3_closing, outputs=[raise_closed])
    S3_closing.upon(input_code, enter=S3_closing, outputs=[raise_closed])
    S3_closing.upon(set_code, enter=S3_closing, outputs=[raise_closed])
    S3_closing.upon(_send, enter=S3_closing, outputs=[])
    S3_closing.upon(rx_welcome, enter=S3_closing, outputs=[])
    S3_closing.upon(rx_unwelcome, enter=S3_closing, outputs=[])
    S3_closing.upon(got_code, enter=S3_closing, outputs=[])
    S3_closing.upon(got_key, enter=S3_closing, outputs=[])
    S3_closing.upon(happy, enter=S3_closing, outputs=[])
    S3_closing.upon(scared, enter=S3_closing, outputs=[])
    S3_closing.upon(got_verifier, enter=S3_closing, outputs=[])
    S3_closing.upon(_got_version, enter=S3_closing, outputs=[])
    S3_closing.upon(_got_phase, enter=S3_closing, outputs=[])
    S3_closing.upon(_got_dilate, enter=S3_closing, outputs=[])
    S3_closing.upon(error, enter=S3_closing, outputs=[])
    S3_closing.upon(close, enter=S3_closing, outputs=[])
    S3_closing.upon(closed, enter=S4_closed, outputs=[tell_closed])

    S4_closed.upon(allocate_code, enter=S4_closed, outputs=[raise_closed])
    S4_closed.upon(input_code, enter=S4_closed, outputs=[raise_closed])
    S4_closed.upon(set_code, enter=S4_closed, outputs=[raise_closed])
    S4_closed.upon(_send, enter=S4_closed, outputs=[])
    S4_closed.upon(rx_welcome, enter=S4_closed, outputs=[])
    S4_closed.upon(rx_unwelcome, enter=S4_closed, outputs=[])
    S4_closed.upon(got_code, enter=S4_closed, outputs=[])
    S4_closed.upon(got_key, enter=S4_closed, outputs=[])
    S4_closed.upon(happy, enter=S4_closed, outputs=[])
    S4_closed.upon(scared, enter=S4_closed, outputs=[])
    S4_closed.upon(got_verifier, enter=S4_closed, outputs=[])
    S4_closed.upon(_got_version, enter=S4_closed, outputs=[])
    S4_closed.upon(_got_phase, enter=S4_closed, outputs=[])
    S4_closed.upon(_got_dilate, enter=S4_closed, outputs=[])
    S4_closed.upon(error, enter=S4_closed, outputs=[])
    S4_closed.upon(close, enter=S4_closed, outputs=[])
