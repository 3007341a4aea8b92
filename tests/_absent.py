"""Run Python where some packages cannot be imported, as on a machine where
they were never installed (tests/test_install.py, tests/docs/test_visualize.py)."""

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# what only the servers (the mailbox/relay extras) and only the analytics
# pipeline (the analytics extra) need
SERVER_ONLY = ("prometheus_client",)
# what only --lan and wormhole.lan need (the lan extra; with the Mailbox server)
LAN_ONLY = ("zeroconf", "ifaddr")
SPARK_ONLY = ("pyspark", "numpy", "pandas", "pyarrow", "matplotlib", "datasketches")

# Run in a fresh interpreter: the named top-level modules cannot be
# imported, as on a machine where they were never installed.
_BLOCKER = textwrap.dedent("""\
    import importlib.abc
    import sys

    ABSENT = {absent!r}
    assert not [m for m in sys.modules if m.split(".")[0] in ABSENT]

    class Absent(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ABSENT:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, Absent())
    """)


def run_without(absent, body):
    """Run ``body`` (Python source) where ``absent`` cannot be imported;
    return (exit code, stdout + stderr)."""
    script = _BLOCKER.format(absent=tuple(absent)) + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr
