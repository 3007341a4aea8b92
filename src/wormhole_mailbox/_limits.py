"""The limits the reference lacks, each configurable (docs/server.md).

Each refusal is an `error` message naming the limit (docs/security.md,
"Mailbox server")."""

import attr


@attr.s(frozen=True, slots=True)
class Limits:
    # largest WebSocket message we accept, in bytes; a bigger one gets an
    # `error` (Client API, "Sending Data" says clients send "no more than
    # perhaps 20kB")
    max_message_size = attr.ib(default=1024 * 1024)
    # deepest nesting of JSON arrays/objects in one client message, checked
    # before parsing (the messages of Mailbox server protocol, "All Message
    # Types" nest 3 levels at most)
    max_json_depth = attr.ib(default=32)
    # messages, and bytes of their bodies, kept in one mailbox: Dilation
    # adds two messages per side for every reconnection, so a long-lived
    # dilated session (days of a laptop sleeping and waking) needs room for
    # thousands of small messages, while the bytes bound what one mailbox
    # can cost whatever its messages' size
    max_messages_per_mailbox = attr.ib(default=10000)
    max_bytes_per_mailbox = attr.ib(default=16 * 1024 * 1024)
    # bytes we queue for a client that does not read before we close it
    max_send_buffer = attr.ib(default=8 * 1024 * 1024)
    # seconds without any message from a bound client before we close it
    idle_timeout = attr.ib(default=24 * 3600.0)
    # seconds a client may take from connecting to a successful `bind`
    bind_timeout = attr.ib(default=120.0)
    # seconds for the WebSocket (HTTP upgrade) handshake itself
    handshake_timeout = attr.ib(default=30.0)
    # nameplates / mailboxes one AppID may hold at a time
    max_nameplates = attr.ib(default=100000)
    max_mailboxes = attr.ib(default=100000)
    # how long an unattended nameplate or mailbox lives, and how often we look
    channel_expiration = attr.ib(default=11 * 3600.0)
    prune_interval = attr.ib(default=600.0)
    # longest nameplate accepted in `claim`/`release` (digits)
    max_nameplate_length = attr.ib(default=12)
    # longest appid, side, mailbox id, phase, id (characters)
    max_token_length = attr.ib(default=1024)


def limits_from(**kwargs):
    """Limits with the given overrides; unknown names are a TypeError."""
    return Limits(**kwargs)
