"""Permission policies (Mailbox server protocol, "Permission to Use the Server")."""

import datetime

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _hashcash
from wormhole_mailbox._interfaces import IPermissionPolicy, IUsageRecorder
from wormhole_mailbox._permissions import NoPermissions, Permissions, new_secret, parse_permissions
from wormhole_mailbox._store import MemoryStore
from wormhole_mailbox._usage import UsageLog

NOW = datetime.datetime(2026, 9, 1, tzinfo=datetime.timezone.utc)
T = NOW.timestamp()


class Policies(unittest.TestCase):
    def test_interfaces(self):
        """Every policy provides IPermissionPolicy; UsageLog provides
        IUsageRecorder."""
        for p in (NoPermissions(), parse_permissions("none"),
                  parse_permissions("hashcash:8"),
                  parse_permissions("none+hashcash:8")):
            verifyObject(IPermissionPolicy, p)
        verifyObject(IUsageRecorder, UsageLog(MemoryStore()))

    def test_parse(self):
        """--permissions values map to the advertised methods."""
        self.assertIsInstance(parse_permissions(None), NoPermissions)
        self.assertEqual(parse_permissions("none").welcome_fields("r"),
                         {"none": {}})
        self.assertEqual(parse_permissions("hashcash:9").welcome_fields("r"),
                         {"hashcash": {"bits": 9, "resource": "r"}})
        both = parse_permissions("none+hashcash:9")
        self.assertEqual(sorted(both.welcome_fields("r")),
                         ["hashcash", "none"])
        self.assertTrue(both.allows_without_submission())
        self.assertFalse(parse_permissions("hashcash:9")
                         .allows_without_submission())
        for bad in ("", "hashcash", "hashcash:0", "hashcash:x", "foo"):
            self.assertRaises(ValueError, parse_permissions, bad)

    def test_reference_behaviour(self):
        """Without --permissions nothing is advertised and bind is free."""
        p = NoPermissions()
        self.assertIsNone(p.welcome_fields("r"))
        self.assertTrue(p.allows_without_submission())
        self.assertIsNone(p.check(("none", None), "r", T))
        self.assertIn("unsupported", p.check(("hashcash", "x"), "r", T))

    def test_secret(self):
        """Resources are fresh per connection and hold no ':'."""
        a, b = new_secret(), new_secret()
        self.assertNotEqual(a, b)
        self.assertNotIn(":", a)

    def test_hashcash_checks(self):
        """A good stamp passes; wrong resource, too few bits, stale date,
        missing stamp, garbage and unknown methods are refused with a
        readable reason."""
        p = Permissions(False, 6)
        good = _hashcash.mint("res", 6, now=NOW)
        self.assertIsNone(p.check(("hashcash", good), "res", T))
        for sub in [("hashcash", good.replace(":res:", ":other:")),
                    ("hashcash", _hashcash.mint("res", 2, now=NOW)),
                    ("hashcash", _hashcash.mint(
                        "res", 6, now=NOW - datetime.timedelta(days=5))),
                    ("hashcash", None), ("hashcash", "1:2:3"),
                    ("none", None), ("telepathy", None)]:
            reason = p.check(sub, "res", T)
            self.assertIsNotNone(reason, sub)
            self.assertIn("permission denied", reason)

    def test_needs_a_method(self):
        """A policy with no method at all is a configuration error."""
        self.assertRaises(ValueError, Permissions, False, None)
