"""Magic Wormhole: get things from one computer to another, safely.

The public API is spec 004 chapter 5 ("The Magic-Wormhole API").
"""

from .errors import (AlreadyChoseNameplateError, AlreadyChoseWordsError,
                     AlreadyInputNameplateError, KeyFormatError, LonelyError,
                     MustChooseNameplateFirstError, NoKeyError, NoTorError, OnlyOneCodeError,
                     RelayURLError, ServerConnectionError, ServerError, Timeout, TransferError,
                     WelcomeError, WormholeClosed, WormholeError, WrongPasswordError)
from .journal import ImmediateJournal, Journal
from .wormhole import create

__version__ = "0.1.0"

from ._rlcompleter import input_with_completion

__all__ = [
    "create", "input_with_completion", "__version__", "Journal", "ImmediateJournal",
    "WormholeError", "WelcomeError", "ServerError", "LonelyError", "WrongPasswordError",
    "KeyFormatError", "NoKeyError", "OnlyOneCodeError", "MustChooseNameplateFirstError",
    "AlreadyChoseNameplateError", "AlreadyChoseWordsError", "AlreadyInputNameplateError",
    "WormholeClosed", "ServerConnectionError", "NoTorError", "TransferError", "Timeout",
    "RelayURLError",
]
