"""A package's public names imported on first use (PEP 562): the
``__getattr__`` and ``__dir__`` of ``wormhole.transfer`` and
``wormhole.session``, whose names the command line needs a few of
without loading the rest (docs/performance.md, "Session 8: the fixed
part")."""
import importlib


def names(namespace, where, base):
    """(``__getattr__``, ``__dir__``) for the module whose globals are
    ``namespace``: ``where`` maps each public name to the module (under
    ``base``) that defines it; a name found is kept in ``namespace``."""
    def __getattr__(name):  # noqa: N807 (the module hook's name)
        if name not in where:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        found = getattr(importlib.import_module(f"{base}.{where[name]}"), name)
        namespace[name] = found  # looked up here once
        return found

    def __dir__():  # noqa: N807
        return sorted(set(namespace) | set(where))
    return __getattr__, __dir__
