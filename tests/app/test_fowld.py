"""fowld on our library talks to fowld on the reference 0.24 (docs/api.md,
"Proof: fowl runs on it"): tests/app/netns_fowld.py in a loopback-only namespace."""

import os

from twisted.internet import defer
from twisted.trial import unittest

from tests._processes import reference_bin, run_in_loopback_namespace

from ._fowl import our_python, reference_python, require_fowl


class FowldInterop(unittest.TestCase):
    timeout = 180

    @defer.inlineCallbacks
    def test_streams_both_ways_with_the_reference(self):
        """Our fowld allocates, the reference's fowld types the code; a
        stream forwarded each way carries 100 kB in both directions."""
        python = our_python()
        require_fowl(python)
        require_fowl(reference_python())
        ref_venv = os.path.dirname(os.path.dirname(reference_bin("python")))
        result = yield run_in_loopback_namespace("tests.app.netns_fowld", ref_venv)
        self.assertTrue(result["ok"], result)
        self.assertTrue(result["verifiers_match"], result)
        self.assertEqual(result["ours_to_ref"], {"there_ok": True, "back_ok": True})
        self.assertEqual(result["ref_to_ours"], {"there_ok": True, "back_ok": True})
