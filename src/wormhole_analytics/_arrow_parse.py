"""The event parser of ``ingest``: a block of JSON lines to an Arrow
table, every line either valid or quarantined with its reason.

Pure pyarrow and numpy (no Spark): it runs inside the Spark Python
workers (``_split_task``) and directly in the tests. Arrow's JSON reader
parses a whole block with the explicit schema of docs/usage-events.md in
C++ (several times faster than Spark's JSON reader); only a block that it
rejects (a line that is no JSON object, or a field of the wrong type) is
parsed again in small chunks, and only a chunk that still fails goes line
by line through Python's ``json``, so one bad line costs a few thousand
lines of slow parsing, not the whole split.

The rules, in order, the first that matches wins (docs/analytics.md "What
ingest does"): ``malformed`` (not a JSON object, or a field of the wrong
type), ``bad-version``, ``unknown-kind``, ``missing-field``,
``bad-number`` (NaN, infinite, a start before 2000 or from 2100 on),
``negative``, ``unknown-mood``. Blank lines are not events and are
skipped.
"""

import datetime
import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from wormhole_ops.events import KINDS, MAILBOX_RESULTS, RELAY_RESULTS, SCHEMA_VERSION

CLIENT = pa.struct([("side", pa.string()), ("impl", pa.string()),
                    ("version", pa.string())])
# docs/usage-events.md, schema version 1; the same as _schema.EVENT_JSON
EVENT = pa.schema([
    ("v", pa.int64()), ("server", pa.string()), ("kind", pa.string()),
    ("app_id", pa.string()), ("started", pa.float64()),
    ("waiting_time", pa.float64()), ("total_time", pa.float64()),
    ("result", pa.string()), ("bytes", pa.int64()),
    ("clients", pa.list_(CLIENT)),
])
EVENT_COLUMNS = EVENT.names
QUARANTINE = pa.schema(list(EVENT) + [
    ("_reason", pa.string()), ("_raw", pa.string()), ("_source", pa.string())])

# reason codes; 0 is a valid event
REASONS = [None, "malformed", "bad-version", "unknown-kind", "missing-field",
           "bad-number", "negative", "unknown-mood"]
_CODE = {r: i for i, r in enumerate(REASONS)}
# events from before 2000 or from 2100 on are not real
MIN_T, MAX_T = 946684800.0, 4102444800.0
UNKNOWN_DAY = "unknown"
# a block Arrow rejects is retried in chunks of this many lines
CHUNK_LINES = 4096
_WS = b" \t\r"

_PARSE = pj.ParseOptions(explicit_schema=EVENT,
                         unexpected_field_behavior="ignore")
_READ = pj.ReadOptions(use_threads=False, block_size=1 << 24)


class Parsed:
    """One block, parsed: ``table`` (EVENT columns, one row per non-blank
    line, in order), ``reason`` (an int8 code per row, see REASONS),
    ``day`` (a code per row of its day in ``day_names``, ``unknown`` if
    the start is unreadable) and ``raw(rows)``, the text of those rows'
    lines."""

    def __init__(self, table, malformed, lines):
        self.table = table
        self._lines = lines
        # kind and result as codes once: the checks and the summaries
        # test them many times
        self.kind = Codes(table["kind"])
        self.result = Codes(table["result"])
        self.reason = classify(table, malformed, self.kind, self.result)
        self.day, self.day_names = days(table["started"])

    def raw(self, rows):
        lines = self._lines()
        return [lines[i].decode("utf-8", "replace") for i in rows]


class Codes:
    """A string column as ``codes`` (numpy, one per row) into ``names``;
    a null is ``len(names)``."""

    def __init__(self, col):
        enc = pc.dictionary_encode(col).combine_chunks()
        # kept: the Parquet writer takes it as is (no second encoding)
        self.array = enc
        self.names = enc.dictionary.to_pylist()
        self.codes = pc.fill_null(enc.indices, len(self.names))\
            .to_numpy(zero_copy_only=False)

    def is_in(self, values, codes=None):
        """Per row (of ``codes``, default all): is its value one of
        ``values`` (never for a null)?"""
        table = np.array([n in values for n in self.names] + [False])
        return table[self.codes if codes is None else codes]


