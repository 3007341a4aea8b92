"""A session's outcome from its offers' failures (docs/cli.md "Exit
status"): one offer's failure is itself; several are counted, and the
count is declined when every one was."""
from ..errors import TransferError


def outcome(failures, offers, what):
    """The error of a session in which ``failures`` (exceptions) of
    ``offers`` offers did not complete, or None: the failure itself when
    there was one offer, else a count (``what`` names the offers), declined
    when every failure was."""
    from ..transfer import Declined  # not at import: the CLI's --help stays light
    if not failures:
        return None
    if offers == 1 and len(failures) == 1:
        return failures[0]
    message = f"{len(failures)} of {offers} {what} did not complete"
    if all(isinstance(f, Declined) for f in failures):
        return Declined(message)
    return TransferError(message)
