"""Errors the client library signals (Client API, "Code Management",
"Welcome Messages", "Closing").

Every message says what went wrong and, where there is one, what to do.
"""


class WormholeError(Exception):
    """Parent class for every error this library signals to applications."""


class UnsendableFileError(Exception):
    """A file could not be sent (the CLI raises this; kept for import
    compatibility of applications written against the reference)."""


class ServerError(WormholeError):
    """The Mailbox server sent an ``error`` message (Mailbox server protocol,
    "Connection-Specific (Client-to-Server) Messages").

    ``str()`` is the server's own text (what the reference shows users);
    ``orig`` is the command it answered, when the server said. ``args``
    are the reference 0.24's, ``(message, orig)``.
    """

    def __init__(self, message, orig=None):
        super().__init__(*((message,) if orig is None else (message, orig)))
        self.orig = orig

    def __str__(self):
        return str(self.args[0])


class WelcomeError(WormholeError):
    """The server's welcome carried ``error``: it will not serve us
    (Client API, "Welcome Messages"), or we cannot satisfy its ``permission-required``."""


class ServerConnectionError(WormholeError):
    """We could not connect to the Mailbox server at all."""

    def __init__(self, url, reason):
        self.url = url
        self.reason = reason
        super().__init__(url, reason)

    def __str__(self):
        return f"could not connect to the Mailbox server at {self.url}: {self.reason}"


class Timeout(WormholeError):
    """An operation took longer than the application allowed."""


class WrongPasswordError(WormholeError):
    """Key confirmation failed: a message from the peer did not decrypt.

    Either the other side typed the code wrong, or someone tried to guess
    it and failed (Client-to-client protocol). The wormhole has been closed.
    """

    def __str__(self):
        return ("The peer's message did not decrypt: the two sides did not "
                "use the same code. One of you mistyped it, or someone tried "
                "to guess it and failed. Start again with a new code.")


class KeyFormatError(WormholeError):
    """The code (or nameplate) is malformed: it must look like
    ``NNN-word-word``, digits first (Client API, "Code Management")."""


class ReflectionAttack(WormholeError):
    """We received our own PAKE message back (reflection)."""


class InternalError(WormholeError):
    """Something inside the library is inconsistent (a bug)."""


class TransferError(WormholeError):
    """Something went wrong with a data transfer."""


class NoPath(TransferError):
    """No connection to the peer for the transfer, and ``leg`` says which
    part of the way failed: "relay", "direct" or "peer"."""

    def __init__(self, leg, message):
        super().__init__(message)
        self.leg = leg


class NoTorError(WormholeError):
    """Tor support was requested but txtorcon is not installed."""


class NoKeyError(WormholeError):
    """``derive_key()`` was called before the key was established."""


class OnlyOneCodeError(WormholeError):
    """Only one of allocate_code/set_code/input_code may be called, once."""


class MustChooseNameplateFirstError(WormholeError):
    """The input helper needs ``choose_nameplate()`` before word
    completion or ``choose_words()`` (Client API, "Code Management")."""


class AlreadyChoseNameplateError(WormholeError):
    """``choose_nameplate()`` was already called on this input helper."""


class AlreadyChoseWordsError(WormholeError):
    """``choose_words()`` was already called on this input helper."""


class AlreadyInputNameplateError(WormholeError):
    """The nameplate was already input (a second one cannot be)."""


class WormholeClosed(WormholeError):
    """The wormhole was closed before this event could happen: a pending
    ``get_*`` Deferred is errbacked with this after a clean close, and
    the code-entry helper refuses with it once the wormhole closes
    (docs/api.md "After close"). ``reason`` is what closed it: the mood
    (``"happy"``, ``"lonely"``, ...) of a ``close()``, or the error that
    closed it (a ServerConnectionError when there is no server to ask)."""

    @property
    def reason(self):
        return self.args[0] if self.args else None


class WormholeClosedError(InternalError, OnlyOneCodeError, WormholeClosed):
    """A code command (allocate_code/set_code/input_code) after the
    wormhole was closed. The reference 0.24 raises OnlyOneCodeError here,
    so this is one too (docs/api.md "Behaviour differences"); it is also a
    WormholeClosed with the ``reason`` the wormhole closed for."""

    def __init__(self, message="this wormhole is already closed", reason=None):
        super().__init__(message)
        self._reason = reason

    @property
    def reason(self):
        return self._reason

    def __str__(self):
        if isinstance(self._reason, Exception):
            # LonelyError and WrongPasswordError say nothing by str() alone
            return f"{self.args[0]}: {str(self._reason) or type(self._reason).__name__}"
        if self._reason is not None:
            return f"{self.args[0]} (mood {self._reason!r})"
        return str(self.args[0])


class LonelyError(WormholeError):
    """We closed before hearing anything from the peer (mood ``lonely``)."""


class RelayURLError(WormholeError, ValueError):
    """The relay URL given to ``create()`` is not a ``ws://`` or ``wss://``
    URL with a host; the message says what was wrong."""


class ProtocolError(WormholeError):
    """The server sent something we cannot make sense of (a malformed
    message); the wormhole is closed with mood ``errory``."""


class PhaseOverflow(ProtocolError):
    """The peer added more distinct phases to the mailbox than the Mailbox
    machine remembers (``create(_max_phases=)``, docs/security.md "Mailbox
    client"); the wormhole is closed with mood ``errory``."""


class UnreadOverflow(ProtocolError):
    """The peer sent more messages than the application has read, beyond
    ``create(_max_unread=, _max_unread_bytes=)`` (docs/security.md
    "Mailbox client"); the wormhole is closed with mood ``errory``."""