def _non_blank(data):
    return [ln.rstrip(b"\r") for ln in data.split(b"\n") if ln.strip(_WS)]


def _newlines(data):
    """How many lines ``data`` has (the last one may lack its newline).

    Counted by numpy a megabyte at a time (the compare stays in the
    cache): 8 ms for a 94 MB split, against 38 for ``bytes.count``."""
    a = np.frombuffer(data, np.uint8)
    n = sum(int(np.count_nonzero(a[i:i + _COUNT_STEP] == 10))
            for i in range(0, len(a), _COUNT_STEP))
    return n + (0 if a[-1:].tobytes() == b"\n" else 1)


_COUNT_STEP = 1 << 20


def parse(data):
    """A ``Parsed`` of ``data`` (bytes of whole lines, or a memoryview of
    them: _split_task maps the event file)."""
    table = _arrow(data)
    if table is not None:
        newlines = _newlines(data)
        if table.num_rows == newlines:
            # the common case: every line is one row, so row i is line i
            # (no blank lines); split the lines only if a raw one is asked
            cache = []

            def lines():
                if not cache:
                    cache.append([ln.rstrip(b"\r")
                                  for ln in bytes(data).split(b"\n")])
                return cache[0]
            return Parsed(table, np.zeros(table.num_rows, bool), lines)
        data = bytes(data)  # blank lines: rare, split them as bytes
        kept = _non_blank(data)
        if table.num_rows == len(kept):
            return Parsed(table, np.zeros(table.num_rows, bool),
                          lambda: kept)
    kept = _non_blank(bytes(data))
    tables, malformed = [], []
    for i in range(0, len(kept), CHUNK_LINES):
        chunk = kept[i:i + CHUNK_LINES]
        t = _arrow(b"\n".join(chunk))
        if t is None or t.num_rows != len(chunk):
            t, bad = _by_line(chunk)
        else:
            bad = np.zeros(len(chunk), bool)
        tables.append(t)
        malformed.append(bad)
    table = pa.concat_tables(tables) if tables else EVENT.empty_table()
    bad = np.concatenate(malformed) if malformed else np.zeros(0, bool)
    return Parsed(table, bad, lambda: kept)


def _arrow(data):
    """The block parsed by Arrow, or None if Arrow rejects it."""
    try:
        return pj.read_json(pa.BufferReader(data), read_options=_READ,
                            parse_options=_PARSE).cast(EVENT)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError,
            pa.ArrowTypeError):
        return None


def _by_line(lines):
    """Python's json, one line at a time: (table, malformed mask)."""
    rows, bad = [], np.zeros(len(lines), bool)
    for i, line in enumerate(lines):
        row = _checked(line)
        if row is None:
            bad[i] = True
            row = {}
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=EVENT), bad


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool) \
        and -2 ** 63 <= x < 2 ** 63


