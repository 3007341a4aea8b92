"""Our behaviour against the reference 0.24's, where an application can
observe it (docs/api.md, "Behaviour differences"): event order in
Delegated mode, what get_*() gives after close() and after a wrong code,
what ServerConnectionError carries, the eventual queue and the observers,
when Dilation's listen() and connect() fire, the names applications
import, the refusals of bad codes.

tests/client/behaviour_scenarios.py runs the same scenarios once with the
reference venv's python and once with ours (tests/client/netns_behaviour.py,
in a loopback-only network namespace, against one Mailbox server of ours),
and every outcome is compared field by field. A field that differs fails
the test unless docs/api.md's "Behaviour differences" lists it with its
reason; a listed field that no longer differs fails it too.
"""

import json

from twisted.internet import defer
from twisted.trial import unittest

from tests._apidoc import documented, is_documented, stale
from tests._processes import reference_bin, run_in_loopback_namespace

SECTION = "Behaviour differences"
# every scenario of the issue (items 1-9 and the wordings): a scenario
# missing from the output is a failure, not a smaller comparison
SCENARIOS = ("delegated_events", "delegated_wrong_code", "after_close_happy",
             "after_close_lonely", "wrong_code", "server_connection_error",
             "eventual_queue", "observers", "dilation_endpoints",
             "dilation_endpoints_fail", "names", "transit_helpers", "key_format")


def flatten(outcome, prefix=""):
    """{"a": {"b": 1}} -> {"a.b": 1}; lists (event orders) stay whole."""
    flat = {}
    for key, value in outcome.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def differences(reference, ours):
    """{field: (reference's, ours)} for every field that differs."""
    theirs, mine = flatten(reference), flatten(ours)
    missing = object()
    return {k: (theirs.get(k), mine.get(k)) for k in sorted(set(theirs) | set(mine))
            if theirs.get(k, missing) != mine.get(k, missing)}


class BehaviourVsReference(unittest.TestCase):
    timeout = 300

    @defer.inlineCallbacks
    def test_same_behaviour_as_the_reference(self):
        """Every scenario's outcome on ours equals the reference's, except
        the fields docs/api.md "Behaviour differences" lists."""
        result = yield run_in_loopback_namespace("tests.client.netns_behaviour",
                                                 reference_bin("python"))
        for side in ("reference", "ours"):
            self.assertNotIn("failed", result[side], result[side])
            self.assertEqual(sorted(result[side]), sorted(SCENARIOS), side)
            broken = {k: v for k, v in result[side].items() if "scenario failed" in v}
            self.assertEqual(broken, {}, f"scenarios that could not run on {side}")
        found = differences(result["reference"], result["ours"])
        patterns = documented(SECTION, tuple(s + "." for s in SCENARIOS))
        self.assertGreater(len(patterns), 0)  # the section was found and read
        undocumented = {k: v for k, v in found.items() if not is_documented(k, patterns)}
        self.assertEqual(undocumented, {}, "behaviour differing from the reference 0.24 "
                         "(reference's, ours): fix it, or list it in docs/api.md "
                         f"'{SECTION}' with the reason")
        self.assertEqual(stale(found, patterns), [],
                         "docs/api.md lists behaviour differences that are gone")

    def test_comparison_catches_differences(self):
        """The comparison itself: a changed leaf, a changed event order and
        a field only one side has are differences; equal outcomes are not."""
        ref = {"s": {"a": {"error": {"class": "E"}}, "order": ["x", "y"]}, "t": {"n": 1}}
        self.assertEqual(differences(ref, json.loads(json.dumps(ref))), {})
        self.assertEqual(list(differences(ref, {"s": {"a": {"error": {"class": "F"}},
                                                      "order": ["x", "y"]}, "t": {"n": 1}})),
                         ["s.a.error.class"])
        self.assertEqual(list(differences(ref, {"s": {"a": {"error": {"class": "E"}},
                                                      "order": ["y", "x"]}, "t": {"n": 1}})),
                         ["s.order"])
        self.assertEqual(list(differences(ref, {"s": ref["s"], "t": {"m": 1}})),
                         ["t.m", "t.n"])
