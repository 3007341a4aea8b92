"""The CLI's --tor path (Tor support): get_tor runs before the
command with the options given, its manager reaches create() and Transit,
a Tor we launched is stopped after the command, and no Tor is one clear
line and exit 1."""

import io

from twisted.internet import defer
from twisted.internet.testing import MemoryReactorClock
from twisted.trial import unittest
from zope.interface import implementer

from wormhole._interfaces import ITorManager
from wormhole.cli import _common, cli
from wormhole.cli._config import Config
from wormhole.tor_manager import TorError


@implementer(ITorManager)
class RecordingTor:
    def __init__(self, events):
        self.events = events

    def stream_via(self, host, port, tls=False):
        raise AssertionError("not dialled in these tests")

    def quit(self):
        self.events.append("quit")
        return defer.succeed(None)


class WithTor(unittest.TestCase):
    def setUp(self):
        self.events = []
        self.stderr = io.StringIO()

    def config(self, result=None, **kwargs):
        def get_tor(reactor, **kw):
            self.events.append(("get_tor", kw["launch_tor"], kw["tor_control_port"]))
            if result is not None:
                return defer.fail(result)
            return defer.succeed(RecordingTor(self.events))
        return Config(get_tor=get_tor, stderr=self.stderr, **kwargs)

    def test_tor_before_command_and_quit_after(self):
        """get_tor gets the options, the command sees the manager, and
        quit() comes after the command finished."""
        cfg = self.config(tor=True, launch_tor=True)

        def command(reactor, cfg):
            self.events.append(("command", cfg.tor_manager is not None))
            return defer.succeed("done")
        d = cli._main(MemoryReactorClock(), command, cfg)
        self.assertEqual(self.successResultOf(d), "done")
        self.assertEqual(self.events, [("get_tor", True, None), ("command", True), "quit"])

    def test_no_tor_without_the_option(self):
        """Without --tor, get_tor is never called."""
        cfg = self.config()
        d = cli._main(MemoryReactorClock(), lambda r, c: defer.succeed(None), cfg)
        self.successResultOf(d)
        self.assertEqual(self.events, [])

    def test_no_tor_reachable(self):
        """get_tor fails: the command never runs, one ERROR line, exit 1."""
        cfg = self.config(result=TorError("no running Tor found: ..."), tor=True,
                          tor_control_port="tcp:127.0.0.1:9051")
        d = cli._main(MemoryReactorClock(), lambda r, c: self.fail("ran"), cfg)
        f = self.failureResultOf(d, SystemExit)
        self.assertEqual(f.value.code, 1)
        self.assertEqual(self.stderr.getvalue(), "ERROR: no running Tor found: ...\n")

    def test_manager_reaches_create_and_transit(self):
        """make_wormhole passes tor= to create(); make_transit to Transit."""
        created = []
        tor = RecordingTor(self.events)
        cfg = Config(create=lambda *a, **kw: created.append(kw) or object(),
                     stderr=self.stderr, tor_manager=tor)
        _common.make_wormhole(MemoryReactorClock(), cfg, "send")
        self.assertIs(created[0]["tor"], tor)
        made = []
        _common.make_transit(lambda *a, **kw: made.append(kw), None, cfg)
        self.assertIs(made[0]["tor"], tor)
