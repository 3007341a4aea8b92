"""The layering of the packages under src/ (docs/architecture.md,
"Layering").

Every module is parsed with ``ast`` (nothing is imported), and every
``import``/``from ... import`` counts, also one inside a function: a lazy
import still ties the packages together, so a rule that allows one says so
below. Imports made from a string (``importlib``, the twistd plugins'
``ServiceMaker``) are not seen here; tests/test_install.py runs the client
without the servers' dependencies.
"""

import ast
from pathlib import Path

from twisted.trial import unittest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"

CLIENT = "wormhole"
CLI = "wormhole.cli"
MAILBOX, RELAY, OPS, ANALYTICS = ("wormhole_mailbox", "wormhole_relay",
                                  "wormhole_ops", "wormhole_analytics")
SERVERS = (MAILBOX, RELAY, OPS)

# ``python -m wormhole`` is the command itself, so it belongs with the CLI
COMMAND_MODULES = ("wormhole.__main__",)

# The small pure modules of the client that the servers and the mesh may
# use: each takes values and returns values, and imports nothing of the
# client's machinery. Everything else the servers share goes through
# wormhole_ops.
SHARED_CLIENT_MODULES = {
    "wormhole._hashcash": "hashcash stamps: the Mailbox server checks them "
                          "(--permissions hashcash), the client makes them",
    "wormhole._jsonlimit": "the one JSON nesting guard, for what the client "
                           "and the Mailbox server decode",
    "wormhole._automat_private": "Automat's transition tracer and the other Automat "
                                 "internals, for the one Automat range checked",
}

# wormhole.testing gives applications an in-memory Mailbox server, so it
# runs our Mailbox server: it may import wormhole_mailbox, and only inside
# a function (lazily), so that ``import wormhole.testing`` needs no server
# dependency. wormhole.lan._serve runs our Mailbox server in a LAN
# sender's process (docs/lan.md), under the same rule: lazily, so that
# ``import wormhole.lan`` needs no server either (the ``lan`` extra brings
# it). No other client module may.
LAZY_CLIENT_TO_SERVER = {("wormhole.testing", MAILBOX), ("wormhole.lan._serve", MAILBOX)}

def _module_name(path, root):
    rel = path.relative_to(root).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts), rel.name == "__init__"


def _is_module(name, root=SRC):
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


class Import:
    """One import statement's target, as an absolute module name."""

    def __init__(self, importer, target, lineno, lazy):
        self.importer, self.target = importer, target
        self.lineno, self.lazy = lineno, lazy

    def __repr__(self):
        where = "inside a function" if self.lazy else "at module level"
        return f"{self.importer}:{self.lineno} imports {self.target} ({where})"


def imports_of(source, module, is_package, root=SRC):
    """Every import in ``source`` (the text of ``module``), with relative
    imports resolved and ``from P import M`` read as ``P.M`` when M is a
    module under ``root``."""
    tree = ast.parse(source)
    found = []

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(module, alias.name, child.lineno, lazy))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    package = module.split(".")
                    if not is_package:
                        package = package[:-1]
                    package = package[:len(package) - (child.level - 1)]
                    base = ".".join(package + ([base] if base else []))
                for alias in child.names:
                    target = f"{base}.{alias.name}"
                    if not _is_module(target, root):
                        target = base
                    found.append(Import(module, target, child.lineno, lazy))
            visit(child, inner)

    visit(tree, False)
    return found


def all_imports(root=SRC):
    out = []
    for path in sorted(root.rglob("*.py")):
        if any(part.endswith(".egg-info") for part in path.parts):
            continue
        module, is_package = _module_name(path, root)
        out += imports_of(path.read_text(encoding="utf-8"), module, is_package, root)
    return out


_parsed = []


def _src_imports():
    """all_imports() of src/, parsed once for the whole class."""
    if not _parsed:
        _parsed.append(all_imports())
    return _parsed[0]


def within(name, package):
    return name == package or name.startswith(package + ".")


def client_to_server(imports):
    """The client never imports a server package (but for the lazy
    Mailbox servers of LAZY_CLIENT_TO_SERVER)."""
    bad = []
    for i in imports:
        if not within(i.importer, CLIENT):
            continue
        for server in SERVERS:
            if within(i.target, server):
                if (i.importer, server) in LAZY_CLIENT_TO_SERVER and i.lazy:
                    continue
                bad.append(i)
    return bad


def library_to_cli(imports):
    """The library (wormhole, minus wormhole.cli and ``python -m
    wormhole``) never imports the command line."""
    return [i for i in imports
            if within(i.importer, CLIENT) and not within(i.importer, CLI)
            and i.importer not in COMMAND_MODULES and within(i.target, CLI)]


