"""README.md's library examples run as written, as two processes with one
code: tests/app/netns_readme.py in a loopback-only
namespace, with our Mailbox server on the README's port."""

import json
import os
import re
import shutil

from twisted.internet import defer, reactor
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial import unittest

from tests._processes import REPO_ROOT


def readme_examples():
    with open(os.path.join(REPO_ROOT, "README.md")) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


class ReadmeExamples(unittest.TestCase):
    timeout = 180

    @defer.inlineCallbacks
    def test_examples_run_twice_with_one_code(self):
        """The messages example: each side prints the other's message.
        The Dilation example: the joiner prints the allocator's echo."""
        blocks = readme_examples()
        self.assertEqual(len(blocks), 2)
        workdir = os.path.abspath(self.mktemp())
        os.makedirs(workdir)
        for name, block in zip(("example.py", "dilation_example.py"), blocks, strict=False):
            with open(os.path.join(workdir, name), "w") as f:
                f.write(block)
        unshare = shutil.which("unshare")
        self.assertTrue(unshare and os.geteuid() == 0,
                        "needs unshare(1) and root for a loopback-only namespace")
        python = os.path.join(REPO_ROOT, ".venv", "bin", "python")
        script = f"ip link set lo up && {python} -m tests.app.netns_readme {workdir}"
        env = dict(os.environ, PYTHONPATH=REPO_ROOT)
        out, err, code = yield getProcessOutputAndValue(
            unshare, ["-n", "--", "sh", "-c", script], path=REPO_ROOT, env=env,
            reactor=reactor)
        self.assertEqual(code, 0, err.decode(errors="replace")[-3000:])
        result = json.loads(out.decode().strip().splitlines()[-1])
        self.assertNotIn("error", result, result)
        messages, dilation = result["example.py"], result["dilation_example.py"]
        self.assertNotIn("error", messages, messages)
        self.assertEqual((messages["first"][0], messages["second"][0]), (0, 0), messages)
        self.assertIn("got: hello from the joiner", messages["first"][1])
        self.assertIn("got: hello from the allocator", messages["second"][1])
        self.assertNotIn("error", dilation, dilation)
        self.assertEqual((dilation["first"][0], dilation["second"][0]), (0, 0), dilation)
        self.assertIn("echoed: hello through a subchannel", dilation["second"][1])
