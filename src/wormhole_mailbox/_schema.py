# -*- test-case-name: tests.server.test_schema -*-
"""The Mailbox server's two SQLite files, in the reference server's layout.

An operator replaces a running reference ``magic-wormhole-mailbox-server``
0.8 by ours on the same ``--channel-db`` and ``--usage-db`` files, and back
again: both files keep the reference's tables and columns (channel database
version 1, usage database version 2), so the munin plugins and dashboards
written for the reference keep working. ``tests/server/test_dropin.py``
compares this layout with the reference package's own schema files and runs
both servers on the same files.

Opening a file decides what it is, from its ``version`` table and its
tables: new (created here), the layout we know (opened in place), the
reference's older usage version 1 (upgraded in place to 2, which only adds
``client_versions``, after a copy ``<file>-backup-v1``, as the reference
does), the usage table of an earlier wormhole-twisted (converted, also after
a backup), or anything else (refused with ``SchemaError``, which names the
file and what to do).
"""

from __future__ import annotations

import sqlite3

CHANNEL_VERSION = 1
USAGE_VERSION = 2

# Channels in progress. Mailbox ids are unique across AppIDs here, as in the
# reference (they are 13 random characters from the server).
_CHANNEL_TABLES = """
CREATE TABLE version (version INTEGER);
CREATE TABLE nameplates (
  id INTEGER PRIMARY KEY AUTOINCREMENT, app_id VARCHAR, name VARCHAR,
  mailbox_id VARCHAR REFERENCES mailboxes(id), request_id VARCHAR);
CREATE INDEX nameplates_idx ON nameplates (app_id, name);
CREATE INDEX nameplates_mailbox_idx ON nameplates (app_id, mailbox_id);
CREATE INDEX nameplates_request_idx ON nameplates (app_id, request_id);
CREATE TABLE nameplate_sides (
  nameplates_id REFERENCES nameplates(id), claimed BOOLEAN, side VARCHAR,
  added INTEGER);
CREATE TABLE mailboxes (
  app_id VARCHAR, id VARCHAR PRIMARY KEY, updated INTEGER,
  for_nameplate BOOLEAN);
CREATE INDEX mailboxes_idx ON mailboxes (app_id, id);
CREATE TABLE mailbox_sides (
  mailbox_id REFERENCES mailboxes(id), opened BOOLEAN, side VARCHAR,
  added INTEGER, mood VARCHAR);
CREATE TABLE messages (
  app_id VARCHAR, mailbox_id VARCHAR, side VARCHAR, phase VARCHAR,
  body VARCHAR, server_rx INTEGER, msg_id VARCHAR);
CREATE INDEX messages_idx ON messages (app_id, mailbox_id);
"""

# One row per retired nameplate and mailbox, the live counts in `current`,
# and one row per bind in `client_versions` (usage version 2).
_USAGE_V1_TABLES = """
CREATE TABLE {s}version (version INTEGER);
CREATE TABLE {s}current (
  rebooted INTEGER, updated INTEGER, blur_time INTEGER,
  connections_websocket INTEGER);
CREATE TABLE {s}nameplates (
  app_id VARCHAR, started INTEGER, waiting_time INTEGER, total_time INTEGER,
  result VARCHAR);
CREATE INDEX {s}nameplates_idx ON nameplates (app_id, started);
CREATE TABLE {s}mailboxes (
  app_id VARCHAR, for_nameplate BOOLEAN, started INTEGER, total_time INTEGER,
  waiting_time INTEGER, result VARCHAR);
CREATE INDEX {s}mailboxes_idx ON mailboxes (app_id, started);
CREATE INDEX {s}mailboxes_result_idx ON mailboxes (result);
"""

_USAGE_V2_ADDITIONS = """
CREATE TABLE {s}client_versions (
  app_id VARCHAR, side VARCHAR, connect_time INTEGER,
  implementation VARCHAR, version VARCHAR);
CREATE INDEX {s}client_versions_time_idx ON client_versions (connect_time);
CREATE INDEX {s}client_versions_appid_time_idx
  ON client_versions (app_id, connect_time);
"""

_CHANNEL_NAMES = {"version", "nameplates", "nameplate_sides", "mailboxes",
                  "mailbox_sides", "messages", "sqlite_sequence"}
_USAGE_V1_NAMES = {"version", "current", "nameplates", "mailboxes"}
_USAGE_V2_NAMES = _USAGE_V1_NAMES | {"client_versions"}
# the one table an earlier wormhole-twisted wrote into --usage-db
_OLD_OURS_USAGE = {"usage"}


