"""misc/dump-timing.py, called in-process: files in, a page out, errors
that name the file."""
import io
import json
import os
import sys

from twisted.trial import unittest

from ..._paths import load_script
from ._scripted import text_transfer


def _load_script():
    return load_script("dump_timing", "misc", "dump-timing.py")


class Script(unittest.TestCase):

    def setUp(self):
        self.script = _load_script()
        self.out, self.err = io.StringIO(), io.StringIO()
        self.patch(sys, "stdout", self.out)
        self.patch(sys, "stderr", self.err)
        self.dir = self.mktemp()
        os.mkdir(self.dir)

    def bundles(self):
        names = []
        for c, name in zip(text_transfer(), ("s.json", "r.json"), strict=False):
            fn = os.path.join(self.dir, name)
            with open(fn, "w") as f:
                json.dump(c.events, f)
            names.append(fn)
        return names

    def test_writes_page_and_summary(self):
        """Two bundles -> the page at -o, a line per phase with --summary
        (role, phase, start, duration; tab-separated), a note on stderr."""
        page = os.path.join(self.dir, "t.html")
        self.assertEqual(self.script.main(self.bundles() + ["-o", page, "--summary"]), 0)
        with open(page, encoding="utf-8") as f:
            self.assertIn("<svg", f.read())
        lines = [line.split("\t") for line in self.out.getvalue().splitlines()]
        self.assertEqual(len(lines), 12)
        self.assertEqual(lines[0][:2], ["sender", "connect"])
        self.assertEqual(lines[-1][:2], ["receiver", "close"])
        self.assertIn(f"timeline written to {page}", self.err.getvalue())

    def test_bad_bundle(self):
        """A file that is not a bundle: exit status 1, the file named, no page."""
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            f.write("[1, 2]")
        page = os.path.join(self.dir, "t.html")
        self.assertEqual(self.script.main([bad, "-o", page]), 1)
        self.assertIn(f"ERROR: {bad} is not a --dump-timing bundle", self.err.getvalue())
        self.assertFalse(os.path.exists(page))
