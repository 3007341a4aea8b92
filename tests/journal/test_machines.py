"""Every client machine survives ``serialize()`` -> JSON -> ``_restore()``
(Client API, "Serialization").

For each machine, hypothesis draws a sequence of inputs, cuts it in two,
runs the first part, writes the machine's record through JSON and
restores it into a fresh machine. The twin is the original, disconnected
(a restart loses the connection, and a checkpoint keeps only the
disconnected variant of a state, Journalled mode, "Requirements"). Both then get the second
part: the same outputs to their recording fakes (tests/client/common.py),
the same answers and the same refusals, input by input.
"""

import json
import random

from automat import NoTransition
from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole import _interfaces
from wormhole._allocator import Allocator
from wormhole._code import Code
from wormhole._crypto import decrypt_data, derive_phase_key, encrypt_data, make_pake
from wormhole._eventual import EventualQueue
from wormhole._input import Input
from wormhole._key import Key
from wormhole._lister import Lister
from wormhole._mailbox import Mailbox
from wormhole._nameplate import Nameplate
from wormhole._order import Order, OrderOverflow
from wormhole._receive import Receive
from wormhole._send import Send
from wormhole._serialization import SerializationError, restore
from wormhole._status import StatusTracker
from wormhole._terminator import Terminator
from wormhole._wordlist import PGPWordList
from wormhole.errors import ServerError, WelcomeError
from wormhole.timing import DebugTiming

from ..client.common import make_fake

SIDE = "side1"
KEYS = [bytes([1]) * 32, bytes([2]) * 32]


def _entropy(seed):
    rng = random.Random(seed)
    return lambda n: bytes(rng.getrandbits(8) for _ in range(n))


def _peer_pake(code):
    return make_pake(code, "appid", _entropy(99))[1]


PAKES = [_peer_pake("1-right-words"), _peer_pake("1-other-words"), b"not a pake"]
CODES = ["1-right-words", "1-other-words"]


def _sealed(key, side, phase, plaintext):
    return encrypt_data(derive_phase_key(key, side, phase), plaintext)


def _opened(side, phase, body):
    """The plaintext of one of our test bodies, whichever test key sealed
    it (encryption draws a fresh nonce, so the bytes of two runs differ)."""
    for key in KEYS:
        try:
            return ("sealed", key.hex()[:2], decrypt_data(derive_phase_key(key, side, phase), body))
        except Exception:  # noqa: BLE001 -- not this key
            continue
    return ("raw", body)


# -- each machine: how to build it with fakes, which inputs, how to compare

def _wire(machine, events, *pairs):
    machine.wire(*(make_fake(iface, prefix, events) for iface, prefix in pairs))
    return machine


def build_nameplate(events):
    return _wire(Nameplate(StatusTracker(None, None)), events,
                 (_interfaces.IMailbox, "m"), (_interfaces.IInput, "i"),
                 (_interfaces.IRendezvousConnector, "rc"), (_interfaces.ITerminator, "t"))


def build_mailbox(events):
    return _wire(Mailbox(SIDE, max_processed=3), events,
                 (_interfaces.INameplate, "n"), (_interfaces.IRendezvousConnector, "rc"),
                 (_interfaces.IOrder, "o"), (_interfaces.ITerminator, "t"),
                 (_interfaces.IBoss, "b"))


def build_order(events):
    return _wire(Order(max_queued=3, max_queued_bytes=40), events,
                 (_interfaces.IKey, "k"), (_interfaces.IReceive, "r"))


def build_key(events):
    return _wire(Key("appid", {"app": 1}, SIDE, {}, DebugTiming(), _entropy(7)), events,
                 (_interfaces.IBoss, "b"), (_interfaces.IMailbox, "m"),
                 (_interfaces.IReceive, "r"), (_interfaces.IOrder, "o"))


def build_receive(events):
    return _wire(Receive(SIDE, DebugTiming()), events,
                 (_interfaces.IBoss, "b"), (_interfaces.ISend, "s"), (_interfaces.IKey, "k"))


def build_send(events):
    return _wire(Send(SIDE, DebugTiming()), events, (_interfaces.IMailbox, "m"))


