"""The per-connection machines, driven with a fake glue and a Clock."""

import datetime
import json
import random

from twisted.internet.task import Clock
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _hashcash
from wormhole_mailbox._connection import Connection, ServerContext
from wormhole_mailbox._interfaces import IConnection, IMailboxListener, ITransportGlue
from wormhole_mailbox._limits import Limits
from wormhole_mailbox._model import Model
from wormhole_mailbox._permissions import NoPermissions, parse_permissions

from ...server._fakes import FakeGlue, RecordingStore, RecordingUsage

T0 = 1_790_000_000  # a fixed "now" (2026-09) for the hashcash dates
NOW = datetime.datetime.fromtimestamp(T0, datetime.timezone.utc)


class Base(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.clock.advance(T0)
        self.store = RecordingStore()
        self.usage = RecordingUsage()
        self.limits = Limits(bind_timeout=60, idle_timeout=600)
        self.model = Model(self.store, self.usage, random.Random(2),
                           self.limits)
        self.policy = NoPermissions()
        self.welcome = {}

    def connect(self):
        ctx = ServerContext(self.clock, self.model, self.store, self.usage,
                            self.policy,
                            self.limits, self.welcome, allow_list=False)
        glue = FakeGlue()
        conn = Connection(ctx, glue)
        conn.connected()
        return conn, glue

    def send(self, conn, **msg):
        conn.received(json.dumps(msg).encode("utf-8"))

    def bound(self, side="aaaa"):
        conn, glue = self.connect()
        self.send(conn, type="bind", appid="app", side=side, id="b")
        glue.pop()
        return conn, glue


class Basics(Base):
    def test_interfaces(self):
        """Connection provides IConnection and IMailboxListener; the fake
        glue provides ITransportGlue."""
        conn, glue = self.connect()
        verifyObject(IConnection, conn)
        verifyObject(IMailboxListener, conn)
        verifyObject(ITransportGlue, glue)

    def test_welcome(self):
        """The first message is welcome with the operator's fields and a
        server_tx timestamp."""
        self.welcome = {"motd": "hi", "current_cli_version": "1.0"}
        conn, glue = self.connect()
        (w,) = glue.pop()
        self.assertEqual(w["type"], "welcome")
        self.assertEqual(w["welcome"], {"motd": "hi",
                                        "current_cli_version": "1.0"})
        self.assertEqual(w["server_tx"], T0)

    def test_ack_then_response(self):
        """Every command is acked (with its id) before its direct
        response; the response carries id and server_rx."""
        conn, glue = self.bound()
        self.clock.advance(1)
        self.send(conn, type="allocate", id="x1")
        ack, allocated = glue.pop()
        self.assertEqual((ack["type"], ack["id"]), ("ack", "x1"))
        self.assertEqual((allocated["type"], allocated["id"],
                          allocated["server_rx"]), ("allocated", "x1", T0 + 1))

    def test_held_until_commit(self):
        """Nothing leaves before the store says the changes are committed
        (Mailbox server protocol, "Persistence"): not the ack, not the response, not the
        fan-out to the other side."""
        a, ga = self.bound("a")
        b, gb = self.bound("b")
        self.send(a, type="open", mailbox="mb")
        self.send(b, type="open", mailbox="mb")
        ga.pop(), gb.pop()
        self.store.auto = False
        self.send(a, type="add", phase="pake", body="aabb", id="m1")
        self.assertEqual((ga.sent, gb.sent), ([], []))
        self.store.commit()
        self.assertEqual(ga.types(), ["ack", "message"])
        self.assertEqual(gb.types(), ["message"])
        self.assertEqual(gb.sent[0]["id"], "m1")

    def test_list_off_by_default(self):
        """list answers an empty nameplates list unless allowed."""
        conn, glue = self.bound()
        self.send(conn, type="claim", nameplate="4")
        glue.pop()
        self.send(conn, type="list", id="l")
        self.assertEqual(glue.pop()[1]["nameplates"], [])

    def test_list_allowed(self):
        """With allow_list the claimed nameplates are listed."""
        conn, glue = self.bound()
        conn._ctx.allow_list = True
        self.send(conn, type="claim", nameplate="4")
        glue.pop()
        self.send(conn, type="list")
        self.assertEqual(glue.pop()[1]["nameplates"], [{"id": "4"}])

    def test_reconnect_repeats(self):
        """A client that reconnects may repeat release and close on the new
        connection without claim/open: both are answered."""
        a, ga = self.bound("a")
        self.send(a, type="claim", nameplate="4")
        mb = ga.pop()[1]["mailbox"]
        self.send(a, type="open", mailbox=mb)
        a.lost()
        a2, ga2 = self.bound("a")
        self.send(a2, type="release", nameplate="4")
        self.send(a2, type="close", mailbox=mb, mood="lonely")
        self.assertEqual(ga2.types(), ["ack", "released", "ack", "closed"])
        # and again: the objects are gone, still no error
        a3, ga3 = self.bound("a")
        self.send(a3, type="release", nameplate="4")
        self.send(a3, type="close", mailbox=mb)
        self.assertEqual(ga3.types(), ["ack", "released", "ack", "closed"])

    def test_prune_between_bind_and_claim(self):
        """Pruning forgets an empty AppID namespace; sides bound before it
        still meet afterwards (nobody keeps an orphaned namespace)."""
        a, ga = self.bound("a")
        self.model.prune(self.clock.seconds() + 10**6,
                         self.clock.seconds() + 10**6)
        self.assertEqual(self.model.apps, {})
        b, gb = self.bound("b")
        self.send(a, type="claim", nameplate="4")
        self.send(b, type="claim", nameplate="4")
        self.assertEqual(ga.pop()[1]["mailbox"], gb.pop()[1]["mailbox"])
        self.model.compact()
        self.send(a, type="open", mailbox="m")
        self.send(b, type="open", mailbox="m")
        self.send(a, type="add", phase="p", body="00")
        self.assertEqual(gb.types()[-1], "message")

    def test_add_after_crowded_open(self):
        """A third side whose open was refused as crowded cannot add; it is
        told to open first, as the reference says."""
        a, ga = self.bound("a")
        b, gb = self.bound("b")
        c, gc = self.bound("c")
        for x in (a, b, c):
            self.send(x, type="open", mailbox="mb")
        self.assertEqual(gc.pop()[-1]["error"], "crowded")
        self.send(c, type="add", phase="p", body="00")
        self.assertIn("must open mailbox before adding", gc.pop()[-1]["error"])
        self.assertEqual(self.model.app("app").mailboxes["mb"].messages, [])

    def test_internal_error(self):
        """A bug while handling a message is logged, answered with an
        error, and the connection keeps working."""
        conn, glue = self.bound()

        def broken(*a):
            raise ZeroDivisionError()
        self.model.app("app").allocate = broken
        self.send(conn, type="allocate")
        self.assertEqual(len(self.flushLoggedErrors(ZeroDivisionError)), 1)
        self.assertEqual(glue.types(), ["ack", "error"])
        self.assertIn("internal error", glue.sent[1]["error"])
        self.send(conn, type="ping", ping=1)
        self.assertEqual(glue.types()[-1], "pong")

    def test_lost_stops_delivery(self):
        """A lost connection is unsubscribed from its mailbox."""
        a, ga = self.bound("a")
        b, gb = self.bound("b")
        self.send(a, type="open", mailbox="mb")
        self.send(b, type="open", mailbox="mb")
        a.lost()
        ga.pop()
        self.send(b, type="add", phase="p", body="00")
        self.assertEqual(ga.sent, [])
        self.assertEqual(self.model.app("app").mailboxes["mb"].listeners, [b])


class Timeouts(Base):
    def test_bind_timeout(self):
        """A client that does not bind within bind_timeout gets an error
        and is closed (1008)."""
        conn, glue = self.connect()
        glue.pop()
        self.clock.advance(30)
        conn.tick(self.clock.seconds())
        self.assertIsNone(glue.dropped)
        self.clock.advance(31)
        conn.tick(self.clock.seconds())
        self.assertEqual(glue.types(), ["error"])
        self.assertIn("no bind within 60", glue.sent[0]["error"])
        self.assertEqual(glue.dropped[0], 1008)

    def test_bound_no_bind_timeout(self):
        """A bound client is not subject to the bind timeout."""
        conn, glue = self.bound()
        self.clock.advance(100)
        conn.tick(self.clock.seconds())
        self.assertIsNone(glue.dropped)

    def test_idle_timeout(self):
        """A bound client silent for idle_timeout is closed (1000) with an
        error, and leaves its mailbox."""
        conn, glue = self.bound()
        self.send(conn, type="open", mailbox="mb")
        self.clock.advance(500)
        self.send(conn, type="ping", ping=1)
        glue.pop()
        self.clock.advance(500)
        conn.tick(self.clock.seconds())
        self.assertIsNone(glue.dropped)
        self.clock.advance(101)
        conn.tick(self.clock.seconds())
        self.assertEqual(glue.types(), ["error"])
        self.assertEqual(glue.dropped[0], 1000)
        self.assertEqual(self.model.app("app").mailboxes["mb"].listeners, [])

    def test_too_slow(self):
        """A client that does not read is aborted and leaves its mailbox."""
        conn, glue = self.bound()
        self.send(conn, type="open", mailbox="mb")
        conn.too_slow()
        self.assertTrue(glue.aborted)
        self.assertEqual(self.model.app("app").mailboxes["mb"].listeners, [])


class Permission(Base):
    def test_none_advertised(self):
        """With --permissions=none the welcome offers none and bind works
        without submit-permissions."""
        self.policy = parse_permissions("none")
        conn, glue = self.connect()
        self.assertEqual(glue.pop()[0]["welcome"]["permission-required"],
                         {"none": {}})
        self.send(conn, type="bind", appid="a", side="s")
        self.send(conn, type="allocate")
        self.assertEqual(glue.types(), ["ack", "ack", "allocated"])

    def hashcash_conn(self):
        self.policy = parse_permissions("hashcash:4")
        conn, glue = self.connect()
        perm = glue.pop()[0]["welcome"]["permission-required"]
        self.assertEqual(list(perm), ["hashcash"])
        self.assertEqual(perm["hashcash"]["bits"], 4)
        return conn, glue, perm["hashcash"]["resource"]

    def test_hashcash_ok(self):
        """A valid stamp for this connection's resource lets bind through."""
        conn, glue, resource = self.hashcash_conn()
        stamp = _hashcash.mint(resource, 4, now=NOW)
        self.send(conn, type="submit-permissions", method="hashcash",
                  stamp=stamp)
        self.send(conn, type="bind", appid="a", side="s")
        self.send(conn, type="allocate")
        self.assertEqual(glue.types(), ["ack", "ack", "ack", "allocated"])

    def test_hashcash_wrong_resource(self):
        """A stamp for another resource (e.g. replayed from another
        connection) is refused and the connection closed."""
        conn, glue, resource = self.hashcash_conn()
        stamp = _hashcash.mint("someotherresource", 4, now=NOW)
        self.send(conn, type="submit-permissions", method="hashcash",
                  stamp=stamp)
        self.assertEqual(glue.types(), ["ack", "error"])
        self.assertIn("permission denied", glue.sent[1]["error"])
        self.assertEqual(glue.dropped[0], 1008)

    def test_hashcash_too_few_bits(self):
        """A stamp worth fewer bits than asked is refused."""
        conn, glue, resource = self.hashcash_conn()
        stamp = _hashcash.mint(resource, 1, now=NOW)
        self.send(conn, type="submit-permissions", method="hashcash",
                  stamp=stamp)
        self.assertEqual(glue.types(), ["ack", "error"])
        self.assertEqual(glue.dropped[0], 1008)

    def test_hashcash_stale(self):
        """A stamp dated a week ago is refused."""
        conn, glue, resource = self.hashcash_conn()
        stamp = _hashcash.mint(resource, 4,
                               now=NOW - datetime.timedelta(days=7))
        self.send(conn, type="submit-permissions", method="hashcash",
                  stamp=stamp)
        self.assertEqual(glue.types(), ["ack", "error"])

    def test_hashcash_second_submission(self):
        """Each connection takes one accepted submission; another (a
        replay of the same stamp) after bind is refused."""
        conn, glue, resource = self.hashcash_conn()
        stamp = _hashcash.mint(resource, 4, now=NOW)
        self.send(conn, type="submit-permissions", method="hashcash",
                  stamp=stamp)
        self.send(conn, type="bind", appid="a", side="s")
        self.send(conn, type="submit-permissions", method="hashcash",
                  stamp=stamp)
        self.assertEqual(glue.types(), ["ack", "ack", "ack", "error"])

    def test_bind_without_permission(self):
        """An old client that binds at once is told permission is required
        and closed (Mailbox server protocol, "Connection-Specific
        (Client-to-Server) Messages": backwards compatibility)."""
        conn, glue, resource = self.hashcash_conn()
        self.send(conn, type="bind", appid="a", side="s")
        self.assertEqual(glue.types(), ["ack", "error"])
        self.assertIn("permission denied", glue.sent[1]["error"])
        self.assertEqual(glue.dropped[0], 1008)

    def test_ping_before_permission(self):
        """ping works before permission; other commands say bind first."""
        conn, glue, resource = self.hashcash_conn()
        self.send(conn, type="ping", ping=3)
        self.send(conn, type="allocate")
        self.assertEqual(glue.types(), ["ack", "pong", "ack", "error"])

    def test_bad_submission_when_none_allowed(self):
        """If the server allows none, a bad submission does not matter."""
        self.policy = parse_permissions("none+hashcash:4")
        conn, glue = self.connect()
        glue.pop()
        self.send(conn, type="submit-permissions", method="hashcash",
                  stamp="1:4:200101:x::a:b")
        self.send(conn, type="bind", appid="a", side="s")
        self.send(conn, type="allocate")
        self.assertEqual(glue.types(), ["ack", "ack", "ack", "allocated"])
        self.assertIsNone(glue.dropped)

    def test_submit_after_bind(self):
        """submit-permissions after bind is an error (and harmless)."""
        conn, glue = self.bound()
        self.send(conn, type="submit-permissions", method="none")
        self.assertEqual(glue.types(), ["ack", "error"])
