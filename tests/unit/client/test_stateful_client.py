"""A stateful search over the whole client (docs/testing.md, "Searching
the machines"): the Boss and every machine it wires, built by
``wormhole.create()`` against an in-memory Mailbox server
(tests/client/fakes.py) on a ``task.Clock``, in Deferred mode and in
Delegated mode side by side.

hypothesis draws any interleaving of the application's calls
(allocate / set / input a code with its helper, send, every ``get_*``,
``derive_key``, ``dilate``, ``serialize``, ``close``) and of what the
world does (the server refusing connections, every connection lost, a
server ``error`` message, a welcome error, the peer's code right or wrong,
the peer's messages, ours and garbage ones delivered again in any order
and after close, time passing). Both modes live in a world of their own
and get the same steps.

Invariants, after every step: no ``NoTransition`` (nor an AttributeError
or AssertionError from inside a machine) reaches the application, as an
exception or as the error a wormhole closes with; an API call either
works or is refused with a documented error, the same in both modes;
nothing is logged as an unhandled error. At the end (the server back up,
``close()``, time passing): both wormholes closed, every Deferred the
API handed out fired, and the Delegated mode's events are the Deferred
mode's: the same code, key, verifier and versions events, the same
messages in the same order (Deferred mode may miss the last ones, those
not yet handed out when the wormhole closed), the same close result.

A failing run prints its steps and a ``@reproduce_failure`` blob
(``print_blob``); WORMHOLE_SEARCH=long searches longer
(tests/unit/_machine_search.py).
"""

import io
import traceback

from automat import NoTransition
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.trial import unittest

import wormhole
from wormhole import errors

from ...client.fakes import FakeServer
from .._machine_search import LogWatch, search_settings

APPID = "example.com/stateful"
URL = "ws://127.0.0.1:1/v1"
CODE = "7-purple-sausages"
WRONG = "7-purple-sofa"
# what a machine's own bug looks like once it is wrapped in a readable
# error (the RendezvousConnector turns a handler's exception into a
# ProtocolError naming it)
MACHINE_BUGS = ("NoTransition", "AttributeError", "AssertionError")
# the refusals the API documents (docs/api.md); ValueError and TypeError
# for bad arguments
REFUSALS = (errors.WormholeError, ValueError, TypeError)
ONE_SHOT = ("welcome", "code", "key", "verifier", "versions")


def _shown(value):
    """An event's value as both modes can be compared by: a failure or
    error by its class, bytes and strings as they are."""
    if isinstance(value, Failure):
        value = value.value
    if isinstance(value, Exception):
        return type(value).__name__
    return value


class _Recorder:
    """The delegate: every event, in order."""

    def __init__(self, events, errors):
        self._events = events
        self._errors = errors

    def wormhole_got_welcome(self, welcome):
        self._events.append(("welcome", None))

    def wormhole_got_code(self, code):
        self._events.append(("code", code))

    def wormhole_got_unverified_key(self, key):
        self._events.append(("key", None))

    def wormhole_got_verifier(self, verifier):
        self._events.append(("verifier", None))

    def wormhole_got_versions(self, versions):
        self._events.append(("versions", versions))

    def wormhole_got_message(self, message):
        self._events.append(("message", message))

    def wormhole_closed(self, result):
        self._events.append(("closed", _shown(result)))
        if isinstance(result, Exception):
            self._errors.append(result)


