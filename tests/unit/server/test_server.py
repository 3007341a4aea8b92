"""The wiring: the sweeper enforces timeouts, the pruner expires objects."""

import random

from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole_mailbox._limits import Limits
from wormhole_mailbox.server import build_mailbox

from ...server._fakes import FakeGlue, Listener


class Timers(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.clock.advance(10000)

    def build(self, **limits):
        mailbox = build_mailbox(self.clock, rng=random.Random(3),
                                keep_usage=None, limits=Limits(**limits))
        mailbox.start()
        self.addCleanup(mailbox.stop)
        return mailbox

    def test_sweeper_bind_timeout(self):
        """An unbound connection is closed by the periodic sweep once the
        bind timeout passed."""
        mailbox = self.build(bind_timeout=10)
        glue = FakeGlue()
        mailbox.connection_for(glue).connected()
        self.clock.advance(5)
        self.assertIsNone(glue.dropped)
        for _ in range(10):
            self.clock.advance(2.5)
        self.assertEqual(glue.dropped[0], 1008)

    def test_pruning(self):
        """An unattended nameplate and mailbox are pruned after
        channel_expiration, with usage result pruney; a listened-to
        mailbox stays."""
        mailbox = self.build(channel_expiration=100, prune_interval=10)
        app = mailbox.model.app("app")
        app.claim("4", "a", self.clock.seconds())
        mb = app.claim("5", "a", self.clock.seconds())
        app.open(mb, "a", Listener(), self.clock.seconds())
        self.clock.advance(50)
        self.assertEqual(mailbox.usage_log.records, type(
            mailbox.usage_log.records)())
        for _ in range(10):
            self.clock.advance(10)
        results = sorted((r["kind"], r["result"])
                         for r in mailbox.usage_log.records)
        self.assertEqual(results, [("mailbox", "pruney"),
                                   ("nameplate", "pruney")])
        self.assertIn(mb, app.mailboxes)
