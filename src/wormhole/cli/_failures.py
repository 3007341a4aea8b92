"""What a failure is called and which exit status it gets (docs/cli.md
"Exit status" and "Messages"): the one place that decides, for every
command.

A transfer that did not happen never exits 0: a failure is
named by the leg that failed -- the Mailbox server, the Transit relay,
the direct path, or the peer -- in one line starting ``ERROR:``; a
transfer declined by a human or refused by our receiving rules exits 3,
every other failure 1, an interruption (SIGINT, SIGTERM) 128 plus the
signal's number, as shells report a command killed by it.
"""
from twisted.python.failure import Failure

from ..errors import (
    KeyFormatError,
    LonelyError,
    RelayURLError,
    ServerConnectionError,
    ServerError,
    TransferError,
    WelcomeError,
    WormholeError,
    WrongPasswordError,
)
from ..session import escape_text

# exit statuses (docs/cli.md, "Exit status"); click itself exits 2 on a
# usage error
EXIT_FAILED = 1
EXIT_DECLINED = 3


def _reason(reason):
    if isinstance(reason, Failure):
        return escape_text(reason.getErrorMessage())
    return escape_text(reason)


def describe_error(exc, cfg):
    """One readable message for an error a user can cause or meet, or
    None for a bug. The error's own text is escaped (``escape_text``): it
    often carries what a peer or a server said (file names, their error
    strings, the welcome), which must not drive the terminal or forge
    lines."""
    shown = escape_text(exc)
    if isinstance(exc, WelcomeError):
        return (f"ERROR: the mailbox server at {cfg.relay_url} refuses to serve us. "
                f"It said:\n\n{shown}")
    if isinstance(exc, ServerConnectionError):
        url = getattr(exc, "url", cfg.relay_url)
        reason = _reason(getattr(exc, "reason", exc))
        # no internet, but a peer on this network: docs/lan.md
        hint = "" if cfg.lan else " (on a local network without it: --lan)"
        return f"ERROR: cannot connect to the mailbox server at {url}: {reason}{hint}"
    if isinstance(exc, ServerError):
        return f"ERROR: the mailbox server reported an error: {shown}"
    if isinstance(exc, LonelyError):
        return "ERROR: the other side never showed up: no key was established."
    if isinstance(exc, WrongPasswordError):
        return f"ERROR: {shown}"
    if isinstance(exc, KeyFormatError):
        return (f"ERROR: that is not a valid wormhole code: {shown}\n"
                "A code is the sender's number, then the words, all joined by "
                "hyphens (like 4-purple-sausages).")
    if isinstance(exc, RelayURLError):
        return f"ERROR: bad --relay-url {cfg.relay_url!r}: {shown}"
    if isinstance(exc, TransferError):
        return f"ERROR: {shown}"
    from ..transit import TransitError
    if isinstance(exc, TransitError):
        # one line: the other side may simply have gone away
        return (f"ERROR: no connection to the other side for the transfer ({shown}): "
                "it may have gone away, or neither a direct connection nor the "
                f"Transit relay {cfg.transit_helper} reaches it")
    if isinstance(exc, WormholeError):
        return f"ERROR: {type(exc).__name__}: {shown}"
    return None


def exit_status(exc):
    """3 when the transfer was declined (a human said no, on either side,
    or our receiver refused the offer before anything came), 1 for every
    other failure (a zipfile refused after it came is a failure)."""
    from ..transfer import Declined  # not at import: `wormhole --help` stays light
    if isinstance(exc, Declined):
        return EXIT_DECLINED
    return EXIT_FAILED