class World:
    """One mode's client, its peer (a Deferred-mode wormhole) and their
    server, on a clock of their own."""

    def __init__(self, delegated):
        self.delegated = delegated
        self.clock = Clock()
        self.server = FakeServer(self.clock)
        self.events = []
        self.handed = []  # every Deferred the client's API handed out
        self.helper = None
        self.code = None  # the code as the peer would learn it
        self.peer_has_code = False
        self.closed = None  # Deferred mode: close()'s Deferred
        self.closed_with = []  # Deferred mode: what it fired with
        self.close_errors = []  # the errors it closed with, whole
        kwargs = dict(stderr=io.StringIO(), versions={"mode": "any"},
                      _endpoint_factory=self.server.endpoint_factory)
        if delegated:
            delegate = _Recorder(self.events, self.close_errors)
            self.w = wormhole.create(APPID, URL, self.clock, delegate=delegate, **kwargs)
        else:
            self.w = wormhole.create(APPID, URL, self.clock, **kwargs)
            for kind in ONE_SHOT:
                getter = "get_unverified_key" if kind == "key" else f"get_{kind}"
                self._watch(kind, getattr(self.w, getter)())
            self._next_message()
        self.peer = wormhole.create(APPID, URL, self.clock, stderr=io.StringIO(),
                                    _endpoint_factory=self.server.endpoint_factory)

    # -- Deferred mode: events as the Deferreds fire --------------------------
    def _watch(self, kind, d):
        self.handed.append(d)

        def fired(value):
            shown = None if kind in ("welcome", "key", "verifier") else value
            self.events.append((kind, shown))
            if kind == "code":
                self.code = value
        d.addCallbacks(fired, lambda f: None)

    def _next_message(self):
        d = self.w.get_message()
        self.handed.append(d)

        def fired(message):
            self.events.append(("message", message))
            self._next_message()
        d.addCallbacks(fired, lambda f: None)

    # -- what both modes share -----------------------------------------------
    def pump(self):
        self.server.pump()
        if self.delegated:
            for kind, value in self.events:
                if kind == "code":
                    self.code = value

    def client_conns(self):
        rc = self.w._boss._RC
        return [c for c in self.server.conns if c.rc is rc]

    def inject(self, message):
        for conn in self.client_conns():
            self.server._send(conn, message)

    def stored_messages(self):
        return [m for mailbox in self.server.mailboxes.values() for m in mailbox["messages"]]

    def close(self):
        """close(); in Deferred mode its Deferred is kept (the first one)."""
        d = self.w.close()
        if d is not None:
            self.handed.append(d)
            if self.closed is None:
                self.closed = d
                d.addBoth(self._closed_with)
            else:
                d.addErrback(lambda f: None)
        return d

    def _closed_with(self, result):
        self.closed_with.append(_shown(result))
        if isinstance(result, Failure):
            self.close_errors.append(result.value)

    def is_closed(self):
        if self.delegated:
            return any(kind == "closed" for kind, _ in self.events)
        return bool(self.closed_with)

    def close_result(self):
        if self.delegated:
            return [value for kind, value in self.events if kind == "closed"]
        return list(self.closed_with)

    def comparable(self):
        """The events both modes must agree on, per kind, in order (one
        welcome: Delegated hears one per connection, Deferred one in all)."""
        out = {kind: [] for kind in ONE_SHOT + ("message",)}
        for kind, value in self.events:
            if kind == "code":
                # an allocated code's words are random: its shape
                nameplate, words = value.split("-", 1)
                value = (nameplate, len(words.split("-")))
            if kind in out:
                out[kind].append(value)
        out["welcome"] = out["welcome"][:1]
        return out

    def messages(self):
        return [value for kind, value in self.events if kind == "message"]


def _check_not_a_machine_bug(testcase, value, where):
    text = f"{type(value).__name__}: {value}"
    for bug in MACHINE_BUGS:
        testcase.assertNotIn(bug, text, f"{where}: a machine's bug reached the application: {text}")


