"""docs/testing.md's example runs as written."""

import os
import re

from twisted.trial import unittest

from tests._paths import REPO_ROOT


class DocsExample(unittest.TestCase):
    def test_example_runs(self):
        """The python block of docs/testing.md defines example(), whose
        asserts pass: messages and Dilation through wormhole.testing."""
        with open(os.path.join(REPO_ROOT, "docs", "testing.md")) as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        self.assertEqual(len(blocks), 1)
        namespace = {}
        exec(compile(blocks[0], "docs/testing.md", "exec"), namespace)
        namespace["example"]()
