"""`twistd wormhole-mailbox`: the reference's options, kept and meaning the
same; our additions."""

import os
import re
import subprocess

from twisted.application.service import IService
from twisted.internet.testing import MemoryReactorClock
from twisted.python import usage
from twisted.trial import unittest

from wormhole_mailbox._plugin import Options, makeService

from ._subprocess import TWISTD


def _reference_venv():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    return os.environ.get("WORMHOLE_REFERENCE_VENV",
                          os.path.join(root, ".venv-ref"))


def _option_names(help_text):
    return set(re.findall(r"--([a-z][a-z-]+)", help_text))


class PluginOptions(unittest.TestCase):
    def test_reference_options_kept(self):
        """Every option the reference's plugin has, ours has too (compared
        with the reference's own --help, run as a subprocess)."""
        ref = subprocess.run(
            [os.path.join(_reference_venv(), "bin", "twistd"),
             "wormhole-mailbox", "--help"],
            capture_output=True, text=True, check=True).stdout
        ours = subprocess.run([TWISTD, "wormhole-mailbox", "--help"],
                              capture_output=True, text=True,
                              check=True).stdout
        theirs = _option_names(ref)
        self.assertIn("websocket-protocol-option", theirs)
        self.assertEqual(theirs - _option_names(ours), set())

    def test_parse_all(self):
        """All reference options parse with their meaning."""
        o = Options()
        o.parseOptions([
            "--port=tcp:4000:interface=127.0.0.1", "--channel-db=c.sqlite",
            "--usage-db=u.sqlite", "--motd=hi", "--signal-error=go away",
            "--advertise-version=1.2", "--disallow-list",
            "--blur-usage=3600", "--log-fd=7",
            "--websocket-protocol-option=autoPingInterval=60",
            "--websocket-protocol-option=autoPingTimeout=120",
        ])
        self.assertEqual(o["port"], "tcp:4000:interface=127.0.0.1")
        self.assertEqual((o["channel-db"], o["usage-db"]),
                         ("c.sqlite", "u.sqlite"))
        self.assertEqual(o["blur-usage"], 3600)
        self.assertEqual(o["log-fd"], 7)
        self.assertEqual(o["websocket-protocol-options"],
                         [("autoPingInterval", 60), ("autoPingTimeout", 120)])

    def test_defaults(self):
        """The reference's defaults: port tcp:4000 on every interface,
        relay.sqlite; list is on unless --disallow-list (as the reference)."""
        o = Options()
        o.parseOptions([])
        self.assertEqual(o["port"], r"tcp:4000:interface=\:\:")
        self.assertEqual(o["channel-db"], "relay.sqlite")
        self.assertFalse(o["disallow-list"])
        svc = makeService(o, reactor=MemoryReactorClock())
        mailbox = list(svc)[1].factory.mailbox
        self.assertTrue(mailbox.ctx.allow_list)
        return mailbox.stop()

    def test_disallow_list(self):
        """--disallow-list turns listing off; --allow-list (the old way to
        turn it on) is still accepted and changes nothing."""
        for args, allowed in [(["--disallow-list"], False), (["--allow-list"], True)]:
            o = Options()
            o.parseOptions([f"--channel-db={os.path.abspath(self.mktemp())}"] + args)
            mailbox = list(makeService(o, reactor=MemoryReactorClock()))[1].factory.mailbox
            self.assertEqual(mailbox.ctx.allow_list, allowed, args)
            mailbox.stop()

    def test_contradiction(self):
        """--allow-list with --disallow-list is refused."""
        self.assertRaises(usage.UsageError, Options().parseOptions,
                          ["--allow-list", "--disallow-list"])

    def test_bad_permissions(self):
        """--permissions must name known methods."""
        for bad in ["hashcash", "hashcash:x", "magic", "hashcash:99"]:
            self.assertRaises(usage.UsageError, Options().parseOptions,
                              [f"--permissions={bad}"])

    def test_bad_websocket_option(self):
        """--websocket-protocol-option needs OPTION=VALUE."""
        self.assertRaises(usage.UsageError, Options().parseOptions,
                          ["--websocket-protocol-option=nonsense"])

    def test_make_service(self):
        """makeService builds a service whose factory carries the options
        and limits."""
        o = Options()
        db = os.path.abspath(self.mktemp())
        o.parseOptions([f"--channel-db={db}", "--allow-list",
                        "--max-message-size=5000", "--motd=m",
                        "--websocket-protocol-option=autoPingInterval=60"])
        svc = makeService(o, reactor=MemoryReactorClock())
        self.assertTrue(IService.providedBy(svc))
        services = list(svc)
        factory = services[1].factory
        self.assertEqual(factory.autoPingInterval, 60)
        self.assertEqual(factory.mailbox.limits.max_message_size, 5000)
        self.assertTrue(factory.mailbox.ctx.allow_list)
        self.assertEqual(factory.mailbox.ctx.welcome, {"motd": "m"})
        # the listen queue of the relay (1024), not Twisted's 50: a burst
        # of 500 pairs connecting at once fits (docs/performance.md)
        self.assertEqual(services[1].endpoint._backlog, 1024)
        return factory.mailbox.stop()
