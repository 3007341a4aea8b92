"""get_tor's choices and errors (Tor support), against a recording
fake of the txtorcon calls it makes: which Tor it reaches and how, and the
one-line error when none can be reached."""

import io
import os

from twisted.internet import defer
from twisted.internet.error import ConnectionRefusedError
from twisted.internet.testing import MemoryReactorClock
from twisted.python.failure import Failure
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import tor_manager
from wormhole._interfaces import ITorManager
from wormhole.timing import DebugTiming

REAL_IMPORT = tor_manager._import_txtorcon


class FakeTor:
    def __init__(self, events):
        self.events = events

    def stream_via(self, host, port, tls=False):
        self.events.append(("tor.stream_via", host, port, tls))
        return ("endpoint", host, port, tls)

    quit_fails = None  # an exception the control connection's QUIT raises

    def quit(self):
        self.events.append(("tor.quit",))
        if self.quit_fails is not None:
            raise self.quit_fails

    @property
    def process(self):
        events = self.events

        class Process:
            tor_protocol = "control protocol"

            def quit(self):
                events.append(("tor.process.quit",))
        return Process()


class FakeTorConfig:
    def __init__(self):
        self.options = {}

    def __setattr__(self, key, value):
        if key == "options":
            object.__setattr__(self, key, value)
        else:
            self.options[key] = value


class FakeTxtorcon:
    """Records connect/launch/TorClientEndpoint/TorConfig.from_protocol/Tor;
    each answers with the Deferred the test set up (success by default)."""

    def __init__(self):
        self.events = []
        self.connect_result = None  # None: succeed with a FakeTor
        self.launch_result = None
        self.config_results = []  # one per TorConfig.from_protocol; None: success
        fake = self

        class TorConfig(FakeTorConfig):
            @staticmethod
            def from_protocol(protocol):
                fake.events.append(("TorConfig.from_protocol", protocol))
                result = fake.config_results.pop(0) if fake.config_results else None
                return defer.fail(result) if result else defer.succeed(("config", protocol))
        self.TorConfig = TorConfig

    def Tor(self, reactor, protocol, _tor_config=None, _process_proto=None):
        self.events.append(("Tor", protocol, _tor_config))
        return FakeTor(self.events)

    def _answer(self, result):
        if result is None:
            return defer.succeed(FakeTor(self.events))
        return defer.fail(result)

    def connect(self, reactor, control_endpoint=None):
        self.events.append(("connect", control_endpoint))
        return self._answer(self.connect_result)

    def launch(self, reactor, **kwargs):
        self.events.append(("launch", kwargs))
        return self._answer(self.launch_result)

    def TorClientEndpoint(self, host, port, socks_endpoint=None, tls=False, reactor=None):
        self.events.append(("TorClientEndpoint", host, port, socks_endpoint, tls))
        return ("socks endpoint", host, port)

    def TorProtocolFactory(self):
        return "control protocol factory"


