"""The reference 0.24's other public modules, implemented here
(docs/api.md): xfer_util, eventual, observer, ipaddrs, util, tor_manager,
``python -m wormhole``, the Transit additions, create()'s positional order,
and no import-time side effects."""

import hashlib
import inspect
import io
import os
import subprocess
import sys

from twisted.internet import defer, protocol, reactor
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole import util
from wormhole.eventual import EventualQueue
from wormhole.ipaddrs import find_addresses
from wormhole.observer import EmptyableSet, NoResult, OneShotObserver
from wormhole.tor_manager import get_tor
from wormhole.transit import (
    BadHandshake,
    BadNonce,
    FileConsumer,
    TransitClosed,
    TransitError,
    allocate_tcp_port,
    there_can_be_only_one,
)
from wormhole_mailbox.testing import start_mailbox_server

APPID = "example.com/xfer-util-test"


class XferUtil(unittest.TestCase):
    @defer.inlineCallbacks
    def test_send_and_receive_one_text(self):
        """send() with an allocated code and receive() with that code move
        one text; both hear the code through on_code and close happily."""
        from wormhole import xfer_util
        srv = yield start_mailbox_server(reactor)
        self.addCleanup(srv.stop)
        codes = []
        code_d = defer.Deferred()

        def on_code(code):
            codes.append(code)
            code_d.callback(code)
        sent = xfer_util.send(reactor, APPID, srv.url, "hello, world", None, on_code=on_code)
        code = yield code_d
        got = yield xfer_util.receive(reactor, APPID, srv.url, code, on_code=codes.append)
        yield sent
        self.assertEqual(got, "hello, world")
        self.assertEqual(codes, [code, code])

    def test_send_wants_text(self):
        """send() refuses bytes before touching the network."""
        from wormhole import xfer_util
        self.assertRaises(TypeError, xfer_util.send, reactor, APPID, "ws://127.0.0.1:1/v1",
                          b"bytes", "1-a-b")


