"""The test suite's own layout (docs/testing.md, "The project's tests";
docs/architecture.md, "Tests").

Two rules, read from the source with ``ast`` (nothing is imported; an
import inside a function counts too):

- **No module imports a test module.** What two test modules share lives
  in a support module of their area (``_support.py``, ``fakes.py``, ...),
  so that running, moving or deleting one test module never changes
  another.
- **A unit test reaches no helper that starts a process or opens a
  socket.** ``tests/unit/`` holds the tests that need neither (``./dev
  test`` runs them with ``tests/unit_blocker/`` refusing both, which
  catches the unit test's own calls). The support modules a unit test
  imports from ``tests/``, directly or through other support modules, may
  not name any of ``PROCESS_OR_NETWORK``: such a helper belongs to the
  integration tests, even where no unit test calls the part that starts
  something.
"""

import ast
from pathlib import Path

from twisted.trial import unittest

# the folder holding the ``tests`` package: the repository
ROOT = Path(__file__).resolve().parents[2]

# names (a bare name, an attribute or an imported module) that start a
# process or dial/listen on the network; a helper naming one is an
# integration helper
PROCESS_OR_NETWORK = frozenset({
    "subprocess", "multiprocessing", "Popen", "spawnProcess", "fork",
    "posix_spawn", "getProcessOutput", "getProcessOutputAndValue",
    "getProcessValue", "socket", "listenTCP", "connectTCP", "listenUDP",
    "serverFromString", "clientFromString", "TCP4ServerEndpoint",
    "TCP4ClientEndpoint", "HostnameEndpoint",
})


def path_of(name, root=ROOT):
    """The file of module ``name`` under ``root``, or None."""
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


class Module:
    """One module under tests/: the modules under tests/ it imports (with
    the line) and the process-or-network names it uses."""

    def __init__(self, path, root=ROOT):
        self.path = path.relative_to(root)
        self.root = root
        rel = self.path.with_suffix("")
        is_package = rel.name == "__init__"
        self.name = ".".join(rel.parts[:-1] if is_package else rel.parts)
        package = self.name if is_package else self.name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        self.imports = []
        self.risky = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self._saw(node.lineno, alias.name)
            elif isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = parts[:len(parts) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                self._saw(node.lineno, target)
                for alias in node.names:
                    # ``from . import test_x`` imports a module
                    if path_of(f"{target}.{alias.name}", root):
                        self._saw(node.lineno, f"{target}.{alias.name}")
                    if alias.name in PROCESS_OR_NETWORK:
                        self.risky.add(alias.name)
            elif isinstance(node, ast.Name) and node.id in PROCESS_OR_NETWORK:
                self.risky.add(node.id)
            elif isinstance(node, ast.Attribute) and node.attr in PROCESS_OR_NETWORK:
                self.risky.add(node.attr)

    def _saw(self, line, target):
        if target.split(".")[0] in PROCESS_OR_NETWORK:
            self.risky.add(target.split(".")[0])
        if target.split(".")[0] == "tests" and path_of(target, self.root):
            self.imports.append((line, target))


def all_modules(root=ROOT):
    """{name: Module} for every module of the tests package under
    ``root`` (the blocker is no module of it: it is found by PYTHONPATH)."""
    paths = sorted((root / "tests").rglob("*.py"))
    modules = (Module(p, root) for p in paths if "unit_blocker" not in p.parts)
    return {m.name: m for m in modules}


def is_test_module(name):
    return name.rpartition(".")[2].startswith("test_")


def test_module_imports(modules):
    """Each import of a ``test_*`` module by another module."""
    return [f"{m.path}:{line} imports {target}"
            for m in modules.values() for line, target in m.imports
            if is_test_module(target) and target != m.name]


def unit_reaches_process_helpers(modules):
    """Each support module naming a process-or-network call that a unit
    module reaches through its imports under tests/, with the chain."""
    bad = []
    for m in modules.values():
        if not m.name.startswith("tests.unit."):
            continue
        seen, todo = {m.name: [m.name]}, [m.name]
        while todo:
            current = modules.get(todo.pop())
            if current is None:
                continue
            if current is not m and current.risky:
                bad.append(" -> ".join(seen[current.name])
                           + f" (names {', '.join(sorted(current.risky))})")
                continue
            for _, target in current.imports:
                if target not in seen:
                    seen[target] = seen[current.name] + [target]
                    todo.append(target)
    return bad


class Layout(unittest.TestCase):
    def test_no_module_imports_a_test_module(self):
        """Helpers two test modules share live in support modules."""
        self.assertEqual(test_module_imports(all_modules()), [])

    def test_unit_tests_reach_no_process_or_network_helper(self):
        """No support module that a unit test imports, directly or not,
        starts a process or opens a socket."""
        self.assertEqual(unit_reaches_process_helpers(all_modules()), [])


class TheRulesCatchViolations(unittest.TestCase):
    """Each rule fails on what it forbids, in a small tree made here."""

    def tree(self, files):
        root = Path(self.mktemp())
        for name, text in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        for folder in {(root / n).parent for n in files}:
            init = folder / "__init__.py"
            if not init.exists():
                init.write_text("", encoding="utf-8")
        return all_modules(root)

    def test_a_helper_imported_from_a_test_module_is_caught(self):
        modules = self.tree({
            "tests/a/test_one.py": "def helper(): pass\n",
            "tests/a/test_two.py": "def f():\n    from .test_one import helper\n",
            "tests/b/test_three.py": "from ..a import test_one\n",
            "tests/b/test_four.py": "from ..a._support import helper\n",
            "tests/a/_support.py": "def helper(): pass\n",
        })
        self.assertEqual(sorted(test_module_imports(modules)), [
            "tests/a/test_two.py:2 imports tests.a.test_one",
            "tests/b/test_three.py:1 imports tests.a.test_one",
        ])

    def test_a_unit_test_reaching_a_process_helper_is_caught(self):
        modules = self.tree({
            "tests/_proc.py": "from twisted.internet import reactor\n"
                              "def run(p): reactor.spawnProcess(p, 'x')\n",
            "tests/a/_support.py": "from .._proc import run\n",
            "tests/a/_pure.py": "import os\n",
            "tests/unit/a/test_x.py": "from ...a._support import run\n",
            "tests/unit/a/test_y.py": "import subprocess\nfrom ...a._pure import os\n",
            "tests/a/test_z.py": "from .._proc import run\n",
        })
        self.assertEqual(unit_reaches_process_helpers(modules), [
            "tests.unit.a.test_x -> tests.a._support -> tests._proc "
            "(names spawnProcess)",
        ])
