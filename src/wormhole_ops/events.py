# -*- test-case-name: tests.unit.ops.test_events -*-
"""Usage events: the schema of one JSON object per line, for the analytics
pipeline (documented and versioned in ``docs/usage-events.md``).

The servers write them through ``wormhole_ops.usage.EventWriter`` (daily
files, a worker thread, never blocking the reactor); the analytics jobs
read them; ``build_event`` is the one place their fields are listed, so
nothing a caller adds by accident (an IP address, a peer string) is
written. Times and sizes arrive already blurred when the operator asked
for ``--blur-usage`` (``wormhole_ops.usage``).
"""

import datetime

SCHEMA_VERSION = 1

MAILBOX_RESULTS = ("happy", "lonely", "scary", "errory", "pruney",
                   "crowded", "quiet")
# "empty": a connection that closed (or timed out) before a whole
# handshake line, as both relays record it (docs/relay.md)
RELAY_RESULTS = ("happy", "lonely", "errory", "impatient", "redundant",
                 "jilted", "empty")
# "bind" is one client's bind (Mailbox server protocol, "Connection-Specific
# (Client-to-Server) Messages": side and client_version):
# the version shares come from these, deduplicated by side
KINDS = ("nameplate", "mailbox", "relay", "bind")


def _client(side, version):
    """One ``{"side", "impl", "version"}`` from a bind's ``side`` and
    ``client_version`` (Mailbox server protocol, "Connection-Specific
    (Client-to-Server) Messages": ``[implementation, version]``);
    anything else in ``version`` is ignored, not trusted."""
    impl = ver = None
    if isinstance(version, (list, tuple)) and len(version) == 2:
        impl, ver = (str(v)[:64] for v in version)
    return {"side": None if side is None else str(side)[:64],
            "impl": impl, "version": ver}


def build_event(server_id, kind, started, total_time, waiting_time, result,
                app_id=None, total_bytes=None, clients=()):
    """The event as a dict of exactly the documented fields."""
    return {
        "v": SCHEMA_VERSION,
        "server": server_id,
        "kind": kind,
        "app_id": app_id,
        "started": started,
        "waiting_time": waiting_time,
        "total_time": total_time,
        "result": result,
        "bytes": total_bytes,
        "clients": [_client(side, version) for side, version in clients],
    }


def day_of(seconds):
    """The UTC day (``YYYY-MM-DD``) of a Unix time: the day file an
    event goes to."""
    return datetime.datetime.fromtimestamp(
        seconds, datetime.timezone.utc).strftime("%Y-%m-%d")
