"""The SQLite store: group commit, outputs held until commit, reload."""

import os
import sqlite3

from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole_mailbox._interfaces import IChannelStore
from wormhole_mailbox._model import Message
from wormhole_mailbox._store import MemoryStore, SQLiteStore


class Store(unittest.TestCase):
    def open(self, path=None, usage=None):
        path = path or os.path.abspath(self.mktemp())
        store = SQLiteStore(reactor, path, usage)
        return store, path

    @inlineCallbacks
    def test_group_commit(self):
        """Every change of one reactor turn goes into one transaction, and
        the outputs queued behind them leave only after it, in order."""
        store, path = self.open()
        verifyObject(IChannelStore, store)
        verifyObject(IChannelStore, MemoryStore())
        out = []
        store.mailbox_created("app", "mb", True, 1.0)
        for i in range(100):
            store.message_added("app", "mb", Message("a", str(i), "00", 1.0,
                                                     None))
            store.after_commit(out.append, i)
        self.assertEqual(out, [])
        done = Deferred()
        store.after_commit(done.callback, None)
        yield done
        self.assertEqual(out, list(range(100)))
        self.assertEqual(store.commits, 1)
        yield store.close()
        db = sqlite3.connect(path)
        self.assertEqual(db.execute("SELECT COUNT(*) FROM messages")
                         .fetchone()[0], 100)
        db.close()

    @inlineCallbacks
    def test_idle_output_immediate(self):
        """With nothing pending an output leaves at once."""
        store, _ = self.open()
        out = []
        store.after_commit(out.append, 1)
        self.assertEqual(out, [1])
        yield store.close()

    @inlineCallbacks
    def test_changes_during_commit(self):
        """Changes made while a batch commits go into the next batch; their
        outputs wait for that one."""
        store, _ = self.open()
        out = []
        store.nameplate_created("app", "1", "mb", 1.0)
        store.after_commit(out.append, "first")
        yield deferLater0()
        # the first batch is on the worker thread now
        store.nameplate_created("app", "2", "mb2", 1.0)
        store.after_commit(out.append, "second")
        done = Deferred()
        store.after_commit(done.callback, None)
        yield done
        self.assertEqual(out, ["first", "second"])
        self.assertEqual(store.commits, 2)
        yield store.close()

    @inlineCallbacks
    def test_reload(self):
        """What was committed is loaded by a new store on the same file;
        deletions are gone."""
        store, path = self.open()
        store.nameplate_created("app", "4", "mb", 1.0)
        store.nameplate_side("app", "4", "a", True, 1.0)
        store.mailbox_created("app", "mb", True, 1.0)
        store.mailbox_side("app", "mb", "a", True, 1.0, None)
        store.message_added("app", "mb", Message("a", "pake", "aa", 2.0,
                                                 "i1"))
        store.mailbox_created("app", "gone", False, 1.0)
        store.mailbox_deleted("app", "gone")
        yield store.close()
        store2, _ = self.open(path)
        rows = store2.load()
        self.assertEqual(rows["nameplates"], [("app", "4", "mb", 1.0)])
        self.assertEqual(rows["mailboxes"], [("app", "mb", 1, 1.0)])
        self.assertEqual(rows["messages"],
                         [("app", "mb", "a", "pake", "aa", 2.0, "i1")])
        yield store2.close()

    @inlineCallbacks
    def test_usage_db(self):
        """Usage records go to the --usage-db file in the same batches, a
        mailbox's into the reference's `mailboxes` table."""
        usage = os.path.abspath(self.mktemp())
        store, _ = self.open(usage=usage)
        store.usage_added({"kind": "mailbox", "app_id": "a", "started": 1.0,
                           "waiting_time": None, "total_time": 2.0,
                           "result": "happy"})
        yield store.close()
        db = sqlite3.connect(usage)
        self.assertEqual(db.execute("SELECT app_id, result FROM mailboxes")
                         .fetchall(), [("a", "happy")])
        db.close()


def deferLater0():
    from twisted.internet.task import deferLater
    return deferLater(reactor, 0, lambda: None)