def build_code(events):
    return _wire(Code(DebugTiming(), StatusTracker(None, None)), events,
                 (_interfaces.IBoss, "b"), (_interfaces.IAllocator, "a"),
                 (_interfaces.INameplate, "n"), (_interfaces.IKey, "k"),
                 (_interfaces.IInput, "i"))


def build_allocator(events):
    return _wire(Allocator(DebugTiming()), events,
                 (_interfaces.IRendezvousConnector, "rc"), (_interfaces.ICode, "c"))


def build_input(events):
    return _wire(Input(DebugTiming(), EventualQueue(Clock())), events,
                 (_interfaces.ICode, "c"), (_interfaces.ILister, "l"))


def build_lister(events):
    return _wire(Lister(DebugTiming()), events,
                 (_interfaces.IRendezvousConnector, "rc"), (_interfaces.IInput, "i"))


def build_terminator(events):
    return _wire(Terminator(), events,
                 (_interfaces.IBoss, "b"), (_interfaces.IRendezvousConnector, "rc"),
                 (_interfaces.INameplate, "n"), (_interfaces.IMailbox, "m"))


class BossUnderTest:
    """The Boss with recording fakes for its neighbours (it builds its own
    machines: the test replaces the ones its outputs talk to) and its own
    record only (``serialize()`` proper adds every machine's)."""

    def __init__(self, events):
        from wormhole._boss import Boss
        from wormhole.journal import ImmediateJournal
        fake = lambda iface, prefix: make_fake(iface, prefix, events)  # noqa: E731
        self.boss = Boss(fake(_interfaces.IWormholeEvents, "w"), SIDE, "ws://127.0.0.1:1/v1",
                         "appid", {}, ("python", "0"), Clock(), EventualQueue(Clock()),
                         ImmediateJournal(), None, DebugTiming(),
                         dilator=fake(_interfaces.IDilator, "d"))
        self.boss._C = fake(_interfaces.ICode, "c")
        self.boss._S = fake(_interfaces.ISend, "s")
        self.boss._T = fake(_interfaces.ITerminator, "t")

    def serialize(self):
        return self.boss._serialize_own()

    def _restore(self, record):
        self.boss._restore(record)

    def __getattr__(self, name):
        return getattr(self.boss, name)


def build_boss(events):
    return BossUnderTest(events)


def _step(name, *args):
    return st.tuples(st.just(name), st.tuples(*args))


NAMEPLATE_INPUTS = [
    _step("connected"), _step("lost"), _step("set_nameplate", st.sampled_from(["1", "2"])),
    _step("rx_claimed", st.sampled_from(["mb1", "mb2"])), _step("rx_released"),
    _step("release"), _step("close")]

_phases = st.sampled_from(["pake", "version", "0", "1"])
_bodies = st.binary(max_size=8)
MAILBOX_INPUTS = [
    _step("connected"), _step("lost"), _step("got_mailbox", st.sampled_from(["mb1", "mb2"])),
    _step("add_message", _phases, _bodies),
    _step("rx_message", st.sampled_from([SIDE, "peer"]), _phases, _bodies),
    _step("rx_closed"), _step("close", st.sampled_from(["happy", "lonely", "errory"]))]

ORDER_INPUTS = [
    _step("got_message", st.just("peer"), _phases, st.binary(max_size=20)),
    _step("got_key")]

KEY_INPUTS = [_step("got_code", st.sampled_from(CODES)),
              _step("got_pake", st.sampled_from(PAKES))]

_receive_body = st.builds(
    lambda key, phase, text, garbage: garbage if garbage else _sealed(key, "peer", phase, text),
    st.sampled_from(KEYS), _phases, st.binary(max_size=8), st.sampled_from([None, b"x" * 40]))
RECEIVE_INPUTS = [
    _step("got_key", st.sampled_from(KEYS)),
    # the peer's phase and the phase its body was sealed for may differ:
    # that is a body that does not decrypt
    _step("got_message", st.just("peer"), _phases, _receive_body)]

SEND_INPUTS = [_step("got_verified_key", st.sampled_from(KEYS)),
               _step("send", st.sampled_from(["0", "1", "2"]), st.binary(max_size=8))]