def _is_float(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_str(x):
    if not isinstance(x, str):
        return False
    try:
        x.encode("utf-8")  # a lone surrogate from "\ud800" is no text
    except UnicodeEncodeError:
        return False
    return True


_FIELDS = {"v": _is_int, "bytes": _is_int, "started": _is_float,
           "waiting_time": _is_float, "total_time": _is_float,
           "server": _is_str, "kind": _is_str, "app_id": _is_str,
           "result": _is_str}


def _checked(line):
    """The event of one line as a dict of schema fields, or None when the
    line is no JSON object or a field has the wrong type."""
    try:
        e = json.loads(line)
    except (ValueError, RecursionError):  # also UnicodeDecodeError
        return None
    if not isinstance(e, dict):
        return None
    row = {}
    for name, ok in _FIELDS.items():
        x = e.get(name)
        if x is not None and not ok(x):
            return None
        if x is not None and name in ("started", "waiting_time",
                                      "total_time"):
            try:
                x = float(x)
            except OverflowError:  # an integer of 400 digits
                x = math.inf
        row[name] = x
    clients = e.get("clients")
    if clients is not None:
        if not isinstance(clients, list):
            return None
        out = []
        for c in clients:
            if c is None:
                out.append(None)
                continue
            if not isinstance(c, dict):
                return None
            item = {k: c.get(k) for k in ("side", "impl", "version")}
            if any(v is not None and not _is_str(v) for v in item.values()):
                return None
            out.append(item)
        clients = out
    row["clients"] = clients
    return row


def _np(col, fill):
    """A column as numpy with nulls replaced by ``fill``, and its null
    mask."""
    null = pc.is_null(col).to_numpy(zero_copy_only=False)
    return pc.fill_null(col, fill).to_numpy(zero_copy_only=False), null


def classify(table, malformed, kind=None, result=None):
    """The reason code of every row (0: valid); ``kind`` and ``result``
    are the ``Codes`` of those columns if already made."""
    n = table.num_rows
    v, v_null = _np(table["v"], 0)
    kind = kind or Codes(table["kind"])
    result = result or Codes(table["result"])
    kind_ok = kind.is_in(KINDS)
    is_bind = kind.is_in(("bind",))
    is_relay = kind.is_in(("relay",))
    server_null = pc.is_null(table["server"]).to_numpy(zero_copy_only=False)
    started, started_null = _np(table["started"], 0.0)
    total, total_null = _np(table["total_time"], 0.0)
    wait, _ = _np(table["waiting_time"], 0.0)
    nbytes, _ = _np(table["bytes"], 0)
    result_null = result.codes == len(result.names)
    n_clients, _ = _np(pc.list_value_length(table["clients"]), 0)
    mailbox_ok = result.is_in(MAILBOX_RESULTS)
    relay_ok = result.is_in(RELAY_RESULTS)

    with np.errstate(invalid="ignore"):
        bad_number = (~np.isfinite(started) | ~np.isfinite(total)
                      | ~np.isfinite(wait) | (started < MIN_T)
                      | (started >= MAX_T))
        negative = (total < 0) | (wait < 0) | (nbytes < 0)
    # from the last rule to the first, so that the first match wins
    rules = [
        (~is_bind & ~is_relay & ~mailbox_ok & ~result_null, "unknown-mood"),
        (is_relay & ~relay_ok & ~result_null, "unknown-mood"),
        (negative, "negative"),
        (bad_number & ~started_null, "bad-number"),
        (is_bind & (n_clients < 1), "missing-field"),
        (~is_bind & (total_null | result_null), "missing-field"),
        (server_null | started_null, "missing-field"),
        (~kind_ok, "unknown-kind"),
        (v_null | (v != SCHEMA_VERSION), "bad-version"),
        (malformed, "malformed"),
    ]
    code = np.zeros(n, np.int8)
    for mask, reason in rules:
        code[mask] = _CODE[reason]
    return code


def days(started):
    """The UTC day of every start (``unknown`` when it is not a real
    time): (an int code per row, the day string of each code)."""
    t, null = _np(started, np.nan)
    with np.errstate(invalid="ignore"):
        ok = ~null & np.isfinite(t) & (t >= MIN_T) & (t < MAX_T)
    num = np.where(ok, np.floor(np.where(ok, t, 0) / 86400), -1)\
        .astype(np.int64)
    if len(num) and num.min() == num.max():  # the usual daily file
        uniq, inv = num[:1], np.zeros(len(num), np.int64)
    else:
        uniq, inv = np.unique(num, return_inverse=True)
    names = [UNKNOWN_DAY if d < 0 else _day_name(d) for d in uniq]
    return inv.reshape(-1), names


def _day_name(daynum):
    return (datetime.date(1970, 1, 1)
            + datetime.timedelta(days=int(daynum))).isoformat()


def reason_names(codes):
    return np.array(REASONS, dtype=object)[codes]


__all__ = ["EVENT", "QUARANTINE", "REASONS", "Parsed", "classify", "days",
           "parse"]