class SchemaError(ValueError):
    """A database this server cannot use; the message says what to do."""


def _tables(db, schema="main"):
    return {r[0] for r in db.execute(
        f"SELECT name FROM {schema}.sqlite_master WHERE type='table'")}


def _version(db, schema="main"):
    rows = db.execute(f"SELECT version FROM {schema}.version").fetchall()
    return rows[0][0] if len(rows) == 1 else None


def _script(db, sql):
    """Run ``sql`` (several statements) inside the caller's transaction;
    ``executescript`` would commit first."""
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def _backup(db, schema, path, version):
    """Copy the file aside before changing its layout (the way back)."""
    target = sqlite3.connect(f"{path}-backup-v{version}")
    try:
        db.backup(target, name=schema)
    finally:
        target.close()


def prepare_channel_db(db, path):
    """Create the channel tables in a new file, or check an existing one;
    raises SchemaError for anything else."""
    tables = _tables(db)
    if not tables:
        db.execute("BEGIN")
        _script(db, _CHANNEL_TABLES)
        db.execute("INSERT INTO version VALUES (?)", (CHANNEL_VERSION,))
        db.execute("COMMIT")
        return
    if "schema_marker" in tables:
        raise SchemaError(
            f"{path}: a channel database of an earlier wormhole-twisted; it "
            "holds only the transfers in progress: stop the server, move the "
            "file aside, and start again (a new file is made)")
    if "version" in tables and _CHANNEL_NAMES >= tables >= (
            _CHANNEL_NAMES - {"sqlite_sequence"}):
        version = _version(db)
        if version == CHANNEL_VERSION:
            return
        raise SchemaError(
            f"{path}: channel database version {version!r}; this server "
            f"knows version {CHANNEL_VERSION} (that of the reference "
            "magic-wormhole-mailbox-server 0.8)")
    raise SchemaError(
        f"{path}: not a Mailbox server channel database (tables: "
        f"{', '.join(sorted(tables))}); give --channel-db another file")


def prepare_usage_db(db, path, schema="usage"):
    """Create the usage tables in the file attached as ``schema``, or check
    (and if need be upgrade) an existing one; raises SchemaError."""
    tables = _tables(db, schema) - {"sqlite_sequence"}
    s = schema + "."
    if not tables:
        db.execute("BEGIN")
        _script(db, _USAGE_V1_TABLES.format(s=s))
        _script(db, _USAGE_V2_ADDITIONS.format(s=s))
        db.execute(f"INSERT INTO {s}version VALUES (?)", (USAGE_VERSION,))
        db.execute("COMMIT")
        return
    version = _version(db, schema) if "version" in tables else None
    if tables == _USAGE_V2_NAMES and version == USAGE_VERSION:
        return
    if tables == _USAGE_V1_NAMES and version == 1:
        # the reference's own upgrade: client_versions is new in version 2
        _backup(db, schema, path, 1)
        db.execute("BEGIN")
        _script(db, _USAGE_V2_ADDITIONS.format(s=s))
        db.execute(f"UPDATE {s}version SET version=?", (USAGE_VERSION,))
        db.execute("COMMIT")
        return
    if tables == _OLD_OURS_USAGE:
        _convert_old_ours(db, path, s)
        return
    raise SchemaError(
        f"{path}: a usage database this server does not know (version "
        f"{version!r}, tables: {', '.join(sorted(tables))}); it knows "
        f"version {USAGE_VERSION} (that of the reference "
        "magic-wormhole-mailbox-server 0.8) and upgrades version 1: give "
        "--usage-db another file")


def _convert_old_ours(db, path, s):
    """An earlier wormhole-twisted kept one ``usage`` table with a ``kind``
    column; its rows move into ``nameplates`` and ``mailboxes``."""
    _backup(db, s.rstrip("."), path, 0)
    db.execute("BEGIN")
    _script(db, _USAGE_V1_TABLES.format(s=s))
    _script(db, _USAGE_V2_ADDITIONS.format(s=s))
    db.execute(f"INSERT INTO {s}version VALUES (?)", (USAGE_VERSION,))
    db.execute(
        f"INSERT INTO {s}nameplates SELECT app_id, started, waiting_time,"
        f" total_time, result FROM {s}usage WHERE kind='nameplate'")
    db.execute(
        f"INSERT INTO {s}mailboxes SELECT app_id, NULL, started, total_time,"
        f" waiting_time, result FROM {s}usage WHERE kind='mailbox'")
    db.execute(f"DROP TABLE {s}usage")
    db.execute("COMMIT")
