"""critical-wormhole-tools 0.3.0's ``wh nc`` (netcat over a Dilated
wormhole) on the reference 0.24 and on ours (docs/api.md, "Real
applications beyond fowl"): tests/app/netns_wh.py in a loopback-only namespace,
on the reference first, then on ours, then our listener with the
reference's connector; each run must end as the reference's did."""

from twisted.internet import defer
from twisted.trial import unittest

from tests._processes import run_in_loopback_namespace

from ._apps import require_apps


class WhNetcat(unittest.TestCase):
    timeout = 300

    @defer.inlineCallbacks
    def test_netcat(self):
        """A line typed at the connector comes out of the listener, and
        the end of its input ends the connector, on every pairing exactly
        as on the reference."""
        require_apps("reference")
        require_apps("ours")
        reference = yield run_in_loopback_namespace("tests.app.netns_wh", "reference",
                                                    "reference")
        self.assertTrue(reference["ok"] and reference["there"], reference)
        for listener, connector in (("ours", "ours"), ("ours", "reference")):
            result = yield run_in_loopback_namespace("tests.app.netns_wh", listener, connector)
            self.assertEqual(result, reference,
                             f"listener on {listener}, connector on {connector}")
