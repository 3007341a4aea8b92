"""Where things are: the repository's root (and its scripts, loaded as
modules) and the reference implementation's venv, its executables and its
files. Pure (no process, no socket), so unit tests may use it too;
tests/_processes.py re-exports it for the interop tests."""

import glob
import importlib.util
import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF_VENV_ENV = "WORMHOLE_REFERENCE_VENV"


def reference_bin(tool):
    """``<reference venv>/bin/<tool>`` ($WORMHOLE_REFERENCE_VENV, default
    ``<repo>/.venv-ref``)."""
    venv = os.environ.get(REF_VENV_ENV) or os.path.join(REPO_ROOT, ".venv-ref")
    path = os.path.join(venv, "bin", tool)
    if not os.access(path, os.X_OK):
        # a failure, never a skip: a skipped interop test hides regressions
        raise AssertionError(
            f"the reference implementation is not installed ({path} missing): "
            f"run `./dev test`, which installs it and sets {REF_VENV_ENV}")
    return path


def reference_venv_dir():
    """The reference venv's root ($WORMHOLE_REFERENCE_VENV or .venv-ref)."""
    return os.environ.get(REF_VENV_ENV) or os.path.join(REPO_ROOT, ".venv-ref")


def reference_package_file(package, *parts):
    """A file of an installed reference package (e.g. its db-schemas), read
    where the reference keeps it, never copied into this project."""
    found = glob.glob(os.path.join(reference_venv_dir(), "lib", "python*",
                                   "site-packages", package, *parts))
    if not found:
        raise AssertionError(
            f"{package}/{'/'.join(parts)} not found in the reference venv: "
            "run `./dev test`, which installs it")
    return found[0]


def reference_source_file(dist, *parts):
    """A file of a reference server's source distribution (its misc/munin
    plugins), which `./dev` unpacks into <reference venv>/src/."""
    found = glob.glob(os.path.join(reference_venv_dir(), "src", dist + "-*",
                                   *parts))
    if not found:
        raise AssertionError(
            f"{dist} {'/'.join(parts)} not found in the reference venv's "
            "src/: run `./dev test`, which unpacks the reference's sdists")
    return found[0]


def load_script(name, *parts):
    """The script at ``<repo>/<parts>`` (misc/ tools have hyphens in their
    names, so no import statement reaches them) as a module named
    ``name``, run in this process."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO_ROOT, *parts))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
