"""Magic Wormhole: get things from one computer to another, safely.

The public API is spec 004 chapter 5 ("The Magic-Wormhole API").

``create``, the journals and ``input_with_completion`` are imported on
first use (PEP 562 module ``__getattr__``): they pull in the whole client
(autobahn, spake2, twisted's endpoints and TLS: ~0.3 CPU-s), which
``wormhole --version``, ``--help`` and the commands' option parsing do not
need. ``import wormhole; wormhole.create(...)`` and ``from wormhole import
create`` work as before.
"""

from .errors import (AlreadyChoseNameplateError, AlreadyChoseWordsError,
                     AlreadyInputNameplateError, KeyFormatError, LonelyError,
                     MustChooseNameplateFirstError, NoKeyError, NoTorError, OnlyOneCodeError,
                     RelayURLError, ServerConnectionError, ServerError, Timeout, TransferError,
                     WelcomeError, WormholeClosed, WormholeError, WrongPasswordError)

__version__ = "0.1.0"

# public name -> the submodule that defines it
_LAZY = {
    "create": "wormhole",
    "Journal": "journal",
    "ImmediateJournal": "journal",
    "input_with_completion": "_rlcompleter",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "create", "input_with_completion", "__version__", "Journal", "ImmediateJournal",
    "WormholeError", "WelcomeError", "ServerError", "LonelyError", "WrongPasswordError",
    "KeyFormatError", "NoKeyError", "OnlyOneCodeError", "MustChooseNameplateFirstError",
    "AlreadyChoseNameplateError", "AlreadyChoseWordsError", "AlreadyInputNameplateError",
    "WormholeClosed", "ServerConnectionError", "NoTorError", "TransferError", "Timeout",
    "RelayURLError",
]
