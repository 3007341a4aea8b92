"""Scenarios whose observable outcomes an application sees, run by
whichever interpreter starts this script: our venv's python, or the
reference 0.24's (docs/api.md, "Behaviour differences";
tests/client/test_behaviour_vs_reference.py compares the two).

Usage: python behaviour_scenarios.py MAILBOX_URL
Prints one JSON object on its last line: {scenario: {field: outcome}}.

Only what an application can observe is recorded, normalised so that
random values (codes, keys, sides) compare equal: the order of events,
the class of an error and what it carries, whether a Deferred answered.
Everything imported from ``wormhole`` is public API (or an internal that
real applications import, docs/api.md), so the script runs unchanged on
both libraries.
"""

import json
import sys

from twisted.internet import defer, protocol, task
from twisted.python import log
from twisted.python.failure import Failure

APPID = "example.com/behaviour-vs-reference"
ANSWER = 5.0  # seconds a Deferred gets to answer before it counts as silent
GETTERS = ("get_welcome", "get_code", "get_unverified_key", "get_verifier",
           "get_versions", "get_message")


def describe_error(e):
    """The class and the arguments an application may test, normalised."""
    if isinstance(e, Failure):
        e = e.value
    out = {"class": type(e).__name__}
    if e.args and isinstance(e.args[0], str) and e.args[0] in ("happy", "lonely", "scary",
                                                               "errory"):
        out["mood"] = e.args[0]
    return out


def words(f):
    """An error's text, with what differs from run to run (ports) masked."""
    import re
    e = f.value if isinstance(f, Failure) else f
    return re.sub(r":\d+/", ":<port>/", str(e))


def settled(reactor, d):
    """What ``d`` gave within ANSWER seconds: {"ok": ...}, {"error": ...}
    or "silent"."""
    result = defer.Deferred()
    timer = reactor.callLater(ANSWER, lambda: result.called or result.callback("silent"))

    def ok(value):
        if not result.called:
            timer.cancel()
            result.callback({"ok": normalise(value)})

    def failed(f):
        if not result.called:
            timer.cancel()
            result.callback({"error": describe_error(f)})
    d.addCallbacks(ok, failed)
    return result


def normalise(value):
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, dict):
        return sorted(value)
    if isinstance(value, str) and "-" in value and value.split("-")[0].isdigit():
        return "<code>"
    if value is None or isinstance(value, (int, str, bool)):
        return value
    return type(value).__name__


def turns(reactor, n=3):
    """Let a few reactor turns pass (eventual-send queues drain)."""
    d = defer.succeed(None)
    for _ in range(n):
        d.addCallback(lambda _: task.deferLater(reactor, 0, lambda: None))
    return d


class Recorder:
    """A delegate recording every event in order, with markers the
    scenario adds between them."""

    def __init__(self):
        self.events = []
        self.waiting = {}

    def _got(self, name, value):
        self.events.append([name, normalise(value) if not isinstance(value, Exception)
                            else describe_error(value)])
        for d in self.waiting.pop(name, []):
            d.callback(value)

    def when(self, name):
        d = defer.Deferred()
        if any(e[0] == name for e in self.events):
            d.callback(None)
        else:
            self.waiting.setdefault(name, []).append(d)
        return d

    def mark(self, what):
        self.events.append(["mark", what])

    def wormhole_got_welcome(self, welcome):
        self._got("welcome", welcome)

    def wormhole_got_code(self, code):
        self._got("code", code)

    def wormhole_got_unverified_key(self, key):
        self._got("unverified_key", key)

    def wormhole_got_verifier(self, verifier):
        self._got("verifier", verifier)

    def wormhole_got_versions(self, versions):
        self._got("versions", versions)

    def wormhole_got_message(self, plaintext):
        self._got("message", plaintext)

    def wormhole_closed(self, result):
        self._got("closed", result)


@defer.inlineCallbacks
def delegated_events(reactor, url):
    """Item 1: every Delegated-mode event, in order, with markers for
    when set_code()/allocate_code() returned."""
    import wormhole
    a, b = CodeKeeper(), Recorder()
    wa = wormhole.create(APPID, url, reactor, versions={"v": 1}, delegate=a)
    wa.send_message(b"from a")
    wa.allocate_code()
    a.mark("allocate_code returned")
    yield a.when("code")
    code = _codes[-1]
    wb = wormhole.create(APPID, url, reactor, versions={"v": 2}, delegate=b)
    wb.set_code(code)
    b.mark("set_code returned")
    wb.send_message(b"from b")
    yield defer.gatherResults([a.when("message"), b.when("message")])
    wa.close()
    a.mark("close returned")
    yield a.when("closed")
    wb.close()
    b.mark("close returned")
    yield b.when("closed")
    return {"a": a.events, "b": b.events}