CODE_INPUTS = [
    _step("allocate_code", st.just(2), st.just(PGPWordList())), _step("input_code"),
    _step("set_code", st.sampled_from(CODES)),
    _step("allocated", st.just("3"), st.just("3-a-b")),
    _step("got_nameplate", st.just("4")), _step("finished_input", st.just("4-c-d"))]

ALLOCATOR_INPUTS = [_step("connected"), _step("lost"),
                    _step("allocate", st.sampled_from([1, 2]), st.just(PGPWordList())),
                    _step("rx_allocated", st.sampled_from(["5", "6"]))]

INPUT_INPUTS = [
    _step("start"), _step("got_nameplates", st.lists(st.sampled_from(["1", "12", "2"]))),
    _step("got_wordlist", st.just(PGPWordList())), _step("refresh_nameplates"),
    _step("get_nameplate_completions", st.sampled_from(["", "1"])),
    _step("choose_nameplate", st.sampled_from(["1", "12"])),
    _step("get_word_completions", st.sampled_from(["", "ab", "zu"])),
    _step("choose_words", st.sampled_from(["absurd-baboon", "x"]))]

LISTER_INPUTS = [_step("connected"), _step("lost"), _step("refresh"),
                 _step("rx_nameplates", st.lists(st.sampled_from(["1", "2"])))]

BOSS_INPUTS = [
    _step("allocate_code", st.just(2)), _step("input_code"),
    _step("set_code", st.sampled_from(CODES)), _step("send", st.binary(max_size=4)),
    _step("close"), _step("rx_welcome", st.just({"motd": "hi"})),
    _step("rx_unwelcome", st.just(WelcomeError("go away"))),
    _step("error", st.just(ServerError("crowded", {"type": "claim"}))),
    _step("got_code", st.sampled_from(CODES)), _step("got_key", st.sampled_from(KEYS)),
    _step("happy"), _step("scared"), _step("got_verifier", st.just(b"v" * 32)),
    _step("got_message", st.sampled_from(["version", "0", "1", "2", "dilate-0", "other"]),
          st.sampled_from([b'{"app_versions": {"x": 1}}', b"not json", b"m"])),
    _step("closed")]

TERMINATOR_INPUTS = [_step("close", st.sampled_from(["happy", "lonely"])),
                     _step("nameplate_done"), _step("mailbox_done"), _step("stopped"),
                     _step("connection_failed")]


def _normal(value):
    """What two runs must agree on: plain values as they are, objects
    (a helper, a word list) by their kind."""
    if value is None or isinstance(value, (str, bytes, int, bool, float)):
        return value
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (tuple, list)):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, Exception):  # rebuilt from a record: same kind, same text
        return [type(value).__name__, str(value)]
    return type(value).__name__


def _normal_events(events):
    out = []
    session_key = None  # the Key machine's, once it tells the Boss
    for event in events:
        name, args = event[0], list(event[1:])
        if name == "b.got_key":
            session_key = args[0]
        if name == "m.add_message" and args[0] == "version":
            args[1] = decrypt_data(derive_phase_key(session_key, SIDE, "version"), args[1])
        elif name == "m.add_message" and args[0] != "pake":
            # sealed with a random nonce: compare what it says
            args[1] = _opened(SIDE, args[0], args[1])
        elif name == "c.allocated":
            # random words: compare how many
            nameplate, code = args
            args = [nameplate, code.count("-")]
        out.append((name, _normal(args)))
    return out


def _apply(machine, step):
    name, args = step
    try:
        return ("ok", _normal(getattr(machine, name)(*args)))
    except NoTransition:
        return ("no transition",)
    except (OrderOverflow, SerializationError, ValueError) as e:
        return ("raised", type(e).__name__, str(e))
    except Exception as e:  # noqa: BLE001 -- errors the machines raise on purpose
        return ("raised", type(e).__name__)


def _json(value):
    return json.loads(json.dumps(value))


