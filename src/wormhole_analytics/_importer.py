"""Import the reference servers' usage records as usage events, so
operators of existing servers can use the same pipeline (docs/analytics.md,
"Commands").

Sources, read with Python's ``sqlite3`` (no JDBC):

- the Mailbox server 0.8 usage database (schema ``usage-v2``): tables
  ``nameplates``, ``mailboxes`` and ``client_versions``;
- the Transit relay 0.5 usage database (schema ``v1``): table ``usage``;
- the relay's JSON log (``--log-fd``): one object per line with
  ``started``, ``total_time``, ``waiting_time``, ``total_bytes``, ``mood``.

The output is JSON-lines event files, one per UTC day
(``imported-<server>-<day>.jsonl``), ready for ``ingest``. Rows the
reference wrote that our schema would refuse (an unknown mood, say) are
still written: ``ingest`` puts them into the quarantine, where they are
counted, rather than the importer hiding them.
"""

import json
import os
import sqlite3

from wormhole_ops.events import build_event, day_of


def _tables(db):
    return {r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type='table'")}


def mailbox_events(path, server_id):
    """Events from a reference Mailbox server usage database (v2)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = _tables(db)
        version = db.execute("SELECT version FROM version").fetchone()
        if version is None or version[0] != 2 or "client_versions" \
                not in tables:
            raise ValueError(
                f"{path}: not a mailbox usage database of schema version 2 "
                f"(found version {version and version[0]}); upgrade it by "
                "starting the reference server 0.8 on it once")
        for kind, table in (("nameplate", "nameplates"),
                            ("mailbox", "mailboxes")):
            for app_id, started, waiting, total, result in db.execute(
                    f"SELECT app_id, started, waiting_time, total_time,"
                    f" result FROM {table} ORDER BY started"):
                yield build_event(server_id, kind, started, total, waiting,
                                  result, app_id=app_id)
        for app_id, side, t, impl, ver in db.execute(
                "SELECT app_id, side, connect_time, implementation, version"
                " FROM client_versions ORDER BY connect_time"):
            cv = [impl, ver] if impl is not None or ver is not None else None
            yield build_event(server_id, "bind", t, None, None, None,
                              app_id=app_id, clients=[(side, cv)])
    finally:
        db.close()


def relay_db_events(path, server_id):
    """Events from a reference Transit relay usage database (v1)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        if "usage" not in _tables(db):
            raise ValueError(f"{path}: no `usage` table; is this a transit "
                             "relay usage database?")
        for started, total, waiting, nbytes, result in db.execute(
                "SELECT started, total_time, waiting_time, total_bytes,"
                " result FROM usage ORDER BY started"):
            yield build_event(server_id, "relay", started, total, waiting,
                              result, total_bytes=nbytes)
    finally:
        db.close()


def relay_log_events(path, server_id):
    """Events from a relay JSON log. A line that is not a JSON object is
    passed on as it is, so ingest quarantines (and counts) it."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                rec = None
            if not isinstance(rec, dict):
                yield line.rstrip("\n")
                continue
            yield build_event(
                server_id, "relay", rec.get("started"),
                rec.get("total_time"), rec.get("waiting_time"),
                rec.get("mood", rec.get("result")),
                total_bytes=rec.get("total_bytes"))


def write_events(events, out_dir, server_id):
    """Write events into one file per UTC day of ``started``; returns the
    number of lines written per file."""
    os.makedirs(out_dir, exist_ok=True)
    files, counts = {}, {}
    try:
        for e in events:
            if isinstance(e, str):
                day, line = "unparsed", e
            else:
                try:
                    day = day_of(float(e["started"]))
                except (TypeError, ValueError, OverflowError, OSError):
                    day = "unparsed"
                line = json.dumps(e, separators=(",", ":"))
            name = os.path.join(out_dir, f"imported-{server_id}-{day}.jsonl")
            if name not in files:
                files[name] = open(  # noqa: SIM115 (closed below)
                    name, "w", encoding="utf-8")
                counts[name] = 0
            files[name].write(line + "\n")
            counts[name] += 1
    finally:
        for f in files.values():
            f.close()
    return counts
