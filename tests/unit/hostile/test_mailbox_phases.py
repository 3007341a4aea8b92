"""A peer with the code adding phase after phase through a Mailbox server
that does not bound a mailbox (the reference's; here the in-memory
FakeServer, which keeps everything too), against our client
(docs/security.md, "Mailbox client"): the phases we remember to drop repeats
stay bounded, and the wormhole ends with PhaseOverflow; repeats of one
phase, which the Mailbox machine drops, are not kept by the timing record
without bound either."""

from twisted.internet.task import Clock
from twisted.trial import unittest

import wormhole
from wormhole import errors
from wormhole._mailbox import MAX_PROCESSED
from wormhole.timing import MAX_BYTES, MAX_EVENTS, DebugTiming

from ...client.fakes import FakeServer

URL = "ws://127.0.0.1:4000/v1"
APPID = "example.com/hostile"


class PhaseFlood(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.server = FakeServer(self.clock)

    def create(self, **kwargs):
        return wormhole.create(APPID, URL, self.clock,
                               _endpoint_factory=self.server.endpoint_factory, **kwargs)

    def paired(self, **victim_options):
        """A victim and the hostile peer, with the key and versions
        exchanged."""
        victim = self.create(**victim_options)
        peer = self.create()
        victim.set_code("5-a-b")
        peer.set_code("5-a-b")
        versions = victim.get_versions()
        self.server.pump()
        self.successResultOf(versions)
        return victim, peer

    def test_dilate_phases_without_end(self):
        """The peer sends 2000 ``dilate-N`` phases (the route Dilation's own
        messages take, which an application that never dilates ignores)
        to a victim that remembers 500: the victim closes with mood
        ``errory`` and PhaseOverflow naming the limit, which the
        application sees from get_message() and close(); the record holds
        500 phases, not 2000, while the server kept all 2000."""
        self.assertEqual(MAX_PROCESSED, 100_000)
        victim, peer = self.paired(_max_phases=500)
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

    def test_one_phase_repeated(self):
        """The peer adds one 10 kB phase and the server delivers it 2000
        times (a peer adding it again and again, where the server keeps
        and sends each add): the Mailbox machine drops the repeats, and
        the timing record that ``--dump-timing`` writes (the CLI keeps one
        always) stops keeping them at its byte limit, here 200 kB: the
        bundle ends with one event counting what was dropped."""
        self.assertEqual((MAX_EVENTS, MAX_BYTES), (100_000, 16 * 1024 * 1024))
        timing = DebugTiming(max_bytes=200_000)
        victim, peer = self.paired(timing=timing)
        peer._boss.send_dilate_phase("dilate-0", b"x" * 10000)
        self.server.pump()
        [mailbox] = self.server.mailboxes.values()
        [repeat] = [m for m in mailbox["messages"] if m["phase"] == "dilate-0"]
        [conn] = [c for c in self.server.conns if c.rc is victim._boss._RC]
        kept_before = len(timing.events())
        for n in range(2000):
            self.server._send(conn, repeat)
            if n % 100 == 99:
                self.server.pump()
        self.server.pump()
        self.assertEqual(len(victim._boss._M._processed), 3)  # pake, version, dilate-0
        events = timing.events()
        # each repeat's record holds its 20000 hex digits
        self.assertLess(len(events) - kept_before, 200_000 // 20_000)
        dropped = events[-1]
        self.assertEqual(dropped["name"], "timing records dropped")
        self.assertEqual(dropped["details"]["limits"], {"events": 100_000, "bytes": 200_000})
        self.assertGreater(dropped["details"]["events"], 1990)
        self.assertIs(victim._boss._timing, timing)
        self.close_both(victim, peer)

    def close_both(self, *ws):
        ds = [w.close() for w in ws]
        self.server.pump()
        for d in ds:
            self.assertEqual(self.successResultOf(d), "happy")


class TimingBound(unittest.TestCase):
    def test_events_bounded(self):
        """Past ``max_events`` an event is not kept, though it still times
        its block; the bundle says how many were dropped, once."""
        now = [10.0]
        timing = DebugTiming(clock=lambda: now[0], max_events=3)
        for n in range(5):
            with timing.add("ws_receive", message={"body": "ab" * n}):
                now[0] += 1
        self.assertEqual([e["name"] for e in timing.events()],
                         ["ws_receive"] * 3 + ["timing records dropped"])
        self.assertEqual(timing.events()[-1], {
            "name": "timing records dropped", "start": 15.0, "stop": None,
            "details": {"events": 2, "limits": {"events": 3, "bytes": MAX_BYTES}}})
        self.assertEqual(timing.events()[2]["stop"], 13.0)

    def test_bytes_count_the_text_of_details(self):
        """The byte limit counts the strings of the details, and of a dict
        among them (a server message), plus 200 per event."""
        timing = DebugTiming(max_bytes=1000)
        timing.add("a", message={"body": "x" * 500, "n": 5}, side="s" * 50)  # 750
        timing.add("b", x="y" * 50)   # 250: 1000 in all, kept
        timing.add("c")               # 200 more: dropped
        self.assertEqual([e["name"] for e in timing.events()],
                         ["a", "b", "timing records dropped"])
