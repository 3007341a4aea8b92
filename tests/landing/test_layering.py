"""The receiving rules and transfer-v2 are library code: importing them
(every module of both) loads nothing of the command line
(docs/architecture.md, "Layering": the library never imports the command
line). In a fresh interpreter, since this test process has long imported
the CLI."""
import subprocess
import sys

from twisted.trial import unittest

_CHECK = """
import pkgutil, importlib, sys
import wormhole._landing, wormhole.transfer_v2
for package in (wormhole._landing, wormhole.transfer_v2):
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
print(sorted(m for m in sys.modules if m == "wormhole.cli" or m.startswith("wormhole.cli.")))
"""


class Layering(unittest.TestCase):
    def test_no_cli_below(self):
        """Every module of wormhole._landing and wormhole.transfer_v2
        imported: no wormhole.cli module loaded."""
        out = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True,
                             check=True)
        self.assertEqual(out.stdout.strip(), "[]")
