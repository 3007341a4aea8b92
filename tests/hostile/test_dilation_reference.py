"""How the reference 0.24 treats subchannel ids that break the rule of
Dilation protocol, "L5 subchannels", observed on the wire
(tests/hostile/netns_reference_ids.py in a
loopback-only namespace); docs/security.md records the answer."""

import json
import os
import shutil

from twisted.internet import defer, reactor
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial import unittest

from ..dilation._support import REPO_ROOT, reference_python


class ReferenceIds(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def test_reference_accepts_bad_ids(self):
        """The reference accepts an OPEN with id 0 and one with the wrong
        parity (it echoes on both): it applies no id rule, so ours (refuse
        with CLOSE) is stricter, and it never sends such ids itself."""
        reference_python()  # fails (not skips) when the reference is missing
        unshare = shutil.which("unshare")
        self.assertTrue(unshare and shutil.which("ip"), "needs unshare(1), ip(8) and root")
        python = os.path.join(REPO_ROOT, ".venv", "bin", "python")
        env = dict(os.environ, PYTHONPATH=REPO_ROOT)
        out, err, code = yield getProcessOutputAndValue(
            unshare, ["-n", "--", "sh", "-c",
                      f"ip link set lo up && {python} -m tests.hostile.netns_reference_ids"],
            path=REPO_ROOT, env=env, reactor=reactor)
        self.assertEqual(code, 0, err.decode(errors="replace")[-3000:])
        result = json.loads(out.decode().strip().splitlines()[-1])
        self.assertTrue(result["ok"], result)
        self.assertEqual((result["id0"], result["id2"]), ("echoed", "echoed"), result)
