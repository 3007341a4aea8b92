"""The relay's limits: every one bounds what a client can make us hold.

The reference relay (0.5) has only the handshake length limit; the timeouts
are ours (docs/relay.md "Options"). ``None`` turns a timeout off.
"""

import attr


@attr.s(frozen=True)
class Limits:
    # longest handshake line, newline included, before we say
    # "bad handshake" (a good one is at most 104 bytes; the reference
    # gives up past 1024)
    max_handshake_length = attr.ib(default=1024)
    # seconds from connect to a complete handshake line
    handshake_timeout = attr.ib(default=60.0)
    # seconds a good handshake waits for its partner before the relay gives
    # up on it (mood "jilted")
    pairing_timeout = attr.ib(default=600.0)
    # seconds a pair may go without a byte in either direction (off by
    # default, like the reference: an idle pair costs only two sockets)
    idle_timeout = attr.ib(default=None)
    # seconds a connection we closed may take to flush before it is
    # aborted (a client that stops reading cannot pin our buffers)
    close_timeout = attr.ib(default=30.0)
    # connections that may wait on one token at the same time (the same
    # side reconnecting, or strangers guessing); one more is "crowded"
    max_waiting_per_token = attr.ib(default=8)
