"""The bound on the peer's messages the application has not read yet.

After the key, every numeric phase the peer sends (Client-to-client protocol)
waits for the application: in the Boss while an earlier phase is missing,
then in the Deferred facade until ``get_message()`` takes it. A peer that
sends phase after phase that the application never reads would otherwise
grow that queue without end (docs/security.md, "Mailbox client").
Nothing can push back on the peer (the Mailbox server holds what it sent,
and Dilation's phases share the connection), so going over the bound is a
clear failure: the wormhole closes with UnreadOverflow.
"""

from .errors import UnreadOverflow

__all__ = ["MAX_UNREAD", "MAX_UNREAD_BYTES", "UnreadBudget", "UnreadOverflow"]

MAX_UNREAD = 1000
MAX_UNREAD_BYTES = 32 * 1024 * 1024


class UnreadBudget:
    """Counts the peer's messages from arrival until the application has
    them; ``admit`` raises UnreadOverflow for one more than the bound."""

    def __init__(self, max_messages=MAX_UNREAD, max_bytes=MAX_UNREAD_BYTES):
        self._max_messages = max_messages
        self._max_bytes = max_bytes
        self.messages = 0
        self.bytes = 0

    def admit(self, nbytes):
        if (self.messages >= self._max_messages
                or self.bytes + nbytes > self._max_bytes):
            raise UnreadOverflow(
                f"the peer sent {self.messages + 1} messages ({self.bytes + nbytes} bytes) "
                f"that the application has not read; the limit is {self._max_messages} "
                f"messages, {self._max_bytes} bytes (docs/security.md)")
        self.messages += 1
        self.bytes += nbytes

    def taken(self, nbytes):
        """The application has one message of ``nbytes``."""
        self.messages -= 1
        self.bytes -= nbytes