_codes = []


class CodeKeeper(Recorder):
    def wormhole_got_code(self, code):
        _codes.append(code)
        super().wormhole_got_code(code)


@defer.inlineCallbacks
def delegated_wrong_code(reactor, url):
    """Item 3 in Delegated mode: what each delegate hears after a wrong code."""
    import wormhole
    a, b = CodeKeeper(), Recorder()
    wa = wormhole.create(APPID, url, reactor, delegate=a)
    wa.allocate_code()
    yield a.when("code")
    wb = wormhole.create(APPID, url, reactor, delegate=b)
    wb.set_code(_codes[-1] + "-wrong")
    b.mark("set_code returned")
    yield defer.gatherResults([a.when("closed"), b.when("closed")])
    return {"a": a.events, "b": b.events}


@defer.inlineCallbacks
def paired(reactor, url, code_suffix=""):
    import wormhole
    wa = wormhole.create(APPID, url, reactor)
    wa.allocate_code()
    code = yield wa.get_code()
    wb = wormhole.create(APPID, url, reactor)
    wb.set_code(code + code_suffix)
    return wa, wb


@defer.inlineCallbacks
def getters(reactor, w):
    out = {}
    for name in GETTERS:
        out[name] = yield settled(reactor, getattr(w, name)())
    return out


@defer.inlineCallbacks
def after_close_happy(reactor, url):
    """Item 2: after a happy close every new get_*() fails promptly."""
    wa, wb = yield paired(reactor, url)
    wa.send_message(b"1")
    wb.send_message(b"2")
    yield defer.gatherResults([wa.get_message(), wb.get_message(), wa.get_verifier(),
                               wb.get_versions(), wa.get_welcome()])
    out = {}
    out["close_a"] = yield settled(reactor, wa.close())
    out["close_b"] = yield settled(reactor, wb.close())
    out["a"] = yield getters(reactor, wa)
    out["b"] = yield getters(reactor, wb)
    out["commands"] = commands(wa)
    return out


def commands(w):
    """What each command does on a closed wormhole: returns, or raises
    which class."""
    out = {}
    for name, call in (("allocate_code", lambda: w.allocate_code()),
                       ("set_code", lambda: w.set_code("1-purple-sausages")),
                       ("input_code", lambda: w.input_code()),
                       ("send_message", lambda: w.send_message(b"late")),
                       ("derive_key", lambda: w.derive_key("purpose", 32)),
                       ("close", lambda: w.close())):
        try:
            result = call()
            if isinstance(result, defer.Deferred):
                result.addErrback(lambda f: None)
                result = "a Deferred"
            out[name] = {"returned": normalise(result)}
        except Exception as e:  # noqa: BLE001 -- recorded: which class
            out[name] = {"raised": type(e).__name__, "is": reference_classes(e)}
    return out


def reference_classes(e):
    """The reference's error classes ``e`` is an instance of (what an
    application's ``except`` clauses can test)."""
    from wormhole import errors
    names = ("WormholeError", "OnlyOneCodeError", "NoKeyError", "KeyFormatError",
             "WormholeClosed", "LonelyError", "WrongPasswordError")
    return [n for n in names if isinstance(e, getattr(errors, n))]


@defer.inlineCallbacks
def after_close_lonely(reactor, url):
    """Item 2: closed before the peer came, the getters that had answered
    and those that had not."""
    import wormhole
    w = wormhole.create(APPID, url, reactor)
    w.allocate_code()
    yield w.get_code()
    pending = w.get_unverified_key()
    out = {"close": (yield settled(reactor, w.close()))}
    out["pending_key"] = yield settled(reactor, pending)
    out["after"] = yield getters(reactor, w)
    out["commands"] = commands(w)
    return out


@defer.inlineCallbacks
def wrong_code(reactor, url):
    """Item 3: once both sides saw WrongPasswordError, before close()."""
    wa, wb = yield paired(reactor, url, "-wrong")
    first = wa.get_message()
    first.addErrback(lambda f: out.__setitem__("words", words(f)) or f)
    out = {}
    out["first_a"] = yield settled(reactor, first)
    out["first_b"] = yield settled(reactor, wb.get_message())
    out["a"] = yield getters(reactor, wa)
    out["b"] = yield getters(reactor, wb)
    out["close_a"] = yield settled(reactor, wa.close())
    out["close_b"] = yield settled(reactor, wb.close())
    return out


