"""Load misc/generate-diagrams.py (a script, not a package module) once."""

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "misc" / "generate-diagrams.py"

_module = None


def load():
    global _module
    if _module is None:
        spec = importlib.util.spec_from_file_location("_generate_diagrams", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _module = module
    return _module


_generated = {}


def generated():
    """{file name: .dot source} for the code as it is now (computed once)."""
    if not _generated:
        gen = load()
        gen._use_this_checkout()
        _generated.update(gen.generate())
    return _generated