class RoundTrip:
    """Mixed into a TestCase with ``build`` and ``inputs``."""

    build = None
    inputs = ()
    routes = ([],)
    connects = False  # has connected()/lost()

    def _check_round_trip(self, prefix, suffix):
        events_a = []
        a = type(self).build(events_a)
        connected = False
        for step in prefix:
            result = _apply(a, step)
            if result[0] == "ok" and step[0] in ("connected", "lost"):
                connected = step[0] == "connected"
        try:
            record = _json(a.serialize())
        except SerializationError as e:
            # only while the human types the code (Code machine)
            self.assertIn("input_code()", str(e))
            self.seen.add(("typing", False))
            return
        self.seen.add((record.get("state"), connected))
        if connected:
            a.lost()
        events_b = []
        b = type(self).build(events_b)
        restore("machine", b, record)
        self.assertEqual(_json(b.serialize()), _json(a.serialize()))
        del events_a[:]
        for step in suffix:
            self.assertEqual(_apply(b, step), _apply(a, step), step)
        self.assertEqual(_normal_events(events_b), _normal_events(events_a))
        self.assertEqual(_apply(b, ("serialize", ())), _apply(a, ("serialize", ())))

    def test_round_trip(self):
        """In every state (connected and not), the restored machine and
        its disconnected twin answer the same inputs alike."""
        steps = st.lists(st.one_of(*self.inputs), max_size=10)
        # a route to each state, then random steps from there
        # each route to a state, also with the connection lost (or made)
        # at its end, for the machines that have connections
        routes = list(self.routes)
        if self.connects:
            for r in self.routes:
                routes.append(list(r) + [("lost" if ("connected", ()) in r else "connected", ())])
        self.seen = set()
        for route in routes:  # every state at least once, whatever hypothesis draws
            self._check_round_trip(route, [])
        prefixes = st.builds(lambda route, more: list(route) + more,
                             st.sampled_from(routes), steps)

        @settings(max_examples=200, deadline=None, database=None)
        @given(prefixes, steps)
        def check(prefix, suffix):
            self._check_round_trip(prefix, suffix)
        check()
        # (state written, connected when written): every one was tried
        self.assertEqual(self.seen, self.states)

    def test_unknown_state_refused(self):
        """A record naming a state the machine does not have is refused
        with the machine's name."""
        m = type(self).build([])
        record = _json(m.serialize())
        record["state" if "state" in record else "want"] = "S99_nonsense"
        with self.assertRaises(SerializationError) as cm:
            restore("this machine", m, record)
        self.assertIn("this machine", str(cm.exception))


class NameplateRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_nameplate)
    inputs = NAMEPLATE_INPUTS
    connects = True
    routes = (
        [],
        [("connected", ()),
         ("set_nameplate", ("1",))],
        [("connected", ()),
         ("set_nameplate", ("1",)),
         ("rx_claimed", ("mb1",))],
        [("connected", ()),
         ("set_nameplate", ("1",)),
         ("rx_claimed", ("mb1",)),
         ("release", ())],
        [("connected", ()),
         ("set_nameplate", ("1",)),
         ("rx_claimed", ("mb1",)),
         ("release", ()),
         ("rx_released", ())],
        [("connected", ()),
         ("set_nameplate", ("1",)),
         ("rx_claimed", ("mb1",)),
         ("close", ())],
        [("connected", ()),
         ("set_nameplate", ("1",)),
         ("rx_claimed", ("mb1",)),
         ("close", ()),
         ("rx_released", ())],
    )
    states = {("S0A", False),
              ("S0A", True),
              ("S1A", False),
              ("S1A", True),
              ("S2A", False),
              ("S2A", True),
              ("S3A", False),
              ("S3A", True),
              ("S3cA", False),
              ("S3cA", True),
              ("S4A", False),
              ("S4A", True),
              ("S5A", False),
              ("S5A", True)}


class MailboxRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_mailbox)
    inputs = MAILBOX_INPUTS
    connects = True
    routes = (
        [],
        [("got_mailbox", ("mb1",))],
        [("connected", ()),
         ("got_mailbox", ("mb1",))],
        [("connected", ()),
         ("got_mailbox", ("mb1",)),
         ("add_message", ("0", b"x")),
         ("close", ("happy",))],
        [("connected", ()),
         ("got_mailbox", ("mb1",)),
         ("close", ("happy",)),
         ("rx_closed", ())],
    )
    states = {("S0A", False),
              ("S0A", True),
              ("S1A", False),
              ("S2A", False),
              ("S2A", True),
              ("S3A", False),
              ("S3A", True),
              ("S4A", False),
              ("S4A", True)}


class OrderRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_order)
    inputs = ORDER_INPUTS
    routes = (
        [],
        [("got_key", ())],
    )
    states = {("S0_no_key", False), ("S1_has_key", False)}


class KeyRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_key)
    inputs = KEY_INPUTS
    routes = (
        [],
        [("got_pake", (PAKES[0],))],
        [("got_code", (CODES[0],))],
        [("got_code", (CODES[0],)),
         ("got_pake", (PAKES[0],))],
    )
    states = {("S00_nothing", False),
              ("S01_have_pake", False),
              ("S10_have_code", False),
              ("S11_done", False)}


class ReceiveRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_receive)
    inputs = RECEIVE_INPUTS
    routes = (
        [],
        [("got_key", (KEYS[0],))],
        [("got_key", (KEYS[0],)),
         ("got_message", ("peer", "0", _sealed(KEYS[0], "peer", "0", b"m")))],
        [("got_key", (KEYS[0],)),
         ("got_message", ("peer", "0", b"x" * 40))],
    )
    states = {("S0_unknown_key", False),
              ("S1_unverified_key", False),
              ("S2_verified_key", False),
              ("S3_scared", False)}


class SendRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_send)
    inputs = SEND_INPUTS
    routes = (
        [],
        [("got_verified_key", (KEYS[0],))],
    )
    states = {("S0_no_key", False), ("S1_verified_key", False)}


class CodeRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_code)
    inputs = CODE_INPUTS
    routes = (
        [],
        [("allocate_code", (2, PGPWordList()))],
        [("input_code", ())],
        [("input_code", ()),
         ("got_nameplate", ("4",))],
        [("set_code", (CODES[0],))],
    )
    states = {("S0_idle", False),
              ("S1_allocating", False),
              ("typing", False),
              ("S4_known", False)}

    def test_typing_refused(self):
        """A code being typed cannot be serialized: the error says why."""
        c = build_code([])
        c.input_code()
        with self.assertRaises(SerializationError) as cm:
            c.serialize()
        self.assertIn("set_code()", str(cm.exception))


class AllocatorRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_allocator)
    inputs = ALLOCATOR_INPUTS
    connects = True
    routes = (
        [],
        [("allocate", (2, PGPWordList()))],
        [("connected", ()),
         ("allocate", (2, PGPWordList())),
         ("rx_allocated", ("5",))],
    )
    states = {("S0A_idle", False),
              ("S0A_idle", True),
              ("S1A_allocating", False),
              ("S1A_allocating", True),
              ("S2_done", False),
              ("S2_done", True)}


class InputRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_input)
    inputs = INPUT_INPUTS
    routes = (
        [],
        [("start", ())],
        [("start", ()),
         ("choose_nameplate", ("1",))],
        [("start", ()),
         ("choose_nameplate", ("1",)),
         ("got_wordlist", (PGPWordList(),))],
        [("start", ()),
         ("choose_nameplate", ("1",)),
         ("choose_words", ("a-b",))],
    )
    states = {("S0_idle", False),
              ("S1_typing_nameplate", False),
              ("S2_typing_code_no_wordlist", False),
              ("S3_typing_code_yes_wordlist", False),
              ("S4_done", False)}


class ListerRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_lister)
    inputs = LISTER_INPUTS
    connects = True
    routes = (
        [],
        [("refresh", ())],
    )
    states = {("S0A_idle_disconnected", False),
              ("S0A_idle_disconnected", True),
              ("S1A_wanting_disconnected", False),
              ("S1A_wanting_disconnected", True)}


class TerminatorRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_terminator)
    inputs = TERMINATOR_INPUTS
    routes = (
        [],
        [("close", ("happy",))],
        [("close", ("happy",)),
         ("nameplate_done", ())],
        [("close", ("happy",)),
         ("mailbox_done", ())],
        [("close", ("happy",)),
         ("mailbox_done", ()),
         ("nameplate_done", ())],
        [("close", ("happy",)),
         ("mailbox_done", ()),
         ("nameplate_done", ()),
         ("stopped", ())],
        [("connection_failed", ())],
    )
    states = {("S_open", False),
              ("S_closing_nameplate_and_mailbox", False),
              ("S_closing_nameplate", False),
              ("S_closing_mailbox", False),
              ("S_stopping", False),
              ("S_stopped", False),
              ("S_open_without_server", False)}


class BossRoundTrip(RoundTrip, unittest.TestCase):
    build = staticmethod(build_boss)
    inputs = BOSS_INPUTS
    routes = (
        [],
        [("set_code", (CODES[0],))],
        [("set_code", (CODES[0],)), ("happy", ()), ("got_message", ("1", b"one"))],
        [("set_code", (CODES[0],)), ("happy", ()), ("close", ())],
        [("set_code", (CODES[0],)), ("error", (ServerError("e", None),))],
        [("set_code", (CODES[0],)), ("close", ()), ("closed", ())],
    )
    states = {("S0_empty", False), ("S1_lonely", False), ("S2_happy", False),
              ("S3_closing", False), ("S4_closed", False)}


class RendezvousIntent(unittest.TestCase):
    """The connector writes only what it wants (Journalled mode, "Requirements": "I want a
    connection", never "I am connected")."""

    def build(self):
        from twisted.internet.error import ConnectionRefusedError

        from ..client.common import recorded_connector
        from ..client.fakes import FakeNetwork
        self.net = FakeNetwork()
        self.refused = ConnectionRefusedError
        return recorded_connector("ws://127.0.0.1:1/v1", Clock(), self.net,
                                  StatusTracker(None, None), [])

    def test_wants(self):
        """Idle, connecting, bound and waiting to retry all want a
        connection; once stopped, it wants nothing."""
        rc = self.build()
        wants = [rc.serialize()["want"]]
        rc.start()
        wants.append(rc.serialize()["want"])
        ws = self.net.accept(rc, welcome={})
        wants.append(rc.serialize()["want"])
        ws.transport.loseConnection()
        wants.append(rc.serialize()["want"])  # waiting to reconnect
        rc._timer_expired()
        self.net.accept(rc, welcome={})
        rc.stop()  # (the fake connection closes at once)
        self.assertEqual(wants, ["connect"] * 4)
        self.assertEqual(rc.serialize(), {"want": "stopped"})

    def test_first_connection_failed(self):
        """A first connection that failed is remembered as failed."""
        from twisted.python.failure import Failure
        rc = self.build()
        rc.start()
        self.net.attempts.pop(0).errback(Failure(self.refused()))
        self.assertEqual(rc.serialize(), {"want": "failed"})

    def test_restored(self):
        """Restored, each wish leaves the connector where resume() or
        stop() can act on it, and an unknown one is refused."""
        for want in ("connect", "stop", "stopped", "failed"):
            rc = self.build()
            restore("rendezvous", rc, {"want": want})
            self.assertEqual(rc.serialize(), {"want": "connect" if want == "stop" else want})
        rc = self.build()
        restore("rendezvous", rc, {"want": "connect"})
        rc.resume()
        self.assertEqual(len(self.net.attempts), 1)
        self.assertRaises(SerializationError, restore, "rendezvous", self.build(),
                          {"want": "dance"})


class KeyMidExchange(unittest.TestCase):
    def test_spake2_half_survives(self):
        """Our pake sent, theirs not yet here: the restored Key finishes
        the exchange with the same key as the peer (spake2's own
        serialization of our secret)."""
        events = []
        k = build_key(events)
        k.got_code(CODES[0])
        record = _json(k.serialize())
        self.assertEqual(record["state"], "S10_have_code")
        ours = events[0][2]
        events2 = []
        k2 = build_key(events2)
        restore("key", k2, record)
        peer, peer_body = make_pake(CODES[0], "appid")
        k2.got_pake(peer_body)
        from wormhole._crypto import finish_pake
        expected = finish_pake(peer, ours)
        self.assertEqual([e for e in events2 if e[0] == "b.got_key"], [("b.got_key", expected)])