@defer.inlineCallbacks
def server_connection_error(reactor, url):
    """Item 4: ServerConnectionError.reason is the exception itself."""
    import wormhole
    from wormhole.errors import ServerConnectionError
    from wormhole.transit import allocate_tcp_port  # a port nothing listens on
    out = {}
    for case, relay in (("refused", f"ws://127.0.0.1:{allocate_tcp_port()}/v1"),
                        ("bad_host", "ws://no..such..host:4000/v1")):
        w = wormhole.create(APPID, relay, reactor)
        got = {}
        try:
            yield w.get_welcome()
            got["welcome"] = "answered"
        except ServerConnectionError as e:
            got["class"] = "ServerConnectionError"
            got["reason_class"] = type(e.reason).__name__
            got["reason_is_exception"] = isinstance(e.reason, Exception)
            got["words"] = words(e)
        except Exception as e:  # noqa: BLE001 -- recorded: which class it was
            got = describe_error(e)
        got["close"] = yield settled(reactor, w.close())
        out[case] = got
    return out


def eventual_queue(reactor, url):
    """Item 5: an exception in a queued call is logged, the others run;
    calls queued by a call run in a later turn."""
    from twisted.internet.task import Clock

    from wormhole.eventual import EventualQueue
    clock = Clock()
    eq = EventualQueue(clock)
    ran, logged = [], []

    def observer(event):
        if event.get("isError"):
            f = event.get("failure")
            logged.append(type(f.value).__name__ if f is not None else "error")
    log.addObserver(observer)
    try:
        def boom():
            raise ZeroDivisionError("queued call failed")

        def later():
            ran.append("later")

        def first():
            ran.append("first")
            eq.eventually(later)
        eq.eventually(first)
        eq.eventually(boom)
        eq.eventually(ran.append, "after boom")
        try:
            clock.advance(0)
            raised = None
        except Exception as e:  # noqa: BLE001 -- recorded
            raised = type(e).__name__
        one_turn = list(ran)
        try:
            eq.flush_sync()
            flush_raised = None
        except Exception as e:  # noqa: BLE001 -- recorded
            flush_raised = type(e).__name__
        eq.eventually(boom)
        eq.eventually(ran.append, "after second boom")
        try:
            eq.flush_sync()
            flush_sync_raised = None
        except Exception as e:  # noqa: BLE001 -- recorded
            flush_sync_raised = type(e).__name__
    finally:
        log.removeObserver(observer)
    return {"raised": raised, "after_one_turn": one_turn, "flush_raised": flush_raised,
            "flush_sync_raised": flush_sync_raised, "ran": ran, "logged": logged}


def observers(reactor, url):
    """Item 6: EmptyableSet.when_next_empty() and OneShotObserver.error()
    after fire()."""
    from twisted.internet.task import Clock

    from wormhole.eventual import EventualQueue
    from wormhole.observer import EmptyableSet, OneShotObserver
    clock = Clock()
    eq = EventualQueue(clock)
    out = {}
    s = EmptyableSet(_eventual_queue=eq)
    fired = []
    s.when_next_empty().addCallback(fired.append)
    eq.flush_sync()
    out["empty_set_fires_at_once"] = bool(fired)
    s.add(1)
    s.discard(1)
    eq.flush_sync()
    out["fires_when_emptied"] = bool(fired)
    o = OneShotObserver(eq)
    o.fire("result")
    try:
        o.error(Failure(ValueError("later error")))
        out["error_after_fire"] = "accepted"
    except BaseException as e:  # noqa: BLE001 -- recorded: AssertionError or not
        out["error_after_fire"] = type(e).__name__
    results = []
    o.when_fired().addBoth(lambda r: results.append(
        describe_error(r) if isinstance(r, Failure) else r))
    eq.flush_sync()
    out["when_fired_after"] = results
    return out


class _Nothing(protocol.Protocol):
    pass


@defer.inlineCallbacks
def dilation_endpoints(reactor, url):
    """Item 7: listen() and connect() fire when the Dilation connection
    is first up, not before the peer exists."""
    import wormhole
    order = []
    wa = wormhole.create(APPID, url, reactor, dilation=True)
    da = wa.dilate()
    f = protocol.Factory.forProtocol(_Nothing)
    listening = da.listener_for("x").listen(f)
    listening.addCallback(lambda _: order.append("listen fired"))
    connecting = da.connector_for("y").connect(f)
    connecting.addCallback(lambda _: order.append("connect fired"))
    da.when_dilated().addCallback(lambda _: order.append("dilated"))
    wa.allocate_code()
    code = yield wa.get_code()
    yield turns(reactor, 10)
    order.append("peer created")
    wb = wormhole.create(APPID, url, reactor, dilation=True)
    wb.set_code(code)
    db = wb.dilate()
    yield defer.gatherResults([settled(reactor, listening), settled(reactor, connecting),
                               settled(reactor, da.when_dilated()),
                               settled(reactor, db.when_dilated())])
    # which of the three fires first in one turn is registration order:
    # only their place relative to the peer is the contract
    out = {"before_peer": order[:order.index("peer created")],
           "after_peer": sorted(order[order.index("peer created") + 1:])}
    yield settled(reactor, wa.close())
    yield settled(reactor, wb.close())
    return out