class GetTor(unittest.TestCase):
    def setUp(self):
        self.fake = FakeTxtorcon()
        self.patch(tor_manager, "_import_txtorcon", lambda: self.fake)
        self.reactor = MemoryReactorClock()
        self.stderr = io.StringIO()

    def get(self, **kwargs):
        return tor_manager.get_tor(self.reactor, stderr=self.stderr, **kwargs)

    def test_mutually_exclusive(self):
        """launch_tor and tor_control_port together: ValueError, nothing tried."""
        f = self.failureResultOf(self.get(launch_tor=True, tor_control_port="tcp:h:1"))
        self.assertIn("mutually exclusive", str(f.value))
        self.assertEqual(self.fake.events, [])
        self.failureResultOf(self.get(tor_control_port=9051), TypeError)

    def test_control_port(self):
        """tor_control_port: txtorcon.connect on that endpoint; the manager
        streams through that Tor and provides ITorManager."""
        tor = self.successResultOf(self.get(tor_control_port="tcp:127.0.0.1:9051"))
        verifyObject(ITorManager, tor)
        [(name, endpoint)] = self.fake.events
        self.assertEqual(name, "connect")
        self.assertEqual((endpoint._host, endpoint._port), ("127.0.0.1", 9051))
        self.assertEqual(tor.stream_via("example.org", 443, tls=True),
                         ("endpoint", "example.org", 443, True))
        self.assertFalse(tor.launched)
        self.assertIn("control port at tcp:127.0.0.1:9051", self.stderr.getvalue())
        self.successResultOf(tor.quit())  # closes the control connection
        self.assertEqual(self.fake.events[-1], ("tor.quit",))

    def test_quit_answered_by_the_close(self):
        """Tor closing the control connection before its answer to QUIT is
        read (txtorcon's TorDisconnectError) is what QUIT asked for: quit()
        succeeds; any other error of QUIT still fails it."""
        from txtorcon.torcontrolprotocol import TorDisconnectError
        tor = self.successResultOf(self.get(tor_control_port="tcp:127.0.0.1:9051"))
        FakeTor.quit_fails = TorDisconnectError("QUIT", None)
        self.addCleanup(setattr, FakeTor, "quit_fails", None)
        self.successResultOf(tor.quit())
        FakeTor.quit_fails = RuntimeError("something else")
        self.failureResultOf(tor.quit(), RuntimeError)

    def test_control_port_unreachable(self):
        """A control port that does not answer: TorError naming it."""
        self.fake.connect_result = ConnectionRefusedError("refused")
        f = self.failureResultOf(self.get(tor_control_port="tcp:127.0.0.1:9051"),
                                 tor_manager.TorError)
        self.assertIn("cannot use the Tor control port at tcp:127.0.0.1:9051", str(f.value))
        self.assertIn("refused", str(f.value))

    def test_control_port_malformed(self):
        """A control port that is no endpoint description: TorError."""
        f = self.failureResultOf(self.get(tor_control_port="nonsense:1:2"),
                                 tor_manager.TorError)
        self.assertIn("not an endpoint description", str(f.value))
        self.assertEqual(self.fake.events, [])

    def test_default_control_port(self):
        """Neither option: txtorcon.connect at its default places."""
        tor = self.successResultOf(self.get())
        self.assertEqual(self.fake.events, [("connect", None)])
        self.assertEqual(tor.description, "control port")

    def test_default_falls_back_to_socks(self):
        """No control port anywhere but a SOCKS port answers: SOCKS only,
        every stream a TorClientEndpoint through that port."""
        self.fake.connect_result = RuntimeError("Failed to connect to: ...")
        self.patch(tor_manager, "_find_socks",
                   lambda reactor: defer.succeed(("127.0.0.1", 9150)))
        tor = self.successResultOf(self.get())
        self.assertEqual(tor.description, "SOCKS port 127.0.0.1:9150")
        tor.stream_via("example.org", 80)
        name, host, port, socks, tls = self.fake.events[-1]
        self.assertEqual((name, host, port, tls), ("TorClientEndpoint", "example.org", 80, False))
        self.assertEqual((socks._host, socks._port), ("127.0.0.1", 9150))
        self.assertIn("SOCKS port 127.0.0.1:9150 only", self.stderr.getvalue())

    def test_no_tor_at_all(self):
        """Nothing answers: one TorError that says what was tried and what
        to do."""
        self.fake.connect_result = RuntimeError("Failed to connect")
        self.patch(tor_manager, "_find_socks", lambda reactor: defer.succeed(None))
        f = self.failureResultOf(self.get(), tor_manager.TorError)
        for words in ("no running Tor found", "9051", "9050", "--launch-tor"):
            self.assertIn(words, str(f.value))

    def test_no_txtorcon(self):
        """Without txtorcon installed: TorError naming the [tor] extra."""
        import sys
        self.patch(tor_manager, "_import_txtorcon", REAL_IMPORT)
        import txtorcon
        sys.modules["txtorcon"] = None  # "import txtorcon" raises ImportError
        self.addCleanup(sys.modules.__setitem__, "txtorcon", txtorcon)
        f = self.failureResultOf(self.get(), tor_manager.TorError)
        self.assertIn("[tor]", str(f.value))

    def test_launch(self):
        """launch_tor: txtorcon.launch with our tor binary, a private data
        directory, a unix control socket, a timeout, our retrying control
        connection and the extra options; the manager is ours to stop."""
        self.patch(tor_manager.shutil, "which", lambda name, path=None: "/usr/sbin/tor")
        timing = DebugTiming()
        tor = self.successResultOf(self.get(launch_tor=True, timing=timing,
                                            _launch_options={"TestingTorNetwork": 1}))
        (name, kw), *rest = self.fake.events
        # the configuration is read once Tor bootstrapped, not by txtorcon
        # during the launch
        self.assertEqual(rest, [("TorConfig.from_protocol", "control protocol"),
                                ("Tor", "control protocol", ("config", "control protocol"))])
        self.assertEqual(name, "launch")
        self.assertEqual(kw["tor_binary"], "/usr/sbin/tor")
        self.assertEqual(kw["timeout"], tor_manager.LAUNCH_TIMEOUT)
        self.assertEqual(kw["control_port"],
                         "unix:" + os.path.join(kw["data_directory"], "control.socket"))
        self.assertTrue(callable(kw["connection_creator"]))
        self.assertEqual(kw["_tor_config"].options, {"TestingTorNetwork": 1})
        self.assertIsNone(self.successResultOf(kw["_tor_config"].attach_protocol("proto")))
        self.assertTrue(tor.launched)
        self.successResultOf(tor.quit())
        self.assertEqual(self.fake.events[-1], ("tor.process.quit",))
        self.assertIn("launching a new Tor process", self.stderr.getvalue())
        self.assertEqual([e["name"] for e in timing.events()], ["get_tor"])
        os.rmdir(kw["data_directory"])

    def test_launch_fails(self):
        """A launch that fails (or times out): TorError, directory removed."""
        self.patch(tor_manager.shutil, "which", lambda name, path=None: "/usr/sbin/tor")
        self.fake.launch_result = RuntimeError("timeout while launching Tor")
        f = self.failureResultOf(self.get(launch_tor=True), tor_manager.TorError)
        self.assertIn("Tor did not start: timeout while launching Tor", str(f.value))
        [(_, kw)] = self.fake.events
        self.assertFalse(os.path.exists(kw["data_directory"]))

    def test_config_read_again(self):
        """Reading the launched Tor's configuration failed (txtorcon's setup
        raced Tor: docs/tor.md, "The library"): tried again after CONFIG_INTERVAL, and the
        launch succeeds."""
        self.patch(tor_manager.shutil, "which", lambda name, path=None: "/usr/sbin/tor")
        self.fake.config_results = [TypeError("'NoneType' object is not subscriptable")] * 2
        d = self.get(launch_tor=True)
        for _ in range(2):
            self.assertNoResult(d)
            self.reactor.advance(tor_manager.CONFIG_INTERVAL)
        tor = self.successResultOf(d)
        self.assertEqual([e[0] for e in self.fake.events],
                         ["launch"] + ["TorConfig.from_protocol"] * 3 + ["Tor"])
        self.assertTrue(tor.launched)
        self.successResultOf(tor.quit())
        os.rmdir(self.fake.events[0][1]["data_directory"])

    def test_config_never_read(self):
        """Every try fails: one TorError line saying so, the launched Tor
        stopped, its directory removed; no reactor call left behind."""
        self.patch(tor_manager.shutil, "which", lambda name, path=None: "/usr/sbin/tor")
        self.fake.config_results = [RuntimeError("connection lost")] * tor_manager.CONFIG_TRIES
        d = self.get(launch_tor=True)
        for _ in range(tor_manager.CONFIG_TRIES - 1):
            self.reactor.advance(tor_manager.CONFIG_INTERVAL)
        f = self.failureResultOf(d, tor_manager.TorError)
        self.assertEqual(str(f.value), "--launch-tor: Tor started but its configuration "
                         "could not be read (5 tries): connection lost")
        self.assertEqual(self.fake.events[-1], ("tor.process.quit",))
        self.assertFalse(os.path.exists(self.fake.events[0][1]["data_directory"]))
        self.assertEqual(self.reactor.getDelayedCalls(), [])

    def test_launch_without_tor_binary(self):
        """No tor program: TorError saying to install it."""
        self.patch(tor_manager.shutil, "which", lambda name, path=None: None)
        f = self.failureResultOf(self.get(launch_tor=True), tor_manager.TorError)
        self.assertIn("no 'tor' program", str(f.value))


