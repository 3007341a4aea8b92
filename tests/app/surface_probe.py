"""Print the public surface of the ``wormhole`` package importable by this
interpreter, as JSON: ``{key: description}``.

Run by tests/app/test_surface.py with our venv's python and with the
reference venv's, so the reference is only ever inspected, never imported
into the test process. Keys name a module attribute
(``wormhole.transit.TransitSender``), a method (``...TransitSender.connect``)
or an internal that applications reach for (``wormhole.create().
_boss._next_tx_phase``); a description is the kind and, for callables, the
parameters as (name, kind, has-default).
"""

import importlib
import inspect
import json
import sys
import types
import typing

# the reference 0.24's public modules, and the internals that real
# applications use (docs/api.md)
MODULES = [
    "wormhole", "wormhole.errors", "wormhole.journal", "wormhole.timing", "wormhole.util",
    "wormhole.eventual", "wormhole.observer", "wormhole.ipaddrs", "wormhole.xfer_util",
    "wormhole.tor_manager", "wormhole.transit", "wormhole._status",
    "wormhole.cli.public_relay",
]
NAMED = [
    ("wormhole._dilation.manager", "DilatedWormhole"),
    ("wormhole._dilation.manager", "CanOnlyDilateOnceError"),
    ("wormhole._dilation.manager", "OldPeerCannotDilateError"),
    ("wormhole._interfaces", "ITorManager"),
    ("wormhole.wormhole", "create"),
    # applications' test fixtures import these from wormhole.wormhole
    # (docs/api.md, "Real applications beyond fowl")
    ("wormhole.wormhole", "IDeferredWormhole"),
    ("wormhole.wormhole", "IWormhole"),
    ("wormhole.wormhole", "_DeferredWormhole"),
    ("wormhole.wormhole", "_DelegatedWormhole"),
]


def params(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [[p.name, p.kind.name, p.default is not inspect.Parameter.empty]
            for p in sig.parameters.values() if p.name != "self"]


def describe(obj):
    if inspect.ismodule(obj):
        return {"kind": "module"}
    if isinstance(obj, types.UnionType) or typing.get_origin(obj) is typing.Union:
        return {"kind": "union"}
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return {"kind": "exception"}
        return {"kind": "class", "params": params(obj)}
    if type(obj).__name__ == "InterfaceClass":
        return {"kind": "interface"}
    if callable(obj):
        return {"kind": "function", "params": params(obj)}
    return {"kind": "value", "type": type(obj).__name__}


def methods(cls):
    for name, value in sorted(vars(cls).items()):
        if name.startswith("_") or not callable(value):
            continue
        yield name, value
    for base in cls.__mro__[1:]:
        if base.__module__.startswith("wormhole"):
            yield from methods(base)


def add_class_members(surface, key, cls):
    for name, value in methods(cls):
        surface.setdefault(f"{key}.{name}", describe(value))


def module_surface(surface, modname):
    try:
        mod = importlib.import_module(modname)
    except Exception as e:
        surface[modname] = {"kind": "missing", "error": type(e).__name__}
        return
    surface[modname] = {"kind": "module"}
    exported = getattr(mod, "__all__", None) or []
    for name in dir(mod):
        if name.startswith("_"):
            continue
        value = getattr(mod, name)
        if inspect.ismodule(value):
            continue
        home = getattr(value, "__module__", None)
        if inspect.isclass(value) or inspect.isfunction(value) or inspect.isbuiltin(value):
            # what the module defines or exports on purpose, not what it
            # happens to import (the package itself re-exports its API)
            if modname != "wormhole" and home != modname and name not in exported:
                continue
        elif not (name.isupper() or name in exported or modname == "wormhole"):
            continue  # a module-level value: only constants count
        key = f"{modname}.{name}"
        surface[key] = describe(value)
        if inspect.isclass(value) and not issubclass(value, BaseException):
            add_class_members(surface, key, value)


def wormhole_objects(surface):
    """What ``create()`` returns, and the internals applications touch."""
    from twisted.internet.testing import MemoryReactorClock

    import wormhole
    w = wormhole.create("example.com/surface", "ws://127.0.0.1:1/v1", MemoryReactorClock())
    add_class_members(surface, "wormhole.create()", type(w))
    wd = wormhole.create("example.com/surface", "ws://127.0.0.1:1/v1", MemoryReactorClock(),
                         dilation=True)
    internals = {
        "wormhole.create()._closed_observer.when_fired": lambda: w._closed_observer.when_fired,
        "wormhole.create()._boss._next_tx_phase": lambda: w._boss._next_tx_phase,
        "wormhole.create()._boss._D._manager": lambda: w._boss._D._manager,
        "wormhole.create(dilation=True)._boss._D._manager": lambda: wd._boss._D._manager,
    }
    for key, get in internals.items():
        try:
            surface[key] = describe(get())
        except AttributeError:
            surface[key] = {"kind": "missing", "error": "AttributeError"}


def main():
    surface = {}
    for modname in MODULES:
        module_surface(surface, modname)
    for modname, name in NAMED:
        key = f"{modname}.{name}"
        try:
            value = getattr(importlib.import_module(modname), name)
        except Exception as e:
            surface[key] = {"kind": "missing", "error": type(e).__name__}
            continue
        surface[key] = describe(value)
        if inspect.isclass(value) and not issubclass(value, BaseException):
            add_class_members(surface, key, value)
    wormhole_objects(surface)
    json.dump(surface, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
