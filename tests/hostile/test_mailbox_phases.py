"""A peer with the code adding phase after phase through a Mailbox server
that does not bound a mailbox (the reference's; here the in-memory
FakeServer, which keeps everything too), against our client (issue 11;
docs/security.md "Mailbox client"): the phases we remember to drop repeats
stay bounded, and the wormhole ends with PhaseOverflow."""

from twisted.internet.task import Clock
from twisted.trial import unittest

import wormhole
from wormhole import errors
from wormhole._mailbox import MAX_PROCESSED

from ..client.fakes import FakeServer

URL = "ws://127.0.0.1:4000/v1"
APPID = "example.com/hostile"


class PhaseFlood(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.server = FakeServer(self.clock)

    def create(self, **kwargs):
        return wormhole.create(APPID, URL, self.clock,
                               _endpoint_factory=self.server.endpoint_factory, **kwargs)

    def test_dilate_phases_without_end(self):
        """The peer sends 2000 ``dilate-N`` phases (the route Dilation's own
        messages take, which an application that never dilates ignores)
        to a victim that remembers 500: the victim closes with mood
        ``errory`` and PhaseOverflow naming the limit, which the
        application sees from get_message() and close(); the record holds
        500 phases, not 2000, while the server kept all 2000."""
        self.assertEqual(MAX_PROCESSED, 100_000)
        victim = self.create(_max_phases=500)
        peer = self.create()
        victim.set_code("5-a-b")
        peer.set_code("5-a-b")
        versions = victim.get_versions()
        self.server.pump()
        self.successResultOf(versions)
        pending = victim.get_message()
        for n in range(2000):
            peer._boss.send_dilate_phase(f"dilate-{n}", b'{"type": "x"}')
            if n % 100 == 99:
                self.server.pump()
        self.server.pump()
        err = self.failureResultOf(pending, errors.PhaseOverflow).value
        self.assertEqual(str(err), (
            "the peer sent more than 500 distinct phases (the last was 'dilate-498'); "
            "the limit is 500 (docs/security.md)"))
        # pake and version are two of the 500
        self.assertEqual(len(victim._boss._M._processed), 500)
        [mailbox] = self.server.mailboxes.values()
        self.assertEqual(len([m for m in mailbox["messages"]
                              if m["phase"].startswith("dilate-")]), 2000)
        self.assertIn((victim._boss._side, "errory"), self.server.moods)
        closed = victim.close()
        self.server.pump()
        self.assertIs(self.failureResultOf(closed, errors.PhaseOverflow).value, err)
        peer.close()
        self.server.pump()
