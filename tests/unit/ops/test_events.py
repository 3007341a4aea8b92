"""The usage-event schema (docs/usage-events.md, "Fields");
the writers are tested in tests/unit/ops/test_usage.py."""

from twisted.trial import unittest

from wormhole_ops import events as ue

DAY1 = 1767225600  # 2026-01-01T00:00:00Z


class BuildEvent(unittest.TestCase):
    def test_fields(self):
        """An event has exactly the documented fields, version first."""
        e = ue.build_event("s1", "mailbox", DAY1 + 5.5, 12.25, 3.0, "happy",
                           app_id="app", clients=[
                               ("aaa", ["python", "0.24"]), ("bbb", None)])
        self.assertEqual(list(e), ["v", "server", "kind", "app_id",
                                   "started", "waiting_time", "total_time",
                                   "result", "bytes", "clients"])
        self.assertEqual(e["v"], ue.SCHEMA_VERSION)
        self.assertEqual(e["clients"], [
            {"side": "aaa", "impl": "python", "version": "0.24"},
            {"side": "bbb", "impl": None, "version": None}])

    def test_client_version_not_trusted(self):
        """A client_version that is not a [impl, version] pair is dropped,
        and long strings are cut."""
        e = ue.build_event("s", "mailbox", 0, 1, None, "lonely", clients=[
            ("a" * 100, {"x": 1}), ("b", ["x" * 100, 3])])
        self.assertEqual(e["clients"][0],
                         {"side": "a" * 64, "impl": None, "version": None})
        self.assertEqual(e["clients"][1],
                         {"side": "b", "impl": "x" * 64, "version": "3"})
