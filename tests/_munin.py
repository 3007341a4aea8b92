"""Run a munin plugin (the reference's or ours) the way munin-node does:
a child process with the plugin's environment, its output parsed."""

import os
import sys

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks, returnValue
from twisted.internet.utils import getProcessOutputAndValue

from ._processes import REPO_ROOT


def our_plugin(name):
    return os.path.join(REPO_ROOT, "misc", "munin", name)


@inlineCallbacks
def run_plugin(testcase, path, env, python=sys.executable, config=False):
    """{graph: {field: value}} (graph None without multigraph lines); the
    plugin must exit 0."""
    args = [path, "config"] if config else [path]
    out, err, code = yield getProcessOutputAndValue(
        python, args, env=env, reactor=reactor)
    testcase.assertEqual(code, 0, f"{path}: {out!r} {err!r}")
    graphs, graph = {}, None
    for line in out.decode().splitlines():
        if line.startswith("multigraph "):
            graph = line.split()[1]
        elif line.strip():
            key, value = line.split(" ", 1)
            graphs.setdefault(graph, {})[key] = value
    if not config:
        graphs = {g: {k.removesuffix(".value"): int(v)
                      for k, v in fields.items()}
                  for g, fields in graphs.items()}
    returnValue(graphs)
