"""The sans-I/O model of nameplates and mailboxes (Mailbox server protocol), no reactor."""

import random

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole_mailbox._interfaces import IAppNamespace, IChannelStore
from wormhole_mailbox._limits import Limits
from wormhole_mailbox._model import AppNamespace, CrowdedError, Model, ModelError, ReclaimedError

from ...server._fakes import Listener, RecordingStore, RecordingUsage


class Base(unittest.TestCase):
    def setUp(self):
        self.store = RecordingStore()
        self.usage = RecordingUsage()
        self.limits = Limits()
        self.app = AppNamespace("appid", self.store, self.usage,
                                random.Random(1), self.limits)

    def results(self):
        return [(r["kind"], r["result"]) for r in self.usage.records]


class Nameplates(Base):
    def test_interfaces(self):
        """The namespace and the fakes provide their interfaces."""
        verifyObject(IAppNamespace, self.app)
        verifyObject(IChannelStore, self.store)

    def test_allocate_shortest(self):
        """allocate picks a one-digit nameplate while any is free, then
        two digits; every allocated nameplate is distinct."""
        names = [self.app.allocate(f"side{i}", 0) for i in range(9)]
        self.assertEqual(sorted(names), [str(i) for i in range(1, 10)])
        self.assertEqual(len(self.app.allocate("x", 0)), 2)

    def test_allocate_random(self):
        """Among the free nameplates of the shortest length the choice is
        random (not always the lowest)."""
        seen = set()
        for seed in range(20):
            app = AppNamespace("a", RecordingStore(), RecordingUsage(),
                               random.Random(seed), self.limits)
            seen.add(app.allocate("s", 0))
        self.assertGreater(len(seen), 3)

    def test_claim_same_mailbox(self):
        """Two sides claiming one nameplate get the same mailbox id; a side
        claiming twice counts once."""
        m1 = self.app.claim("4", "a", 1)
        m2 = self.app.claim("4", "b", 2)
        m3 = self.app.claim("4", "a", 3)
        self.assertEqual(m1, m2)
        self.assertEqual(m1, m3)
        self.assertEqual(len(m1), 13)
        self.assertEqual(self.app.list_nameplate_ids(), ["4"])

    def test_crowded(self):
        """A third side gets CrowdedError and the nameplate's usage record
        says crowded."""
        self.app.claim("4", "a", 1)
        self.app.claim("4", "b", 2)
        e = self.assertRaises(CrowdedError, self.app.claim, "4", "c", 3)
        self.assertEqual(str(e), "crowded")
        self.app.release("4", "a", 4)
        self.app.release("4", "b", 5)
        self.assertIn(("nameplate", "crowded"), self.results())

    def test_release_by_a_side_turned_away_as_crowded(self):
        """The third side, refused as crowded, may release the nameplate it
        asked for: a no-op that leaves the two real claims in place (the
        reference answers such a release with `released`). A side that never
        asked is still refused."""
        self.app.claim("4", "a", 1)
        self.app.claim("4", "b", 2)
        self.assertRaises(CrowdedError, self.app.claim, "4", "c", 3)
        self.app.release("4", "c", 4)
        self.assertEqual(self.app.list_nameplate_ids(), ["4"])
        self.assertEqual(self.app.claim("4", "a", 5), self.app.claim("4", "b", 5))
        self.assertRaises(ModelError, self.app.release, "4", "d", 6)

    def test_reclaimed(self):
        """Claiming again after releasing (while the other side still holds
        the nameplate) is refused as reclaimed."""
        self.app.claim("4", "a", 1)
        self.app.claim("4", "b", 1)
        self.app.release("4", "a", 2)
        self.assertRaises(ReclaimedError, self.app.claim, "4", "a", 3)

    def test_release_deletes(self):
        """The nameplate goes when the last claim is released; its record
        has started, waiting and total times."""
        self.app.claim("4", "a", 10)
        self.app.claim("4", "b", 13)
        self.app.release("4", "a", 15)
        self.assertEqual(self.app.list_nameplate_ids(), ["4"])
        self.app.release("4", "b", 20)
        self.assertEqual(self.app.list_nameplate_ids(), [])
        (rec,) = [r for r in self.usage.records if r["kind"] == "nameplate"]
        self.assertEqual((rec["started"], rec["waiting_time"],
                          rec["total_time"], rec["result"]),
                         (10, 3, 10, "happy"))

    def test_release_unknown_is_noop(self):
        """Releasing a nameplate that is gone is accepted (a repeat after a
        reconnection); releasing someone else's is an error."""
        self.app.release("77", "a", 1)
        self.app.claim("5", "b", 1)
        self.assertRaises(ModelError, self.app.release, "5", "zz", 2)

    def test_lonely_nameplate(self):
        """One side that came and went: lonely."""
        self.app.claim("4", "a", 1)
        self.app.release("4", "a", 2)
        self.assertEqual(self.results(), [("nameplate", "lonely")])


