"""Where the real applications beyond fowl live for tests/app (docs/api.md,
"Real applications beyond fowl"), and how each run chooses its wormhole library.

``./dev test`` installs them, pinned, into a venv of their own
(``.venv-apps``, or $WORMHOLE_APPS_VENV) with their dependencies, which
include the reference magic-wormhole 0.24. A run "on the reference" uses
that venv as it is; a run "on ours" puts this repository's ``src/`` first
on PYTHONPATH, so ``import wormhole`` in the application (and in every
process it starts) is this library while everything else stays the same:
the two runs differ only in the wormhole library.
"""

import os
import subprocess

from tests._processes import REPO_ROOT, child_env

APPS_VENV_ENV = "WORMHOLE_APPS_VENV"
# what ./dev installs there; a test fails, never skips, when it is missing
APPS = {"tahoe-lafs": "1.20.0", "magic-folder": "24.3.0", "critical-wormhole-tools": "0.3.0",
        "magic-wormhole": "0.24.0"}
LIBRARIES = ("reference", "ours")


def apps_venv():
    return os.environ.get(APPS_VENV_ENV) or os.path.join(REPO_ROOT, ".venv-apps")


def apps_bin(tool):
    path = os.path.join(apps_venv(), "bin", tool)
    if not os.access(path, os.X_OK):
        raise AssertionError(f"{path} is missing: run `./dev test`, which installs the "
                             f"applications ({', '.join(APPS)}) into {apps_venv()}")
    return path


def app_env(library):
    """The environment for an application's processes on ``library``
    ("reference" or "ours")."""
    if library not in LIBRARIES:
        raise ValueError(f"library must be one of {LIBRARIES}, not {library!r}")
    env = child_env()
    env["PATH"] = os.path.join(apps_venv(), "bin") + os.pathsep + env.get("PATH", "")
    env["LANG"] = env["LC_ALL"] = "C.UTF-8"
    if library == "ours":
        env["PYTHONPATH"] = os.path.join(REPO_ROOT, "src")
    return env


def require_apps(library):
    """Fail unless the pinned applications are installed and ``import
    wormhole`` gives ``library``'s wormhole under app_env(library)."""
    code = ("import importlib.metadata as m, wormhole; "
            "print(wormhole.__file__); "
            "print(' '.join(m.version(p) for p in %r))" % (list(APPS),))
    out = subprocess.run([apps_bin("python"), "-c", code], capture_output=True, text=True,
                         env=app_env(library), cwd="/")
    if out.returncode != 0:
        raise AssertionError(f"the applications' venv is broken: {out.stderr[-1000:]}")
    where, versions = out.stdout.strip().splitlines()
    if versions.split() != list(APPS.values()):
        raise AssertionError(f"installed {versions}, pinned {list(APPS.values())}: "
                             "run `./dev test`")
    ours = where.startswith(os.path.join(REPO_ROOT, "src") + os.sep)
    if ours != (library == "ours"):
        raise AssertionError(f"import wormhole gave {where} for the {library} run")
