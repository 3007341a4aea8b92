"""fowld on our library talks to fowld on the reference 0.24 (issue 12
acceptance): tests/app/netns_fowld.py in a loopback-only namespace."""

import json
import os
import shutil

from twisted.internet import defer, reactor
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial import unittest

from tests._processes import REPO_ROOT, reference_bin

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
        unshare = shutil.which("unshare")
        self.assertTrue(unshare and os.geteuid() == 0,
                        "needs unshare(1) and root for a loopback-only namespace")
        script = f"ip link set lo up && {python} -m tests.app.netns_fowld {ref_venv}"
        env = dict(os.environ)
        env["PYTHONPATH"] = REPO_ROOT
        out, err, code = yield getProcessOutputAndValue(
            unshare, ["-n", "--", "sh", "-c", script], path=REPO_ROOT, env=env,
            reactor=reactor)
        self.assertEqual(code, 0, err.decode(errors="replace")[-3000:])
        result = json.loads(out.decode().strip().splitlines()[-1])
        self.assertTrue(result["ok"], (result, err.decode(errors="replace")[-3000:]))
        self.assertTrue(result["verifiers_match"], result)
        self.assertEqual(result["ours_to_ref"], {"there_ok": True, "back_ok": True})
        self.assertEqual(result["ref_to_ours"], {"there_ok": True, "back_ok": True})