class Mailboxes(Base):
    def test_open_add_fanout(self):
        """add stores the message and delivers it to every listener,
        including the sender's; a later open gets the old messages."""
        la, lb = Listener(), Listener()
        self.assertEqual(self.app.open("mb", "a", la, 1), [])
        self.app.add("mb", "a", "pake", "aa", 1.5, "id1", 2)
        old = self.app.open("mb", "b", lb, 3)
        self.assertEqual([(m.side, m.phase, m.body, m.msg_id) for m in old],
                         [("a", "pake", "aa", "id1")])
        self.app.add("mb", "b", "pake", "bb", 3.5, "id2", 4)
        self.assertEqual(la.got, [("a", "pake", "aa"), ("b", "pake", "bb")])
        self.assertEqual(lb.got, [("b", "pake", "bb")])

    def test_close_moods(self):
        """The mailbox goes when both sides closed; the worst mood wins."""
        for moods, result in [(("happy", "happy"), "happy"),
                              (("happy", "scary"), "scary"),
                              (("errory", "scary"), "errory"),
                              (("lonely", "happy"), "lonely")]:
            self.usage.records = []
            self.app.open("mb", "a", Listener(), 1)
            self.app.open("mb", "b", Listener(), 2)
            self.app.close("mb", "a", moods[0], 3)
            self.assertIn("mb", self.app.mailboxes)
            self.app.close("mb", "b", moods[1], 4)
            self.assertNotIn("mb", self.app.mailboxes)
            self.assertEqual(self.results(), [("mailbox", result)])

    def test_mailbox_crowded(self):
        """A third side opening the mailbox is refused; the record says
        crowded."""
        self.app.open("mb", "a", Listener(), 1)
        self.app.open("mb", "b", Listener(), 1)
        self.assertRaises(CrowdedError, self.app.open, "mb", "c", Listener(),
                          2)
        self.app.close("mb", "a", "happy", 3)
        self.app.close("mb", "b", "happy", 3)
        self.assertEqual(self.results(), [("mailbox", "crowded")])

    def test_add_needs_open_side(self):
        """Only a side that opened the mailbox may add to it; a gone
        mailbox refuses adds."""
        self.app.open("mb", "a", Listener(), 1)
        self.assertRaises(ModelError, self.app.add, "mb", "zz", "p", "00",
                          1, None, 1)
        self.assertRaises(ModelError, self.app.add, "nope", "a", "p", "00",
                          1, None, 1)

    def test_message_limit(self):
        """A mailbox holds at most max_messages_per_mailbox messages."""
        app = AppNamespace("a", self.store, self.usage, random.Random(1),
                           Limits(max_messages_per_mailbox=3))
        app.open("mb", "a", Listener(), 1)
        for i in range(3):
            app.add("mb", "a", str(i), "00", 1, None, 1)
        e = self.assertRaises(ModelError, app.add, "mb", "a", "3", "00", 1,
                              None, 1)
        self.assertIn("mailbox is full", str(e))

    def test_byte_limit(self):
        """A mailbox holds at most max_bytes_per_mailbox bytes of bodies,
        however few the messages; a body that fits still goes in."""
        app = AppNamespace("a", self.store, self.usage, random.Random(1),
                           Limits(max_bytes_per_mailbox=10))
        app.open("mb", "a", Listener(), 1)
        app.add("mb", "a", "0", "00" * 4, 1, None, 1)
        e = self.assertRaises(ModelError, app.add, "mb", "a", "1", "00" * 2, 1, None, 1)
        self.assertIn("10 bytes", str(e))
        app.add("mb", "a", "2", "00", 1, None, 1)  # 8 + 2 = 10: fits

    def test_stop_listening(self):
        """A listener that left gets no more messages; the side stays."""
        la = Listener()
        self.app.open("mb", "a", la, 1)
        self.app.open("mb", "b", Listener(), 1)
        self.app.stop_listening("mb", la)
        self.app.add("mb", "b", "p", "00", 1, None, 1)
        self.assertEqual(la.got, [])
        self.assertIn("a", self.app.mailboxes["mb"].sides)

    def test_store_ops(self):
        """Each change is reported to the store, deletions included."""
        self.app.claim("4", "a", 1)
        mb = self.app.claim("4", "b", 1)
        self.app.open(mb, "a", Listener(), 1)
        self.app.add(mb, "a", "p", "00", 1, None, 1)
        self.app.close(mb, "a", "happy", 2)
        self.app.release("4", "a", 2)
        self.app.release("4", "b", 2)
        verbs = [op[0] for op in self.store.ops]
        self.assertEqual(verbs.count("INSERT"), 9)
        self.assertIn("DELETE", verbs)


class Pruning(Base):
    def test_prune_idle(self):
        """Idle objects nobody listens to are pruned with result pruney;
        ones with a listener or recent activity stay."""
        self.app.claim("4", "a", 0)
        mb = self.app.claim("5", "a", 0)
        self.app.open(mb, "a", Listener(), 0)
        self.app.open("fresh", "a", None, 100)
        removed = self.app.prune(200, older_than=50)
        self.assertEqual(removed, 2)  # nameplate 4 and its mailbox
        self.assertEqual(sorted(self.app.list_nameplate_ids()), ["5"])
        self.assertIn(mb, self.app.mailboxes)
        self.assertIn("fresh", self.app.mailboxes)
        self.assertEqual(sorted(self.results()),
                         [("mailbox", "pruney"), ("nameplate", "pruney")])

    def test_model_drops_empty_apps(self):
        """Model.prune forgets AppIDs with nothing left."""
        model = Model(self.store, self.usage, random.Random(1), self.limits)
        model.app("x").claim("4", "a", 0)
        model.prune(100, older_than=50)
        self.assertEqual(model.apps, {})

    def test_restore(self):
        """Model.restore rebuilds nameplates, sides, mailboxes, messages."""
        model = Model(self.store, self.usage, random.Random(1), self.limits)
        rows = {
            "nameplates": [("app", "4", "mb", 1.0)],
            "nameplate_sides": [("app", "4", "a", 1, 1.0)],
            "mailboxes": [("app", "mb", 1, 1.0)],
            "mailbox_sides": [("app", "mb", "a", 1, 1.0, None)],
            "messages": [("app", "mb", "a", "pake", "aa", 1.0, "i")],
        }
        model.restore(rows, 5.0)
        app = model.app("app")
        self.assertEqual(app.claim("4", "b", 6), "mb")
        old = app.open("mb", "b", Listener(), 6)
        self.assertEqual([(m.phase, m.body) for m in old], [("pake", "aa")])
