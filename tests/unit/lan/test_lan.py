"""wormhole.lan without a network (docs/lan.md): which nameplate a sender
announces, what a receiver makes of what it heard, and how each ends."""
import sys
import threading

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.internet.testing import MemoryReactorClock
from twisted.trial import unittest
from zope.interface.verify import verifyClass, verifyObject

import wormhole.lan as lan
from wormhole.lan import _bridge, _records, _serve
from wormhole.lan._records import Announcement, choose, parse_txt
from wormhole.lan._zeroconf import IMulticastDNS, ZeroconfMDNS

from ._fakes import FakeMDNS, FixedOrder, InlineBridge

ADDR = "10.77.0.11"
TXT = dict(_records.TXT)


def ann(server="wormhole-1.local.", port=4000, addresses=(ADDR,), props=None):
    return Announcement(server, port, addresses, TXT if props is None else props)


class Serving(unittest.TestCase):
    def setUp(self):
        self.calls = []
        self.reactor = MemoryReactorClock()

    def serve(self, **kw):
        taken = kw.pop("taken", ())
        self.mdns = FakeMDNS(self.calls, taken=taken)
        verifyObject(IMulticastDNS, self.mdns)
        return lan.serve(self.reactor, addresses=[ADDR], mdns=self.mdns,
                         bridge=InlineBridge(self.calls), rng=FixedOrder(), **kw)

    def test_the_first_free_nameplate_is_announced(self):
        """A nameplate another sender holds (its probe answered) is
        skipped: the next one is announced."""
        m = self.successResultOf(self.serve(taken={"1", "2"}))
        self.assertEqual(m.nameplate, "3")
        self.assertEqual([c[:2] for c in self.calls],
                         [("open",), ("claim", "1"), ("claim", "2"), ("claim", "3")])
        self.assertEqual(self.calls[-1][3], (ADDR,))
        self.assertTrue(m.url.startswith(f"ws://{ADDR}:") and m.url.endswith("/v1"))
        self.assertEqual(self.reactor.tcpServers[0][3], ADDR)
        code = m.make_code(2, randbytes=lambda n: b"\x00" * n)
        self.assertEqual(code, "3-adroitness-aardvark")
        self.successResultOf(m.stop())

    def test_stop_says_goodbye_once(self):
        m = self.successResultOf(self.serve())
        self.successResultOf(m.stop())
        self.successResultOf(m.stop())
        self.assertEqual(self.calls.count(("close",)), 1)

    def test_a_chosen_nameplate_that_is_taken_is_refused(self):
        """With ``nameplate=``, no other is tried; mDNS is closed again."""
        f = self.failureResultOf(self.serve(nameplate="7", taken={"7"}), lan.NameplateTaken)
        self.assertIn("7", str(f.value))
        self.assertEqual(self.calls[-1], ("close",))
        self.assertEqual([c[:2] for c in self.calls if c[0] == "claim"], [("claim", "7")])

    def test_every_nameplate_taken(self):
        """The tries are bounded: MAX_CLAIMS probes, then a clear error."""
        taken = set(_serve.candidates(FixedOrder()))
        f = self.failureResultOf(self.serve(taken=taken), lan.NameplateTaken)
        self.assertIn("every nameplate tried", str(f.value))
        self.assertEqual(len([c for c in self.calls if c[0] == "claim"]), _serve.MAX_CLAIMS)

    def test_not_a_nameplate(self):
        for bad in ("0", "07", "abc", "12345", ""):
            self.failureResultOf(self.serve(nameplate=bad), lan.LanError)
        self.assertEqual(self.calls, [])


class Finding(unittest.TestCase):
    def setUp(self):
        self.calls = []

    def find(self, heard, nameplate="7"):
        mdns = FakeMDNS(self.calls, heard={"7": heard})
        return lan.find(MemoryReactorClock(), nameplate, timeout=3.0, mdns=mdns,
                        bridge=InlineBridge(self.calls))

    def test_one_sender(self):
        url = self.successResultOf(self.find([ann(port=4321)]))
        self.assertEqual(url, f"ws://{ADDR}:4321/v1")
        self.assertEqual(self.calls, [("open",), ("lookup", "7", 3.0), ("close",)])

    def test_nobody(self):
        f = self.failureResultOf(self.find([]), lan.NoSenderFound)
        self.assertIn("no sender on this network offers nameplate 7", str(f.value))
        self.assertEqual(self.calls[-1], ("close",))

    def test_two_different_senders_are_refused(self):
        """A forged announcement next to the real one: no guess."""
        f = self.failureResultOf(
            self.find([ann(), ann(server="forged.local.", port=4001)]),
            lan.AmbiguousNameplate)
        self.assertIn("two different senders announce nameplate 7", str(f.value))
        self.assertIn("forged.local.:4001", str(f.value))

    def test_a_forger_s_name_is_shown_harmlessly(self):
        """The forged host name comes from the network: no control
        character of it reaches the message."""
        f = self.failureResultOf(
            self.find([ann(), ann(server="\x1b[2Jevil\u202e.local.", port=4001)]),
            lan.AmbiguousNameplate)
        self.assertIn("?[2jevil?.local.:4001", str(f.value))
        self.assertNotIn("\x1b", str(f.value))

    def test_the_same_sender_twice_is_one(self):
        url = self.successResultOf(self.find([ann(), ann(server="WORMHOLE-1.local.")]))
        self.assertEqual(url, f"ws://{ADDR}:4000/v1")

    def test_browse(self):
        mdns = FakeMDNS(self.calls, browsed=["3", "12"])
        got = self.successResultOf(lan.nameplates(MemoryReactorClock(), 1.5, mdns=mdns,
                                                  bridge=InlineBridge(self.calls)))
        self.assertEqual(got, ["3", "12"])
        self.assertEqual(self.calls, [("open",), ("nameplates", 1.5), ("close",)])

    def test_not_a_nameplate(self):
        f = self.failureResultOf(self.find([], nameplate="x"), lan.LanError)
        self.assertIn("1 to 4 digits", str(f.value))
        self.assertEqual(self.calls, [])