class SmallModules(unittest.TestCase):
    def test_eventual_queue(self):
        """wormhole.eventual.EventualQueue runs calls in a later turn."""
        clock = Clock()
        eq = EventualQueue(clock)
        seen = []
        eq.eventually(seen.append, 1)
        self.assertEqual(seen, [])
        clock.advance(0)
        self.assertEqual(seen, [1])

    def test_eventual_queue_turns_and_errors(self):
        """A queued call that raises is logged and the others run; what a
        call queues runs after what was queued before it; flush_sync()
        goes on after an error too."""
        clock = Clock()
        eq = EventualQueue(clock)
        seen = []

        def first():
            seen.append("first")
            eq.eventually(seen.append, "queued by first")
        eq.eventually(first)
        eq.eventually(lambda: 1 / 0)
        eq.eventually(seen.append, "after the error")
        clock.advance(0)
        self.assertEqual(seen, ["first", "after the error", "queued by first"])
        self.assertEqual(len(self.flushLoggedErrors(ZeroDivisionError)), 1)
        eq.eventually(lambda: 1 / 0)
        eq.eventually(seen.append, "last")
        eq.flush_sync()
        self.assertEqual(seen[-1], "last")
        self.assertEqual(len(self.flushLoggedErrors(ZeroDivisionError)), 1)
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_observers(self):
        """OneShotObserver.error fails every waiter, also after fire();
        EmptyableSet fires when_next_empty the next time a discard empties
        it, never at once; NoResult is a sentinel (the reference 0.24's
        behaviour, compared in tests/client/test_behaviour_vs_reference)."""
        clock = Clock()
        eq = EventualQueue(clock)
        o = OneShotObserver(eq)
        d1 = o.when_fired()
        o.error(ValueError("no"))
        d2 = o.when_fired()
        clock.advance(0)
        self.failureResultOf(d1, ValueError)
        self.failureResultOf(d2, ValueError)
        s = EmptyableSet([1, 2], _eventual_queue=eq)
        d = s.when_next_empty()
        s.discard(1)
        clock.advance(0)
        self.assertNoResult(d)
        s.discard(2)
        clock.advance(0)
        self.assertIsNone(self.successResultOf(d))
        empty = EmptyableSet(_eventual_queue=eq)
        d = empty.when_next_empty()
        clock.advance(0)
        self.assertNoResult(d)
        empty.add(3)
        empty.discard(3)
        clock.advance(0)
        self.assertIsNone(self.successResultOf(d))
        fired = OneShotObserver(eq)
        fired.fire("result")
        fired.error(ValueError("later"))
        d = fired.when_fired()
        clock.advance(0)
        self.failureResultOf(d, ValueError)
        self.assertIsNot(NoResult, None)

    def test_find_addresses(self):
        """find_addresses() lists this host's IPv4 addresses, loopback first."""
        found = find_addresses()
        self.assertEqual(found[0], "127.0.0.1")
        self.assertEqual(len(found), len(set(found)))

    def test_hkdf_rfc5869(self):
        """util.HKDF is HKDF-SHA256: RFC 5869 test case 1."""
        okm = util.HKDF(b"\x0b" * 22, 42, salt=bytes(range(13)),
                        CTXinfo=bytes(range(0xf0, 0xfa)))
        self.assertEqual(okm.hex(), "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db0"
                                    "2d56ecc4c5bf34007208d5b887185865")

    def test_to_unicode_and_free_space(self):
        """to_unicode decodes UTF-8 bytes and passes the rest through;
        estimate_free_space gives bytes free where a path would go."""
        self.assertEqual(util.to_unicode("é".encode()), "é")
        self.assertEqual(util.to_unicode("x"), "x")
        self.assertIsNone(util.to_unicode(None))
        free = util.estimate_free_space(os.path.join(self.mktemp(), "..", "file"))
        self.assertIsInstance(free, int)
        self.assertGreater(free, 0)

    def test_get_tor_signature(self):
        """get_tor has the reference 0.24's signature (its behaviour is
        tested with fakes and a real tor in tests/tor)."""
        self.assertEqual(
            [name for name in inspect.signature(get_tor).parameters
             if not name.startswith("_")],
            ["reactor", "launch_tor", "tor_control_port", "timing", "stderr"])
        defaults = {name: p.default for name, p in inspect.signature(get_tor).parameters.items()}
        self.assertEqual((defaults["launch_tor"], defaults["tor_control_port"],
                          defaults["timing"]), (False, None, None))

    def test_python_m_wormhole(self):
        """``python -m wormhole --version`` runs the CLI and names this
        implementation."""
        out = subprocess.run([sys.executable, "-m", "wormhole", "--version"],
                             capture_output=True, text=True, check=True)
        self.assertRegex(out.stdout, r"^wormhole \d+\.\d+\.\d+ \(wormhole-twisted\)")

    def test_no_import_time_side_effects(self):
        """Importing the library's public modules installs no reactor and
        changes no environment variable."""
        code = ("import os, sys\n"
                "before = dict(os.environ)\n"
                "import wormhole, wormhole.wormhole, wormhole.transit, wormhole.xfer_util\n"
                "import wormhole.cli.cli, wormhole.eventual, wormhole.observer\n"
                "import wormhole.ipaddrs, wormhole.util, wormhole.tor_manager\n"
                "import wormhole._dilation.manager, wormhole.testing\n"
                "print('twisted.internet.reactor' in sys.modules, dict(os.environ) == before)\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        self.assertEqual(out.stdout.strip(), "False True")


class TransitAPI(unittest.TestCase):
    def test_allocate_tcp_port(self):
        """allocate_tcp_port() gives a port on 127.0.0.1 that can be
        listened on at once."""
        port = allocate_tcp_port()
        p = reactor.listenTCP(port, protocol.Factory(), interface="127.0.0.1")
        return p.stopListening()

    def test_there_can_be_only_one(self):
        """The first success wins and the others are cancelled; all
        failing gives the first failure; an empty race is refused."""
        cancelled = []
        a, b = defer.Deferred(), defer.Deferred(lambda d: cancelled.append(d))
        race = there_can_be_only_one([a, b])
        a.callback("a")
        self.assertEqual(self.successResultOf(race), "a")
        self.assertEqual(cancelled, [b])
        a, b = defer.Deferred(), defer.Deferred()
        race = there_can_be_only_one([a, b])
        b.errback(KeyError("b"))
        a.errback(ValueError("a"))
        self.failureResultOf(race, KeyError)
        self.assertRaises(ValueError, there_can_be_only_one, [])

    def test_error_types(self):
        """The reference's Transit exception names: TransitClosed and
        BadNonce are TransitErrors, BadHandshake is not."""
        self.assertTrue(issubclass(TransitClosed, TransitError))
        self.assertTrue(issubclass(BadNonce, TransitError))
        self.assertFalse(issubclass(BadHandshake, TransitError))

    def test_file_consumer(self):
        """FileConsumer writes each record, reports its length to progress
        and feeds the hasher."""
        f = io.BytesIO()
        progress = []
        h = hashlib.sha256()
        fc = FileConsumer(f, progress.append, h.update)
        fc.registerProducer(object(), True)
        self.assertRaises(RuntimeError, fc.registerProducer, object(), True)
        fc.write(b"abc")
        fc.write(b"de")
        fc.unregisterProducer()
        self.assertEqual(f.getvalue(), b"abcde")
        self.assertEqual(progress, [3, 2])
        self.assertEqual(h.digest(), hashlib.sha256(b"abcde").digest())

    def test_write_to_file(self):
        """pipe.writeToFile(f, expected, progress, hasher) fills the file
        from the records and fires once ``expected`` bytes arrived."""
        from zope.interface import implementer

        from wormhole._transit._interfaces import ITransitConnection
        from wormhole._transit._pipe import RecordPipe

        @implementer(ITransitConnection)
        class Connection:
            max_record = None

            def close(self):
                pass

            def set_max_record(self, max_record):
                self.max_record = max_record

        class Transport:
            def pauseProducing(self):
                pass

            def resumeProducing(self):
                pass

        connection = Connection()
        pipe = RecordPipe(connection, Transport(), "test")
        f = io.BytesIO()
        progress = []
        d = pipe.writeToFile(f, 5, progress.append)
        # no record longer than what is still expected (docs/security.md)
        self.assertEqual(connection.max_record, 5)
        pipe.records_received([b"abc"])
        self.assertNoResult(d)
        pipe.records_received([b"de", b"after"])
        self.assertIsInstance(self.successResultOf(d), FileConsumer)
        self.assertEqual(f.getvalue(), b"abcde")
        self.assertEqual(progress, [3, 2])
        self.assertEqual(self.successResultOf(pipe.receive_record()), b"after")

    def test_reactor_looked_up_lazily(self):
        """A Transit made without a reactor uses the global one, looked up
        at construction, not at import."""
        from wormhole.transit import TransitSender
        t = TransitSender(None, no_listen=True)
        self.assertIs(t._reactor, reactor)


class CreateOrder(unittest.TestCase):
    def test_reference_positional_order(self):
        """create(appid, relay_url, reactor, versions, delegate, ...) takes
        the reference 0.24's positional order."""
        from twisted.internet.testing import MemoryReactorClock

        import wormhole
        from wormhole.wormhole import DeferredWormhole, DelegatedWormhole
        clock = MemoryReactorClock()
        w = wormhole.create("appid", "ws://127.0.0.1:1/v1", clock, {"v": 1})
        self.assertIsInstance(w, DeferredWormhole)
        self.assertEqual(w._boss._K._versions, {"v": 1})

        class Delegate:
            pass
        w2 = wormhole.create("appid", "ws://127.0.0.1:1/v1", clock, {}, Delegate())
        self.assertIsInstance(w2, DelegatedWormhole)
