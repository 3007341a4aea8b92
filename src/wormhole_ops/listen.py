# -*- test-case-name: tests.relay.test_plugin -*-
"""The listen queue both servers ask for.

Twisted listens with a queue of 50: a burst of clients connecting at once
(100 pairs of the relay, 500 rendezvous pairs of the Mailbox server)
overflows it, the kernel drops SYNs and those clients retry after one, then
three seconds (docs/performance.md). Ours is 1024 (the kernel caps it at
net.core.somaxconn).
"""

import re

DEFAULT_BACKLOG = 1024


def with_backlog(endpoint, backlog=DEFAULT_BACKLOG):
    """A ``tcp:``/``tcp6:`` endpoint description with ``backlog=`` added
    when it has none; an explicit ``backlog=`` (and any other kind of
    endpoint) is left as given."""
    parts = re.split(r"(?<!\\):", endpoint)
    if parts[0] not in ("tcp", "tcp6"):
        return endpoint
    if any(p.startswith("backlog=") for p in parts[1:]):
        return endpoint
    return f"{endpoint}:backlog={backlog}"
