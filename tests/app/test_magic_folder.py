"""magic-folder 24.3.0's own invitation tests (``magic_folder.test.
test_invite``, shipped in its wheel) on the reference 0.24 and on ours
(docs/api.md, "Real applications beyond fowl").

Its invitations run over ``wormhole.create()``; the tests drive them with
a fake that declares ``wormhole._interfaces.IDeferredWormhole`` and catch
``wormhole.errors`` classes, so they pin the names and interfaces
magic-folder imports from the library. Run with trial, as magic-folder's
own CI does, first on the reference, then on ours: every test that
passes on the reference must pass on ours.
"""

import json
import os

from twisted.internet import defer, reactor
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial import unittest

from ._apps import app_env, apps_bin, require_apps

SUITE = "magic_folder.test.test_invite"
OUTCOMES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trial_outcomes.py")
# the reference's count here; fewer means a broken environment, which
# must not make the comparison pass vacuously
MIN_REFERENCE_PASSED = 22


class MagicFolderInviteSuite(unittest.TestCase):
    timeout = 300

    @defer.inlineCallbacks
    def run_suite(self, library):
        """({test id: outcome}, trial's report) of SUITE on ``library``."""
        require_apps(library)
        out, err, code = yield getProcessOutputAndValue(
            apps_bin("python"), [OUTCOMES, SUITE], env=app_env(library),
            path=self.mktemp_cwd(), reactor=reactor)
        lines = out.decode().strip().splitlines()
        self.assertTrue(lines, err.decode(errors="replace")[-3000:])
        return json.loads(lines[-1]), err.decode(errors="replace")

    def mktemp_cwd(self):
        d = self.mktemp()
        os.makedirs(d)
        return d

    @defer.inlineCallbacks
    def test_invite_suite(self):
        """Every test of magic-folder's invitation suite that passes on
        the reference passes on ours."""
        reference, ref_out = yield self.run_suite("reference")
        passed = sorted(t for t, o in reference.items() if o == "OK")
        self.assertGreaterEqual(len(passed), MIN_REFERENCE_PASSED, ref_out[-3000:])
        ours, our_out = yield self.run_suite("ours")
        lost = [t for t in passed if ours.get(t) != "OK"]
        self.assertEqual(lost, [], our_out[-6000:])