def _private(name):
    """Whether a module name has a private part (``wormhole._x``,
    ``wormhole.pkg._x``; ``__main__`` and the like are not private)."""
    return any(part.startswith("_") and not part.startswith("__")
               for part in name.split("."))


def cli_to_private(imports):
    """The command line imports only public names of the library: no
    private module of it (docs/architecture.md, "Layering"); its own
    modules it may."""
    return [i for i in imports
            if (within(i.importer, CLI) or i.importer in COMMAND_MODULES)
            and within(i.target, CLIENT) and not within(i.target, CLI)
            and _private(i.target)]


def analytics_imported(imports):
    """Nothing imports wormhole_analytics but wormhole_analytics."""
    return [i for i in imports
            if within(i.target, ANALYTICS) and not within(i.importer, ANALYTICS)]


def servers_share(imports):
    """The servers (and the mesh) take nothing from each other or from the
    client but wormhole_ops and SHARED_CLIENT_MODULES; wormhole_ops, which
    both servers use, uses neither."""
    others = {MAILBOX: (RELAY,), RELAY: (MAILBOX,), OPS: (MAILBOX, RELAY),
              "p2pmesh": SERVERS}
    bad = []
    for i in imports:
        for package, forbidden in others.items():
            if not within(i.importer, package):
                continue
            if any(within(i.target, f) for f in forbidden):
                bad.append(i)
            elif within(i.target, CLIENT) and i.target not in SHARED_CLIENT_MODULES:
                bad.append(i)
    return bad


class Layering(unittest.TestCase):
    """The rules hold for the code in src/."""

    def setUp(self):
        self.imports = _src_imports()

    def test_the_client_imports_no_server(self):
        """wormhole.* never imports wormhole_mailbox, wormhole_relay or
        wormhole_ops; wormhole.testing and wormhole.lan._serve import the
        Mailbox server only inside a function."""
        self.assertEqual(client_to_server(self.imports), [])

    def test_the_library_imports_no_cli(self):
        """Nothing under wormhole but wormhole.cli (and ``python -m
        wormhole``) imports wormhole.cli."""
        self.assertEqual(library_to_cli(self.imports), [])

    def test_the_cli_imports_no_private_module(self):
        """wormhole.cli (and ``python -m wormhole``) imports the library
        only by its public modules and names: a renderer of its events,
        not a reader of its internals."""
        self.assertEqual(cli_to_private(self.imports), [])

    def test_nothing_imports_the_analytics(self):
        """wormhole_analytics is imported by no other package in src/."""
        self.assertEqual(analytics_imported(self.imports), [])

    def test_servers_share_only_ops_and_pure_client_modules(self):
        """The Mailbox server and the relay do not import each other;
        wormhole_ops imports neither; from the client they (and p2pmesh)
        take only the modules named in SHARED_CLIENT_MODULES."""
        self.assertEqual(servers_share(self.imports), [])

    def test_the_shared_client_modules_are_pure(self):
        """Each shared client module imports nothing of the client, so a
        server importing it does not load the client's machinery."""
        bad = [i for i in self.imports if i.importer in SHARED_CLIENT_MODULES
               and within(i.target, CLIENT)]
        self.assertEqual(bad, [])

    def test_twistd_plugins_import_our_packages_lazily(self):
        """src/twisted/plugins/ names its service modules as strings, so
        ``twistd --help`` loads no server (and needs none of its
        dependencies) on a client-only install. The plugin files import
        only wormhole_ops.twistd (ServerMaker), which imports only Twisted."""
        ours = (CLIENT, MAILBOX, RELAY, OPS, ANALYTICS, "p2pmesh")
        helper = f"{OPS}.twistd"
        bad = [i for i in self.imports
               if i.importer in ("twisted.plugins." + p.stem for p in
                                 (SRC / "twisted" / "plugins").glob("*.py"))
               and any(within(i.target, p) for p in ours) and i.target != helper]
        bad += [i for i in self.imports if i.importer == helper
                and not within(i.target, "twisted")]
        self.assertEqual(bad, [])


class TestsImportNoAnalytics(unittest.TestCase):
    def test_only_its_own_tests_and_bench_import_the_analytics(self):
        """Outside tests/analytics and tests/unit/analytics (and bench/),
        no test or tool imports wormhole_analytics: every other test runs
        without Spark."""
        bad = []
        for folder in ("tests", "misc"):
            root = REPO / folder
            for i in all_imports(root):
                if within(i.importer, "analytics") or within(i.importer, "unit.analytics"):
                    continue
                if within(i.target, ANALYTICS):
                    bad.append(f"{folder}/{i!r}")
        self.assertEqual(bad, [])


