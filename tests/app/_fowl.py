"""Where fowl lives for these tests, and how its processes get a loopback-
only world.

fowl 26.8.0 is installed by ``./dev`` twice: with ``--no-deps`` into our
venv (so ``import wormhole`` is this library) and normally into the
reference venv (a peer on the reference 0.24). Its test suite starts
``python -m twisted wormhole-mailbox`` on the fixed port 4000 and its
children as ``python`` from PATH, so each run gets its own network
namespace (no clash on port 4000 with anything else on the machine, and
no address but 127.0.0.1 to advertise) and a PATH whose first ``python``
is the venv's.
"""

import os
import sys

from tests._processes import child_env, reference_bin

FOWL_VERSION = "26.8.0"


def our_python():
    return sys.executable


def reference_python():
    return reference_bin("python")


def fowl_env(python):
    """The environment for fowl's processes: ``python`` (and ``fowld``)
    on PATH are those of ``python``'s venv."""
    env = child_env()
    env["PATH"] = os.path.dirname(python) + os.pathsep + env.get("PATH", "")
    env["LANG"] = env["LC_ALL"] = "C.UTF-8"
    return env


def require_fowl(python):
    """Fail (never skip) when fowl is not installed next to ``python``."""
    import subprocess
    out = subprocess.run([python, "-c", "import fowl; print(fowl.__version__)"],
                         capture_output=True, text=True)
    if out.returncode != 0 or out.stdout.strip() != FOWL_VERSION:
        raise AssertionError(
            f"fowl {FOWL_VERSION} is not installed for {python} ({out.stderr.strip()[-200:]}): "
            "run `./dev test`, which installs it")
