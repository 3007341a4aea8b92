"""tests/data/transit_vectors.json against the reference itself: the
vectors re-recorded by the reference 0.24 (tests/transit/vectors.py, a
process in its venv) equal the stored ones (the codec's unit tests read
the stored file: tests/unit/transit/test_codec.py)."""

import json
import os

from twisted.internet import defer, reactor
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial import unittest

from ._support import REPO_ROOT
from .vectors import VECTORS

with open(VECTORS) as _f:
    V = json.load(_f)


class LiveVectors(unittest.TestCase):
    timeout = 180

    @defer.inlineCallbacks
    def test_vectors_file_is_what_the_reference_writes(self):
        """Re-recording from the reference gives tests/data/transit_vectors.json
        (all but the random relay side), so the file cannot drift from it."""
        out, err, code = yield getProcessOutputAndValue(
            os.path.join(REPO_ROOT, ".venv", "bin", "python"),
            ["-m", "tests.transit.vectors"], path=REPO_ROOT, env=dict(os.environ),
            reactor=reactor)
        self.assertEqual(code, 0, err.decode(errors="replace"))
        fresh = json.loads(out)
        self.assertRegex(fresh.pop("relay_side_example"), r"^[0-9a-f]{16}$")
        stored = dict(V)
        stored.pop("relay_side_example")
        self.assertEqual(fresh, stored)