class ClientSearch(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.tc = unittest.TestCase()
        self.log = LogWatch()
        self.worlds = [World(delegated=False), World(delegated=True)]

    # -- helpers ------------------------------------------------------------
    def api(self, name, call):
        """``call(world)`` in each world: it works or raises a documented
        refusal, the same in both modes; a NoTransition never."""
        outcomes = []
        for world in self.worlds:
            try:
                result = call(world)
            except NoTransition as e:
                raise AssertionError(f"{name}: NoTransition reached the application: {e}") from e
            except REFUSALS as e:
                _check_not_a_machine_bug(self.tc, e, name)
                outcomes.append(type(e).__name__)
            else:
                if hasattr(result, "addCallbacks"):
                    world.handed.append(result)
                    result.addErrback(lambda f: None)
                outcomes.append("ok")
        self.tc.assertEqual(outcomes[0], outcomes[1], f"{name}: the two modes differ")
        return outcomes[0]

    def each(self, f):
        for world in self.worlds:
            f(world)

    # -- a start that reaches the key often (the rules below then act on
    # a wormhole that has a peer, not only on a lonely one) ----------------
    @initialize(start=st.sampled_from(["nothing", "set", "allocate", "input"]))
    def start(self, start):
        if start == "nothing":
            return
        if start == "set":
            self.set_code(right=True)
        elif start == "allocate":
            self.allocate_code()
        else:
            self.input_code()
            self.pump()
            self.helper(step="nameplate")
            self.helper(step="words")
        self.pump()
        self.peer_sets_code(right=True)
        self.pump()

    # -- the application's calls ------------------------------------------------
    @rule()
    def allocate_code(self):
        self.api("allocate_code", lambda world: world.w.allocate_code())

    @rule(right=st.booleans())
    def set_code(self, right):
        code = CODE if right else WRONG

        def call(world):
            world.w.set_code(code)
            world.code = world.code or code
        self.api("set_code", call)

    @rule()
    def input_code(self):
        def call(world):
            world.helper = world.w.input_code()
        self.api("input_code", call)

    @precondition(lambda self: self.worlds[0].helper is not None)
    @rule(step=st.sampled_from(["refresh", "nameplates", "nameplate", "nameplate-bad",
                                "words-completions", "words", "wordlist"]))
    def helper(self, step):
        def call(world):
            h = world.helper
            if step == "refresh":
                h.refresh_nameplates()
            elif step == "nameplates":
                h.get_nameplate_completions("")
            elif step == "nameplate":
                h.choose_nameplate("7")
            elif step == "nameplate-bad":
                h.choose_nameplate("seven")
            elif step == "words-completions":
                h.get_word_completions("pur")
            elif step == "words":
                h.choose_words("purple-sausages")
                world.code = world.code or CODE
            else:
                return h.when_wordlist_is_available()
        self.api(f"helper {step}", call)

    @rule(n=st.integers(0, 3))
    def send_message(self, n):
        self.api("send_message", lambda world: world.w.send_message(b"ours %d" % n))

    @rule(getter=st.sampled_from(["get_welcome", "get_code", "get_unverified_key",
                                  "get_verifier", "get_versions", "get_message"]))
    def get(self, getter):
        """Deferred mode only: Delegated mode has no getters."""
        world = self.worlds[0]
        d = getattr(world.w, getter)()
        world.handed.append(d)
        if getter == "get_message":
            # the message this one takes is one the Delegate hears too
            d.addCallback(lambda message: world.events.append(("message", message)))
        d.addErrback(lambda f: None)

    @rule()
    def derive_key(self):
        self.api("derive_key", lambda world: world.w.derive_key("purpose", 32))

    @rule()
    def dilate(self):
        self.api("dilate", lambda world: world.w.dilate())

    @rule()
    def serialize(self):
        """Refused in Deferred mode; Delegated mode serializes or refuses
        (a code being typed): only a NoTransition would be wrong."""
        for world in self.worlds:
            try:
                world.w.serialize()
            except NoTransition as e:
                raise AssertionError(f"serialize: NoTransition: {e}") from e
            except errors.WormholeError as e:
                _check_not_a_machine_bug(self.tc, e, "serialize")

    @rule()
    def close(self):
        self.api("close", lambda world: world.close() and None)

    # -- the world ---------------------------------------------------------------
    @rule()
    def pump(self):
        self.each(lambda world: world.pump())

    @rule(seconds=st.sampled_from([0.5, 1.0, 5.0, 30.0, 70.0]))
    def time_passes(self, seconds):
        def advance(world):
            world.clock.advance(seconds)
            world.pump()
        self.each(advance)

    @rule(up=st.booleans())
    def server_up(self, up):
        def set_up(world):
            world.server.up = up
        self.each(set_up)

    @rule()
    def connections_lost(self):
        self.each(lambda world: world.server.drop_all())

    @rule(orig=st.sampled_from(["claim", "open", "add", "release", "close", "bind", None,
                                "welcome"]))
    def server_error(self, orig):
        """An ``error`` message answering one of our commands (or none);
        "welcome": from the next connection on, the server's welcome
        refuses us."""
        if orig == "welcome":
            def refuse(world):
                world.server.welcome = {"error": "go away"}
            self.each(refuse)
            return
        message = {"type": "error", "error": "crowded"}
        if orig is not None:
            message["orig"] = {"type": orig}
        self.each(lambda world: world.inject(message))

    @precondition(lambda self: not self.worlds[0].peer_has_code)
    @rule(right=st.booleans())
    def peer_sets_code(self, right):
        def call(world):
            world.peer_has_code = True
            code = (world.code or CODE) if right else WRONG
            try:
                world.peer.set_code(code)
            except errors.WormholeClosed:
                pass  # the peer closed first: nothing for us to see
        self.each(call)

    @precondition(lambda self: self.worlds[0].peer_has_code)
    @rule(n=st.integers(0, 3))
    def peer_sends(self, n):
        self.each(lambda world: world.peer.send_message(b"theirs %d" % n))  # never refused

    @rule()
    def peer_closes(self):
        def call(world):
            d = world.peer.close()
            if d is not None:
                d.addErrback(lambda f: None)
        self.each(call)

    @rule(kind=st.sampled_from(["claimed", "released", "allocated", "nameplates", "closed",
                                "welcome", "ack", "pong", "unknown"]))
    def server_says(self, kind):
        """A server message nobody asked for (a confused or hostile
        server), in whatever state we are."""
        message = {"type": kind, "claimed": {"mailbox": "mb-other"},
                   "allocated": {"nameplate": "9"},
                   "nameplates": {"nameplates": [{"id": "9"}]},
                   "welcome": {"welcome": {}}}.get(kind, {})
        message = dict(message, type=kind)
        self.each(lambda world: world.inject(message))

    @rule(index=st.integers(0, 20))
    def message_again(self, index):
        """A message the mailbox holds (ours or the peer's) delivered to
        us again: duplicated, out of order, after close."""
        def call(world):
            stored = world.stored_messages()
            if stored:
                world.inject(stored[index % len(stored)])
        self.each(call)

    @rule(phase=st.sampled_from(["pake", "version", "0", "1", "dilate-0", "other"]),
          body=st.sampled_from(["", "00", "deadbeef" * 8, "zz"]))
    def garbage_message(self, phase, body):
        message = {"type": "message", "side": "0123456789", "phase": phase, "body": body}
        self.each(lambda world: world.inject(message))

    # -- invariants ---------------------------------------------------------------
    @invariant()
    def nothing_logged(self):
        self.tc.assertEqual(self.log.errors, [], self.log.describe())

    @invariant()
    def closed_without_a_machine_bug(self):
        for world in self.worlds:
            for value in world.close_errors:
                _check_not_a_machine_bug(self.tc, value, "closed with")

    def teardown(self):
        try:
            self._finish()
        finally:
            self.log.stop()

    def _finish(self):
        """The server comes back, we close, time passes: both wormholes
        end, every Deferred handed out fired, and both modes saw the
        same events."""
        for world in self.worlds:
            world.server.up = True
            world.close()
            peer = world.peer.close()
            peer.addErrback(lambda f: None)
            for _ in range(10):
                world.pump()
                if world.is_closed():
                    break
                world.clock.advance(70)
            world.pump()
            self.tc.assertTrue(world.is_closed(),
                               f"{'Delegated' if world.delegated else 'Deferred'} mode "
                               "did not close")
            waiting = [d for d in world.handed if not d.called]
            self.tc.assertEqual(waiting, [], "Deferreds that never fired after close")
        self.nothing_logged()
        self.closed_without_a_machine_bug()
        deferred, delegated = self.worlds
        # Deferred mode hands a message out in a later turn: one that
        # arrived but was not yet handed out when the wormhole closed is
        # not handed out any more (wormhole/_observer.py: the reference
        # 0.24's rule; docs/api.md "After close"), so
        # its messages are the Delegated mode's, or the first of them
        theirs, ours = delegated.messages(), deferred.messages()
        self.tc.assertEqual(ours, theirs[:len(ours)], "messages differ between the modes")
        events = [world.comparable() for world in self.worlds]
        for kind_events in events:
            del kind_events["message"]
        self.tc.assertEqual(events[0], events[1],
                            "Delegated mode's events differ from Deferred mode's")
        self.tc.assertEqual(deferred.close_result(), delegated.close_result()[:1])


class ClientSearchTests(unittest.TestCase):
    def test_search(self):
        """The search above, at the example count of
        tests/unit/_machine_search.py."""
        try:
            run_state_machine_as_test(ClientSearch,
                                      settings=search_settings(examples=200, steps=40))
        except Exception as e:  # noqa: BLE001 -- shown whole, then failed
            # hypothesis puts the falsifying steps and the reproduce blob in
            # the exception's notes (and one sub-exception per distinct
            # failure), which trial does not print
            self.fail("".join(traceback.format_exception(e)))


class FoundBySearch(unittest.TestCase):
    """Each failing example the search found, kept as it was printed
    (the steps, then the invariants and the teardown as hypothesis runs
    them), so that it stays fixed whatever the search draws next time."""

    def replay(self, *steps):
        state = self.replayed = ClientSearch()
        try:
            for name, kwargs in steps:
                getattr(state, name)(**kwargs)
                state.nothing_logged()
                state.closed_without_a_machine_bug()
        except BaseException:
            state.log.stop()
            raise
        state.teardown()

    def test_message_before_any_mailbox(self):
        """A ``message`` from the server before we opened a mailbox (here a
        garbage ``pake``, before any code) was a NoTransition for
        Mailbox._rx_theirs in Mailbox.S0B, wrapped into the ProtocolError the
        wormhole closed with. Falsifying example: ``pump()``,
        ``garbage_message(body='', phase='pake')``, ``input_code()``,
        ``time_passes(seconds=0.5)``, ``helper(step='refresh')``. Now the
        Mailbox machine says the server sent a message for no mailbox of
        ours (ProtocolError)."""
        self.replay(("pump", {}), ("garbage_message", {"body": "", "phase": "pake"}),
                    ("input_code", {}), ("time_passes", {"seconds": 0.5}),
                    ("helper", {"step": "refresh"}))

    def test_server_answer_nobody_asked_for(self):
        """A ``claimed`` from the server before we claimed anything was a
        NoTransition for Nameplate.rx_claimed in Nameplate.S0B, wrapped
        into the ProtocolError the wormhole closed with. Falsifying
        example: ``start(start='nothing')``, ``time_passes(seconds=0.5)``,
        ``server_says(kind='claimed')``, ``pump()``. Now any server
        message that the machine it drives refuses in its state is a
        ProtocolError saying it came out of turn."""
        self.replay(("start", {"start": "nothing"}), ("time_passes", {"seconds": 0.5}),
                    ("server_says", {"kind": "claimed"}), ("pump", {}))
        result = self.replayed.worlds[0].close_errors
        self.assertIn("out of turn (Nameplate was in S0B", str(result[0]))

    def test_nameplates_nobody_asked_for(self):
        """A ``nameplates`` list while no code is being typed went through
        the Lister to the Input machine: a NoTransition for
        Input.got_nameplates in Input.S0_idle, wrapped into the
        ProtocolError the wormhole closed with. Found by the long search
        (seed 135514426427872656838006799992755233774, not shrunk in time:
        ``start(start='input')``, ``server_says(kind='nameplates')``, ...
        with the code set before the helper was used); shrunk by hand to
        ``pump()``, ``server_says(kind='nameplates')``, ``pump()``. Now
        the Input machine drops a list nobody is typing against."""
        self.replay(("pump", {}), ("server_says", {"kind": "nameplates"}), ("pump", {}))