class TheRulesCatchViolations(unittest.TestCase):
    """Each rule fails on the import it forbids, also one in a function."""

    def parse(self, module, source, is_package=False):
        return imports_of(source, module, is_package)

    def test_lazy_server_import_in_the_client_is_caught(self):
        imports = self.parse("wormhole._boss", "def f():\n    import wormhole_relay.server\n")
        self.assertEqual([i.target for i in client_to_server(imports)],
                         ["wormhole_relay.server"])

    def test_testing_may_import_the_mailbox_only_lazily(self):
        top = self.parse("wormhole.testing", "from wormhole_mailbox import server\n")
        lazy = self.parse("wormhole.testing",
                          "def f():\n    from wormhole_mailbox.server import build_mailbox\n")
        relay = self.parse("wormhole.testing", "def f():\n    import wormhole_relay\n")
        self.assertEqual((len(client_to_server(top)), len(client_to_server(lazy)),
                          len(client_to_server(relay))), (1, 0, 1))

    def test_the_lan_server_may_import_the_mailbox_only_lazily(self):
        """wormhole.lan._serve, the one other exception: the Mailbox server
        inside a function, never at module level, never the relay; and no
        other module of wormhole.lan."""
        lazy = "def f():\n    from wormhole_mailbox.server import build_mailbox\n"
        cases = [("wormhole.lan._serve", lazy),
                 ("wormhole.lan._serve", "import wormhole_mailbox.server\n"),
                 ("wormhole.lan._serve", "def f():\n    import wormhole_relay\n"),
                 ("wormhole.lan._find", lazy)]
        self.assertEqual([len(client_to_server(self.parse(m, src))) for m, src in cases],
                         [0, 1, 1, 1])

    def test_relative_cli_import_from_the_library_is_caught(self):
        imports = self.parse("wormhole.transfer_v2._api",
                             "class C:\n    def m(self):\n        from ..cli import _common\n")
        self.assertEqual([i.target for i in library_to_cli(imports)],
                         ["wormhole.cli._common"])

    def test_cli_and_main_may_import_the_cli(self):
        imports = (self.parse("wormhole.cli.cmd_send", "from . import _common\n")
                   + self.parse("wormhole.__main__", "from .cli.cli import wormhole\n"))
        self.assertEqual(library_to_cli(imports), [])

    def test_cli_private_import_is_caught(self):
        imports = (self.parse("wormhole.cli.cmd_send",
                              "from .._transit._hints import parse_relay_string\n"
                              "def f():\n    from ..transfer import _messages\n"
                              "from .. import _rlcompleter\n")
                   + self.parse("wormhole.cli._x", "from ..session import escape_text\n"
                                "from .. import create, transfer_v2\nfrom . import _kept\n"))
        self.assertEqual([i.target for i in cli_to_private(imports)],
                         ["wormhole._transit._hints", "wormhole.transfer._messages",
                          "wormhole._rlcompleter"])

    def test_analytics_import_is_caught(self):
        imports = self.parse("wormhole_ops.usage",
                             "def f():\n    import wormhole_analytics._schema\n")
        self.assertEqual(len(analytics_imported(imports)), 1)

    def test_server_to_server_and_client_internals_are_caught(self):
        imports = (self.parse("wormhole_relay.server", "from wormhole_mailbox import _limits\n")
                   + self.parse("wormhole_ops.usage", "import wormhole_relay\n")
                   + self.parse("wormhole_mailbox._connection", "from wormhole import _boss\n")
                   + self.parse("wormhole_mailbox._permissions", "from wormhole import _hashcash\n")
                   + self.parse("wormhole_relay._usage",
                                "from wormhole_ops.usage import blur_bytes\n"))
        self.assertEqual([i.target for i in servers_share(imports)],
                         ["wormhole_mailbox._limits", "wormhole_relay", "wormhole._boss"])


# Automat's private attributes the library reaches (wormhole._automat_private)
AUTOMAT_PRIVATE = {"_setTrace", "_automaton", "_transitions"}


class TracingIsGuarded(unittest.TestCase):
    def test_only_the_tracing_helper_touches_automat_private_tracer(self):
        """Automat's private ``_setTrace``, ``_automaton`` and
        ``_transitions`` are reached in one place, wormhole._automat_private,
        which refuses any Automat it was not checked with; every machine
        takes its set_trace from there (docs/architecture.md, "Machines and
        their diagrams")."""
        helper = SRC / "wormhole" / "_automat_private.py"
        direct = []
        for path in sorted(SRC.rglob("*.py")):
            if path == helper:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr in AUTOMAT_PRIVATE:
                    direct.append(f"{path.relative_to(REPO)}:{node.lineno}")
        self.assertEqual(direct, [])