class RetryingControlConnection(unittest.TestCase):
    def test_retries_until_the_socket_answers(self):
        """The launched Tor's control socket may not exist yet when tor says
        it opened it (txtorcon#349): we try again every
        CONTROL_CONNECT_INTERVAL until it answers."""
        reactor = MemoryReactorClock()
        connect = tor_manager._retrying_control_connection(reactor, FakeTxtorcon(), "/x/s")
        d = connect()
        for attempt in range(3):
            path, factory = reactor.unixClients[attempt][:2]
            self.assertEqual(path, "/x/s")
            factory.clientConnectionFailed(None, Failure(ConnectionRefusedError()))
            self.assertNoResult(d)
            reactor.advance(tor_manager.CONTROL_CONNECT_INTERVAL)
        self.assertEqual(len(reactor.unixClients), 4)

    def test_gives_up(self):
        """After CONTROL_CONNECT_TRIES failures the error is passed on."""
        reactor = MemoryReactorClock()
        connect = tor_manager._retrying_control_connection(reactor, FakeTxtorcon(), "/x/s")
        d = connect()
        for attempt in range(tor_manager.CONTROL_CONNECT_TRIES):
            reactor.unixClients[attempt][1].clientConnectionFailed(
                None, Failure(ConnectionRefusedError()))
            reactor.advance(tor_manager.CONTROL_CONNECT_INTERVAL)
        self.failureResultOf(d, ConnectionRefusedError)


class LaunchedTorExit(unittest.TestCase):
    def test_filter(self):
        """The CLI's error observer drops txtorcon's routine "Tor exited
        with error-code 0" and prints every other error event."""
        from twisted.logger import LogLevel
        out = io.StringIO()
        observer = tor_manager.error_observer_without_tor_exit(out)
        observer({"log_level": LogLevel.critical, "log_format": "x", "log_time": 0,
                  "log_failure": Failure(RuntimeError("Tor exited with error-code 0"))})
        # what txtorcon's log.err(RuntimeError(...)) publishes
        observer({"log_level": LogLevel.critical, "log_time": 0, "isError": 1,
                  "failure": Failure(RuntimeError("Tor exited with error-code 0"))})
        self.assertEqual(out.getvalue(), "")
        observer({"log_level": LogLevel.critical, "log_format": "real trouble",
                  "log_time": 0, "log_failure": Failure(RuntimeError("Tor exited with "
                                                                     "error-code 1"))})
        observer({"log_level": LogLevel.info, "log_format": "chatter", "log_time": 0})
        self.assertIn("real trouble", out.getvalue())
        self.assertNotIn("chatter", out.getvalue())
