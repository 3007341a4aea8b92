"""The classic file-transfer library stands on its own
(docs/architecture.md, "Layering"; docs/transfer.md): nothing under
``wormhole.transfer`` imports ``wormhole.cli`` (read from the source: no
subprocess here)."""
import ast
import os

from twisted.trial import unittest

import wormhole.transfer

PACKAGE = os.path.dirname(wormhole.transfer.__file__)


def imported_modules(path):
    """Every module an ``import`` in ``path`` names, relative ones made
    absolute (``wormhole.transfer`` is the package they are relative to)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ["wormhole", "transfer"][:max(0, 2 - node.level + 1)]
            module = ".".join(base + ([node.module] if node.module else []))
            if node.level == 0:
                module = node.module
            names.append(module)
            names.extend(f"{module}.{alias.name}" for alias in node.names)
    return names


class Layering(unittest.TestCase):

    def test_no_source_imports_the_cli(self):
        """No module of the package names ``wormhole.cli`` in an import."""
        offenders = []
        for name in sorted(os.listdir(PACKAGE)):
            if name.endswith(".py"):
                for module in imported_modules(os.path.join(PACKAGE, name)):
                    if module == "wormhole.cli" or module.startswith("wormhole.cli."):
                        offenders.append((name, module))
        self.assertEqual(offenders, [])

    def test_relative_imports_are_resolved(self):
        """The scan sees ``from ..cli import x`` as ``wormhole.cli``: the
        check above cannot pass by misreading a relative import."""
        path = os.path.join(self.mktemp() + ".py")
        with open(path, "w") as f:
            f.write("from ..cli import _progress\nfrom . import _mover\n")
        self.assertIn("wormhole.cli._progress", imported_modules(path))
        self.assertIn("wormhole.transfer._mover", imported_modules(path))
