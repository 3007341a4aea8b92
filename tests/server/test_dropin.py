"""Our Mailbox server replaces a running reference server (0.8) on its own
databases, and the reference replaces ours: real `wormhole` transfers
through each, a transfer in progress carried across the swap, and the
reference's munin plugins (from its source distribution, run by its python)
reading our usage database."""

import os
import sqlite3

from twisted.internet import defer, reactor

from .._munin import our_plugin, run_plugin
from .._processes import reference_source_file
from ..interop.harness import (
    InteropTestCase,
    TwistdMailboxServer,
    mailbox_moods,
    our_cli_argv,
    our_twistd,
    ref_bin,
    ref_cli_argv,
)


def _count(path, sql):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchone()[0]
    finally:
        db.close()


class DropIn(InteropTestCase):
    @defer.inlineCallbacks
    def munin(self, plugin, server, ours=False):
        """Run one of the reference's munin plugins (or ours) on
        ``server``'s databases; returns {field: value} (ours: by graph)."""
        env = {"usagedb": server.usage_db,
               "channeldb": os.path.join(server.basedir, "channel.sqlite")}
        if ours:
            graphs = yield run_plugin(self, our_plugin(plugin), env)
            return graphs
        path = reference_source_file("magic_wormhole_mailbox_server",
                                     "misc", "munin", plugin)
        graphs = yield run_plugin(self, path, env, python=ref_bin("python"))
        return graphs[None]

    @defer.inlineCallbacks
    def wait_for_mailboxes(self, server, n):
        rows = yield self.wait_for_moods(
            server, lambda rows: len(mailbox_moods(rows)) >= n)
        self.assertEqual(mailbox_moods(rows), ["happy"] * n)

    @defer.inlineCallbacks
    def test_reference_then_ours_then_reference(self):
        """The reference server serves a transfer and holds a second one
        half-way (the sender waiting); ours, started on the same port and
        databases, completes that transfer and serves another; the
        reference's munin plugins read the counts those transfers imply;
        the reference, started again on the same files, serves one more."""
        ref = yield self.start_ref_server()
        yield self.exchange_text(ref.url, ref_cli_argv, ref_cli_argv, "one",
                                 code="4-purple-sausages")
        yield self.wait_for_mailboxes(ref, 1)

        channel = os.path.join(ref.basedir, "channel.sqlite")
        sender = self.spawn(ref_cli_argv(ref.url, "send", "--text", "two",
                                         "--code", "5-purple-sausages"),
                            "waiting sender")
        # the sender's PAKE message is in the reference's channel database
        yield self.poll_until(
            lambda: os.path.exists(channel) and _count(
                channel, "SELECT COUNT(*) FROM messages") >= 1,
            "the sender's first message in the reference's database")
        yield ref.stop()

        ours = yield TwistdMailboxServer.start(
            self, reactor, our_twistd(), "our mailbox server", port=ref.port,
            basedir=ref.basedir)
        receiver = self.spawn(our_cli_argv(ours.url, "receive",
                                           "5-purple-sausages"), "receiver")
        yield self.wait_all([sender, receiver])
        self.assertIn(b"two", receiver.stdout)
        yield self.wait_for_mailboxes(ours, 2)
        yield self.exchange_text(ours.url, our_cli_argv, our_cli_argv,
                                 "three", code="6-purple-sausages")
        yield self.wait_for_mailboxes(ours, 3)

        alltime = yield self.munin("wormhole_events_alltime", ours)
        self.assertEqual((alltime["happy"], alltime["total"],
                          alltime["scary"]), (3, 3, 0))
        # since our start: the third transfer (the second one's mailbox
        # was made before it, under the reference)
        since = yield self.munin("wormhole_events", ours)
        self.assertEqual((since["happy"], since["total"]), (1, 1))
        active = yield self.munin("wormhole_active", ours)
        self.assertEqual(active, {"nameplates": 0, "mailboxes": 0,
                                  "messages": 0})
        # our own plugin reads the same: one happy mailbox since our start
        graphs = yield self.munin("wormhole_mailbox", ours, ours=True)
        self.assertEqual(graphs["wormhole_mailbox_results"], {
            "happy": 1, "lonely": 0, "scary": 0, "errory": 0, "pruney": 0,
            "crowded": 0})
        self.assertEqual(graphs["wormhole_mailbox_active"], active)
        # one bind per client connection: 2 (first transfer) + the waiting
        # sender's 2 (once on each server) + its receiver + 2 (third)
        self.assertEqual(_count(ours.usage_db,
                                "SELECT COUNT(*) FROM client_versions"), 7)
        yield ours.stop()

        ref2 = yield self.start_ref_server(port=ours.port,
                                           basedir=ours.basedir)
        yield self.exchange_text(ref2.url, ref_cli_argv, ref_cli_argv,
                                 "four", code="7-purple-sausages")
        yield self.wait_for_mailboxes(ref2, 4)