@defer.inlineCallbacks
def dilation_endpoints_fail(reactor, url):
    """Item 7: listen() and connect() fail when Dilation cannot happen
    (the peer did not enable it)."""
    import wormhole
    wa = wormhole.create(APPID, url, reactor, dilation=True)
    da = wa.dilate()
    f = protocol.Factory.forProtocol(_Nothing)
    listening = settled(reactor, da.listener_for("x").listen(f))
    connecting = settled(reactor, da.connector_for("y").connect(f))
    wa.allocate_code()
    wb = wormhole.create(APPID, url, reactor)
    wb.set_code((yield wa.get_code()))
    out = {"listen": (yield listening), "connect": (yield connecting),
           "dilated": (yield settled(reactor, da.when_dilated()))}
    yield settled(reactor, wa.close())
    yield settled(reactor, wb.close())
    return out


def names(reactor, url):
    """Items 8 and 9: the names applications import."""
    import wormhole
    out = {}
    from wormhole import wormhole as module
    for name in ("IDeferredWormhole", "IWormhole", "_DeferredWormhole", "_DelegatedWormhole"):
        out[name] = hasattr(module, name)
    from wormhole.wormhole import IDeferredWormhole, IWormhole, _DeferredWormhole
    w = wormhole.create(APPID, "ws://127.0.0.1:1/v1", reactor)
    out["deferred_provides"] = [IDeferredWormhole.providedBy(w), IWormhole.providedBy(w),
                                isinstance(w, _DeferredWormhole)]
    w.close().addErrback(lambda f: None)
    return out


def transit_helpers(reactor, url):
    """Item 9: the reference's transit helpers that are not machinery."""
    from twisted.internet.defer import CancelledError

    from wormhole import transit
    port = transit.allocate_tcp_port()
    key = bytes(range(32))
    out = {"allocate_tcp_port": isinstance(port, int) and 0 < port < 65536,
           "sender": transit.build_sender_handshake(key).decode(),
           "receiver": transit.build_receiver_handshake(key).decode(),
           "relay": transit.build_sided_relay_handshake(key, "0123456789abcdef").decode()}
    seen = []

    def contenders():
        return [defer.Deferred(lambda d: seen.append("cancelled")) for _ in range(2)]

    def record(case, d):
        d.addBoth(lambda r: out.__setitem__(case, describe_error(r) if isinstance(r, Failure)
                                            else r))
    a, b = contenders()
    record("race_won", transit.there_can_be_only_one([a, b]))
    b.callback("b won")
    a, b = contenders()
    record("race_lost", transit.there_can_be_only_one([a, b]))
    a.errback(ValueError("a"))
    b.errback(KeyError("b"))
    race = transit.there_can_be_only_one(contenders())
    record("race_cancelled", race)
    race.cancel()
    out["cancelled_losers"] = len(seen)
    out["cancelled_error"] = out["race_cancelled"] == {"class": CancelledError.__name__}
    return out


def key_format(reactor, url):
    """The refusals ours words better: the class and the moment match."""
    import wormhole
    out = {}
    w = wormhole.create(APPID, "ws://127.0.0.1:1/v1", reactor)
    for case, code in (("space", "4 purple sausages"), ("no_hyphen", "4purple"),
                       ("leading_space", " 4-purple-sausages"), ("letters", "a-purple")):
        try:
            w.set_code(code)
            out[case] = "accepted"
        except Exception as e:  # noqa: BLE001 -- recorded
            out[case] = type(e).__name__
            out[case + "_words"] = str(e)
    w.close().addErrback(lambda f: None)
    return out


SCENARIOS = {
    "delegated_events": delegated_events,
    "delegated_wrong_code": delegated_wrong_code,
    "after_close_happy": after_close_happy,
    "after_close_lonely": after_close_lonely,
    "wrong_code": wrong_code,
    "server_connection_error": server_connection_error,
    "eventual_queue": eventual_queue,
    "observers": observers,
    "dilation_endpoints": dilation_endpoints,
    "dilation_endpoints_fail": dilation_endpoints_fail,
    "names": names,
    "transit_helpers": transit_helpers,
    "key_format": key_format,
}


@defer.inlineCallbacks
def run(reactor, url, *only):
    results = {}
    for name, scenario in SCENARIOS.items():
        if only and name not in only:
            continue
        try:
            results[name] = yield defer.maybeDeferred(scenario, reactor, url)
        except Exception as e:  # noqa: BLE001 -- a broken scenario is an outcome too
            results[name] = {"scenario failed": f"{type(e).__name__}: {e}"}
        yield turns(reactor)
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    task.react(run, sys.argv[1:])
