"""Magic Wormhole: get things from one computer to another, safely.

The public API is the Client API (docs/protocols.md), with
the names the reference 0.24 exports (docs/api.md lists every difference).

``create``, the journals, ``input_with_completion``, ``SubchannelAddress``
and the public submodules are imported on first use (PEP 562 module
``__getattr__``): they pull in the whole client (autobahn, spake2,
twisted's endpoints and TLS: ~0.3 CPU-s), which ``wormhole --version``,
``--help`` and the commands' option parsing do not need. ``import
wormhole; wormhole.create(...)`` and ``from wormhole import create`` work
as usual.
"""

from ._status import ConnectedPeer, ConsumedCode, DilationStatus, WormholeStatus
from ._version import IMPLEMENTATION, __version__
from .errors import (
    AlreadyChoseNameplateError,
    AlreadyChoseWordsError,
    AlreadyInputNameplateError,
    KeyFormatError,
    LonelyError,
    MustChooseNameplateFirstError,
    NoKeyError,
    NoTorError,
    OnlyOneCodeError,
    RelayURLError,
    ServerConnectionError,
    ServerError,
    Timeout,
    TransferError,
    WelcomeError,
    WormholeClosed,
    WormholeError,
    WrongPasswordError,
)

# public name -> the submodule that defines it
_LAZY = {
    "create": "wormhole",
    "Journal": "journal",
    "ImmediateJournal": "journal",
    "from_serialized": "_from_serialized",
    "SerializationError": "_serialization",
    "input_with_completion": "_rlcompleter",
    "SubchannelAddress": "_dilation._subchannel",
    # what the `wormhole` command uses of the library beyond the above
    # (it imports only public names: docs/architecture.md, "Layering")
    "WelcomeAdvice": "_welcome",
    "PGPWordList": "_wordlist",
    "parse_relay_url": "_ws",
    "OnShutdown": "_shutdown",
    "read_in_thread": "_rlcompleter",
    "trace_hook": "_automat_private",
}
# submodules the reference makes reachable as attributes of the package
_SUBMODULES = ("eventual", "ipaddrs", "journal", "observer", "timing", "util", "wormhole",
               "xfer_util", "transit", "tor_manager")


def __getattr__(name):
    import importlib
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))


__all__ = [
    "create", "input_with_completion", "__version__", "Journal", "ImmediateJournal",
    "from_serialized", "SerializationError",
    "WormholeStatus", "DilationStatus", "SubchannelAddress",
    "WormholeError", "WelcomeError", "ServerError", "LonelyError", "WrongPasswordError",
    "KeyFormatError", "NoKeyError", "OnlyOneCodeError", "MustChooseNameplateFirstError",
    "AlreadyChoseNameplateError", "AlreadyChoseWordsError", "AlreadyInputNameplateError",
    "WormholeClosed", "ServerConnectionError", "NoTorError", "TransferError", "Timeout",
    "RelayURLError", "ConnectedPeer", "ConsumedCode", "IMPLEMENTATION", "WelcomeAdvice",
    "PGPWordList", "parse_relay_url", "OnShutdown", "read_in_thread", "trace_hook",
]
