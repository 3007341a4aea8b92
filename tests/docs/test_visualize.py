"""``automat-visualize PACKAGE``, Automat's own diagram tool, runs on every
package under src/ and draws every machine (docs/architecture.md,
"Machines and their diagrams"): one ``.dot`` per machine that
misc/generate-diagrams.py draws for docs/state-machines/.

``--image-directory ''`` makes the tool write only the ``.dot`` sources, so
this needs the ``graphviz`` Python package (the ``visualize`` extra, in
``test``) but not Graphviz's ``dot`` program.
"""

import shutil
import subprocess
import sys
from pathlib import Path

from twisted.trial import unittest

from .._absent import SERVER_ONLY, SPARK_ONLY, run_without
from . import generator
from .generator import generated

# the console script Automat installs beside the interpreter (in a venv),
# else the one on PATH
_BESIDE = Path(sys.executable).parent / "automat-visualize"
TOOL = _BESIDE if _BESIDE.exists() else Path(shutil.which("automat-visualize") or _BESIDE)


def machines_of(package):
    """The machine diagrams the generator makes for ``package``."""
    return sorted(name for name in generated()
                  if name.startswith(package + ".") and name != "wiring.dot")


def dot_files(directory):
    return sorted(p.name for p in Path(directory).glob("*.dot"))


class AutomatVisualize(unittest.TestCase):
    def setUp(self):
        self.gen = generator.load()

    def visualize(self, package):
        """Run ``automat-visualize`` on ``package`` into a new directory;
        return the ``.dot`` files it wrote."""
        out = Path(self.mktemp()).resolve()
        out.mkdir()
        done = subprocess.run(
            [str(TOOL), "--quiet", "--dot-directory", str(out),
             "--image-directory", "", package],
            cwd=out, capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        return dot_files(out)

    def test_one_dot_per_machine_in_every_package(self):
        """For each package the generator reads (every package under src/),
        the tool runs and writes exactly the machines the generator draws."""
        self.assertTrue(TOOL.exists(), f"{TOOL} missing: pip install automat")
        for package in self.gen.PACKAGES:
            self.assertEqual(self.visualize(package), machines_of(package), package)

    def test_the_generator_reads_every_package_in_src(self):
        """Every import package under src/ (but the twistd plugins'
        namespace) is one the generator, and so the test above, reads."""
        src = generator.REPO / "src"
        packages = sorted(p.parent.name for p in src.glob("*/__init__.py"))
        self.assertEqual(packages, sorted(self.gen.PACKAGES))

    def test_every_machine_belongs_to_a_package(self):
        """The packages' diagrams together are all the machines of
        docs/state-machines/ (nothing drawn from elsewhere)."""
        drawn = {n for p in self.gen.PACKAGES for n in machines_of(p)}
        self.assertEqual(drawn, set(generated()) - {"wiring.dot"})

    def test_the_client_is_drawn_without_server_or_spark_packages(self):
        """``automat-visualize wormhole`` imports every client module: it
        runs, with the same machines, where the servers' and the pipeline's
        dependencies are absent (it once crashed on pyspark and numpy)."""
        out = Path(self.mktemp()).resolve()
        out.mkdir()
        rc, text = run_without(SERVER_ONLY + SPARK_ONLY, f"""
            from automat._visualize import tool
            tool(_argv=["--quiet", "--dot-directory", {str(out)!r},
                        "--image-directory", "", "wormhole"])
            """)
        self.assertEqual(rc, 0, text)
        self.assertEqual(dot_files(out), machines_of("wormhole"))
