"""The reference's first Dilation messages (Dilation protocol, "Connection
Layers", L1 through the
mailbox), observed by our raw peer inside a loopback-only network
namespace (netns_dilation.py explains why and how).

Pins what the reference 0.24 sends after ``w.dilate()`` on a wormhole
created with ``dilation=True``, once its peer offered Dilation too: a
``please`` as phase ``dilate-0`` and its ``connection-hints`` as
``dilate-1``.  Nothing here opens an L2 connection.
"""
import json
import re
import sys

from twisted.internet import defer

from . import harness
from .harness import InteropTestCase


class ReferenceDilationL1(InteropTestCase):

    @defer.inlineCallbacks
    def observe(self):
        argv = ["unshare", "-n", sys.executable, "-m",
                "tests.interop.netns_dilation", self.ref_venv]
        run = self.spawn(argv, "netns observer", cwd=harness.REPO_ROOT)
        yield self.wait_all([run])
        self.assertExited(run)
        lines = [json.loads(line) for line in run.stdout.splitlines()
                 if line.startswith(b"{")]
        self.assertEqual(len(lines), 1, run.describe())
        result = lines[0]
        if not result["ok"]:
            self.fail("observer failed:\n" + result["error"])
        return result

    @defer.inlineCallbacks
    def test_please_and_hints(self):
        """dilate-0 is {"type": "please", "side": 16 hex digits,
        "use-version": "ged"}; dilate-1 is {"type": "connection-hints",
        "hints": [...]} whose direct-tcp-v1 hints carry hostname, port and
        a float priority -- here only 127.0.0.1, the namespace having
        nothing but loopback (the reference advertises every interface
        address it finds)."""
        result = yield self.observe()
        phases = result["phases"]
        please = phases["dilate-0"]
        self.assertEqual(set(please), {"type", "side", "use-version"})
        self.assertEqual(please["type"], "please")
        self.assertRegex(please["side"], re.compile(r"^[0-9a-f]{16}$"))
        self.assertEqual(please["use-version"], "ged")
        hints = phases["dilate-1"]
        self.assertEqual(hints["type"], "connection-hints")
        self.assertTrue(hints["hints"])
        for hint in hints["hints"]:
            self.assertEqual(set(hint), {"type", "hostname", "port",
                                         "priority"})
            self.assertEqual(hint["type"], "direct-tcp-v1")
            self.assertIn(hint["hostname"], ("127.0.0.1", "::1"))
            self.assertIsInstance(hint["port"], int)
            self.assertIsInstance(hint["priority"], float)
        self.assertEqual(result["peer_version"]["can-dilate"], ["ged"])
