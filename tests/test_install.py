"""Installing the client pulls no server-only or Spark dependency:
``pip install wormhole-twisted`` gives the library and the ``wormhole``
command; the extras ``mailbox``, ``relay`` (or ``server``) and
``analytics`` give the rest (pyproject.toml, docs/architecture.md,
"Layering").

Two checks, each on the real thing: pip's own resolver over the project's
metadata as built from pyproject.toml (``pip install --dry-run --report``,
with every dependency resolved as in a fresh environment), and the client
run in a subprocess in which the servers' and the pipeline's dependencies
cannot be imported.
"""

import json
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from twisted.trial import unittest

from ._absent import LAN_ONLY, SERVER_ONLY, SPARK_ONLY, run_without

REPO = Path(__file__).resolve().parent.parent


def _resolve(target, tmp):
    """pip's report of what ``pip install TARGET`` would install into an
    empty environment: {canonical name: its entry}."""
    report = Path(tmp) / "report.json"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet",
         "--ignore-installed", "--report", str(report), target],
        check=True, capture_output=True, timeout=600)
    entries = json.loads(report.read_text(encoding="utf-8"))["install"]
    return {canonicalize_name(e["metadata"]["name"]): e for e in entries}


_resolved = {}


class PipResolves(unittest.TestCase):
    def setUp(self):
        if not _resolved:  # once for the class: pip takes seconds
            tmp = Path(self.mktemp())
            tmp.mkdir()
            _resolved.update(_resolve(str(REPO), tmp))
        self.installed = _resolved
        self.ours = self.installed[canonicalize_name("wormhole-twisted")]["metadata"]

    def test_the_client_install_has_no_server_or_spark_dependency(self):
        """``pip install .`` (no extra) installs neither prometheus_client,
        pyspark nor numpy, directly or through another package."""
        unwanted = {canonicalize_name(n) for n in SERVER_ONLY + SPARK_ONLY}
        self.assertEqual(sorted(unwanted & set(self.installed)), [])
        # and it is the client's dependencies that were resolved
        for name in ("twisted", "autobahn", "automat", "spake2", "click"):
            self.assertIn(name, self.installed)

    def _extra(self, extra):
        """The requirements our metadata gives ``extra``, by name."""
        names = set()
        for line in self.ours.get("requires_dist", []):
            req = Requirement(line)
            if req.marker is not None and req.marker.evaluate({"extra": extra}):
                names.add(canonicalize_name(req.name))
        return names

    def test_the_extras_give_the_servers_and_the_pipeline(self):
        """``mailbox`` and ``relay`` bring prometheus_client, ``server``
        both, ``analytics`` pyspark and numpy, ``unit`` what the unit
        tests import (the quick loop), and ``test`` all of them."""
        self.assertIn("prometheus-client", self._extra("mailbox"))
        self.assertIn("prometheus-client", self._extra("relay"))
        self.assertLessEqual({"pyspark", "numpy"}, self._extra("analytics"))
        # server and test name our own extras
        ours = {}
        for line in self.ours["requires_dist"]:
            req = Requirement(line)
            if canonicalize_name(req.name) == "wormhole-twisted":
                extra = [e for e in ("server", "unit", "test", "lan")
                         if req.marker.evaluate({"extra": e})]
                ours[extra[0]] = sorted(req.extras)
        self.assertEqual(ours, {"server": ["mailbox", "relay"], "lan": ["mailbox"],
                                "unit": ["lan", "p2p", "server", "tor"],
                                "test": ["analytics", "docs", "lint", "unit"]})
        self.assertIn("zeroconf", self._extra("lan"))


class ClientWithoutServerDependencies(unittest.TestCase):
    absent = SERVER_ONLY + SPARK_ONLY + LAN_ONLY

    def test_every_client_module_imports(self):
        """``import wormhole, wormhole.cli.cli`` and every other module
        under wormhole import without the servers' and Spark's packages,
        and ``wormhole --help`` runs."""
        rc, out = run_without(self.absent, """
            import importlib, pkgutil
            import wormhole, wormhole.cli.cli
            for m in pkgutil.walk_packages(wormhole.__path__, "wormhole."):
                importlib.import_module(m.name)
            wormhole.cli.cli.wormhole(["--help"], prog_name="wormhole")
            """)
        self.assertEqual(rc, 0, out)
        self.assertIn("Usage: wormhole", out)

    def test_lan_names_the_extra_it_needs(self):
        """``wormhole send --lan`` without zeroconf: one line naming the
        ``lan`` extra, exit 1, before anything is announced or dialled."""
        rc, out = run_without(self.absent, """
            from wormhole.cli.cli import wormhole
            wormhole(["send", "--lan", "--text", "hi"], prog_name="wormhole")
            """)
        self.assertEqual(rc, 1, out)
        self.assertIn("ERROR: --lan and wormhole.lan need the 'lan' extra", out)
        self.assertIn("pip install 'wormhole-twisted[lan]'", out)
        self.assertNotIn("Traceback", out)

    def test_the_blocker_blocks(self):
        """The same subprocess cannot import our Mailbox server (it needs
        prometheus_client): the test above would catch a client module
        that imports it."""
        rc, out = run_without(self.absent, "import wormhole_mailbox.server\n")
        self.assertNotEqual(rc, 0)
        self.assertIn("No module named 'prometheus_client'", out)

    def test_twistd_help_lists_the_plugins(self):
        """``twistd --help`` loads the plugin files, which name their
        packages lazily: it lists wormhole-mailbox, transitrelay and
        p2p-node without loading a server."""
        rc, out = run_without(self.absent, """
            import sys
            from twisted.scripts.twistd import run
            sys.argv = ["twistd", "--help"]
            run()
            """)
        self.assertEqual(rc, 0, out)
        for name in ("wormhole-mailbox", "transitrelay", "p2p-node"):
            self.assertIn(name, out)

    def test_twistd_names_the_extra_a_server_needs(self):
        """``twistd wormhole-mailbox`` and ``twistd transitrelay`` without
        their dependencies end with one line naming the extra to install."""
        for tapname, extra in (("wormhole-mailbox", "mailbox"), ("transitrelay", "relay")):
            rc, out = run_without(self.absent, f"""
                import sys
                from twisted.scripts.twistd import run
                sys.argv = ["twistd", {tapname!r}, "--help"]
                run()
                """)
            self.assertNotEqual(rc, 0)
            self.assertEqual(out.strip().splitlines(), [
                f"twistd {tapname}: No module named 'prometheus_client': this server "
                f"needs the '{extra}' extra: pip install 'wormhole-twisted[{extra}]'"])

    def test_memory_server_names_the_extra_it_needs(self):
        """``wormhole.testing`` imports; its in-memory Mailbox server, which
        runs our Mailbox server, says which extra to install."""
        rc, out = run_without(self.absent, """
            from twisted.internet.task import Clock
            from wormhole.testing import memory_server
            memory_server(Clock())
            """)
        self.assertNotEqual(rc, 0)
        self.assertIn("pip install 'wormhole-twisted[mailbox]'", out)
