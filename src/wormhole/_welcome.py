"""What a client tells its human about the Mailbox server's welcome
(Client API, "Welcome Messages"; Mailbox server protocol, "Connection-Specific
(Client-to-Server) Messages"): the message of the day, once, saying
which server sent it; and an upgrade notice when the server's
``current_cli_version`` is newer than this client (as the reference CLI
does, but only when we are older, and only for release versions).

``WelcomeAdvice(relay_url, stderr)`` is a ``welcome_handler`` for
``wormhole.create``; the library uses it when the application gives none,
and the CLI passes its own (its stderr).
"""
import attrs

# server text reaches a terminal escaped (docs/security.md, "What reaches
# the terminal"): a motd cannot drive the terminal
from ._escape import escape_text as _printable


def _older(ours, current):
    """Whether release ``ours`` is older than ``current``; development
    and local versions (``1.2.dev3``, ``1.2+g123``) never are, nor is
    anything that does not parse."""
    from packaging.version import InvalidVersion, Version
    try:
        mine, theirs = Version(ours), Version(str(current))
    except InvalidVersion:
        return False
    if mine.is_devrelease or mine.local is not None:
        return False
    return mine < theirs


def _our_version():
    from . import __version__
    return __version__


@attrs.define
class WelcomeAdvice:
    """A ``welcome_handler`` for ``create()``: shows the server's message of
    the day and a newer-version notice on ``stderr``, once per wormhole."""
    relay_url: str
    stderr: object
    version: str = attrs.field(factory=_our_version)
    shown: bool = False

    def __call__(self, welcome):
        # once per wormhole, also when a reconnection welcomes us again
        if self.shown:
            return
        self.shown = True
        for line in advice(welcome, self.relay_url, self.version):
            print(line, file=self.stderr, flush=True)


def advice(welcome, relay_url, version):
    """The lines to show for ``welcome`` (a dict from the server)."""
    lines = []
    if "motd" in welcome:
        lines.append(f"Message from the Mailbox server at {relay_url}:")
        lines += ["  " + _printable(line) for line in str(welcome["motd"]).splitlines()]
    current = welcome.get("current_cli_version")
    if current is not None and _older(version, current):
        lines.append(f"Notice: the Mailbox server recommends version {_printable(str(current))}; "
                     f"this wormhole is {version}. Consider upgrading if the transfer "
                     "fails.")
    return lines
