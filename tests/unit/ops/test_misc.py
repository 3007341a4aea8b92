"""The operator files in misc/ stay true to the code: the Grafana
dashboard queries only metrics the servers export, and the systemd units'
command lines parse with the plugins' own options."""

import json
import os
import re
import shlex

from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole_mailbox import _plugin as mailbox_plugin
from wormhole_mailbox.server import build_mailbox
from wormhole_relay import _plugin as relay_plugin
from wormhole_relay.server import build_relay

from ..._paths import REPO_ROOT


def exported_names():
    """Every sample name both servers expose (counters with _total)."""
    names = set()
    mailbox = build_mailbox(Clock())
    relay = build_relay(Clock())
    for registry in (mailbox.metrics.registry, relay.metrics.registry):
        for family in registry.collect():
            names |= {s.name for s in family.samples}
            names.add(family.name)
            if family.type == "counter":  # labelled: no sample yet
                names.add(family.name + "_total")
    return names


def exec_start(path):
    """The ExecStart command of a unit file, continuation lines joined."""
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    (line,) = [ln for ln in text.splitlines() if ln.startswith("ExecStart=")]
    return shlex.split(line[len("ExecStart="):])


class Grafana(unittest.TestCase):
    def test_queries_exported_metrics(self):
        """Every panel has a title, a unit and queries; every metric a
        query names is one the servers export."""
        path = os.path.join(REPO_ROOT, "misc", "grafana",
                            "wormhole-servers.json")
        with open(path) as f:
            dashboard = json.load(f)
        exported = exported_names()
        used = set()
        self.assertTrue(dashboard["panels"])
        for panel in dashboard["panels"]:
            self.assertTrue(panel["title"])
            self.assertTrue(panel["fieldConfig"]["defaults"]["unit"])
            self.assertTrue(panel["targets"])
            for target in panel["targets"]:
                used |= set(re.findall(r"wormhole_\w+", target["expr"]))
        self.assertEqual(used - exported, set())
        # and every family is on the dashboard
        self.assertEqual({n for n in exported if not n.endswith("_created")}
                         - used - {n.removesuffix("_total") for n in used},
                         set())


class Systemd(unittest.TestCase):
    def test_units_parse(self):
        """The example units run twistd in the foreground with options the
        plugins accept."""
        for unit, plugin, options in (
                ("wormhole-mailbox.service", "wormhole-mailbox",
                 mailbox_plugin.Options),
                ("wormhole-relay.service", "transitrelay",
                 relay_plugin.Options)):
            argv = exec_start(os.path.join(REPO_ROOT, "misc", "systemd",
                                           unit))
            self.assertIn("-n", argv)
            i = argv.index(plugin)
            config = options()
            config.parseOptions(argv[i + 1:])
            self.assertIsNotNone(config["metrics"])
            self.assertIsNotNone(config["usage-db"])