class Choosing(unittest.TestCase):
    def test_what_is_not_ours_is_not_a_sender(self):
        """Another protocol version, no usable address (loopback only),
        or no path: as if nothing answered."""
        for a in (ann(props=dict(TXT, protovers="2")), ann(addresses=("127.0.0.1",)),
                  ann(addresses=()), ann(props={"protovers": "1"}), ann(port=0)):
            self.assertRaises(lan.NoSenderFound, choose, "7", [a])

    def test_a_usable_address_is_taken(self):
        a = ann(addresses=("127.0.0.1", "192.168.5.9"))
        self.assertEqual(choose("7", [a]), "ws://192.168.5.9:4000/v1")

    def test_names(self):
        self.assertEqual(_records.instance_name("42"), "42._wormhole._tcp.local.")
        self.assertEqual(lan.nameplate_of("42._wormhole._tcp.local."), "42")
        self.assertIsNone(lan.nameplate_of("printer._wormhole._tcp.local."))
        self.assertIsNone(lan.nameplate_of("42._http._tcp.local."))
        self.assertEqual(lan.nameplate_of_code("42-guitarist-revenge"), "42")


class TXTRecords(unittest.TestCase):
    def test_parse(self):
        data = b"\x09txtvers=1\x0bprotovers=1\x08path=/v1\x04flag"
        self.assertEqual(parse_txt(data), {"txtvers": "1", "protovers": "1",
                                           "path": "/v1", "flag": ""})

    def test_truncated_and_repeated(self):
        self.assertEqual(parse_txt(b"\x06path=/\x06PATH=/x\x09protov"), {"path": "/"})
        self.assertEqual(parse_txt(b""), {})


class WithoutTheExtra(unittest.TestCase):
    def test_zeroconf_missing_names_the_extra(self):
        self.patch(sys, "modules", dict(sys.modules, zeroconf=None))
        e = self.assertRaises(lan.LanUnavailable, _bridge.load_zeroconf)
        self.assertIn("pip install 'wormhole-twisted[lan]'", str(e))


class TheAdapter(unittest.TestCase):
    def test_zeroconf_adapter_provides_the_interface(self):
        verifyClass(IMulticastDNS, ZeroconfMDNS)


class _ThreadReactor:
    """A Clock whose callFromThread queues the call for ``drain()`` (on
    the test's thread, as the reactor would run it)."""

    def __init__(self):
        self.clock = Clock()
        self.callLater = self.clock.callLater
        self.queued = []

    def callFromThread(self, f, *args):  # noqa: N802 (Twisted's name)
        self.queued.append((f, args))

    def drain(self):
        for f, args in self.queued:
            f(*args)
        self.queued = []


class Bridge(unittest.TestCase):
    """``ThreadBridge``: the call runs on another thread; its result
    reaches the reactor only through callFromThread; a timer bounds it."""

    def run_one(self, f, timeout=5.0):
        reactor = _ThreadReactor()
        before = set(threading.enumerate())
        d = _bridge.ThreadBridge(reactor).run(timeout, f)
        started = [t for t in threading.enumerate()
                   if t not in before and t.name == "wormhole-lan"]
        # the call may already be over; else it runs on a daemon thread
        for t in started:
            self.assertTrue(t.daemon)
            self.addCleanup(t.join, 5)
        return reactor, d, started

    def wait(self, reactor):
        for _ in range(500):
            if reactor.queued:
                return
            threading.Event().wait(0.01)
        self.fail("the call's result never reached callFromThread")

    def test_the_result_comes_through_the_reactor(self):
        main = threading.current_thread()
        reactor, d, _ = self.run_one(lambda: threading.current_thread() is main)
        self.wait(reactor)
        self.assertNoResult(d)  # nothing fires on the worker's thread
        reactor.drain()
        self.assertIs(self.successResultOf(d), False)

    def test_an_error_comes_through_too(self):
        def fails():
            raise lan.NameplateTaken("taken")
        reactor, d, _ = self.run_one(fails)
        self.wait(reactor)
        reactor.drain()
        self.failureResultOf(d, lan.NameplateTaken)

    def test_a_stuck_call_is_bounded(self):
        release = threading.Event()
        reactor, d, started = self.run_one(lambda: release.wait(5) and "late", timeout=2.0)
        self.assertEqual(len(started), 1)  # still waiting: on its own thread
        reactor.clock.advance(2.0)
        self.failureResultOf(d, defer.TimeoutError)
        release.set()
        self.wait(reactor)
        reactor.drain()  # the late result is dropped, not fired twice
