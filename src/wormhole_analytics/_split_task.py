"""What one Spark task of ``ingest`` does with one split of an event file,
in the Python worker, with pyarrow: read the split's whole lines, parse
and check them (``_arrow_parse``), write the valid events and the
quarantined lines as Parquet into the batch's staging folder (one file
per day), and write this split's partial summaries next to them:

- ``daily``: per (day, kind, server, app_id) the counts by result, the
  size histogram, the bytes and two KLL sketches (Apache DataSketches, the
  same binary format as Spark's ``kll_sketch_agg_double``, so the report
  merges them with Spark's ``kll_merge_agg_double``);
- ``sides``: (day, server, side, impl, version) of every client of a
  nameplate, mailbox or bind;
- ``qcount``: quarantined lines per (day, reason).

Each is written one file per day, and ``merge_day`` (the second, small
stage, one task per few days) merges a day's partial summaries into its
``summary`` tables: counts summed, sketches merged, sides counted once.
So the events are read once, and the summaries of the days new to the
store need no second pass over them. The task returns one row per file it
wrote; the driver moves only the files that successful task attempts
reported, so a retried task cannot leave a duplicate behind.

A split is a byte range [start, end) of a file; it owns the lines that
begin inside it (Hadoop's rule), so splits of one file never share or
miss a line. Gzipped files are one split each.
"""

import functools
import gc
import gzip
import mmap
import os
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from wormhole_ops.events import MAILBOX_RESULTS, RELAY_RESULTS

from . import _arrow_parse as P

RESULTS = list(dict.fromkeys(MAILBOX_RESULTS + RELAY_RESULTS))
N_BUCKETS = 10  # _aggregate.SIZE_BUCKETS
SKETCH_K = 1000  # _aggregate.SKETCH_K
# the few-valued columns; a dictionary of the others (times, sides) costs
# time and saves nothing
_DICTIONARY = {"server", "kind", "app_id", "result", "reason", "_reason",
               "_source", "impl", "version"}
# the events, the bulk of what ingest writes: lz4 (measured on a 60 MB
# split, 333k events: 0.048 CPU s and 7.1 MB against zstd's 0.063 s and
# 5.5 MB; no compression 13.5 MB). The rest stays zstd (small).
_COMPRESSION = {"events": "lz4"}


def read_split(path, start, end):
    """The bytes of the whole lines that begin in [start, end): bytes for
    a gzipped file, else a read-only memoryview of the file mapped into
    memory.

    Mapped, not read: Arrow parses the page cache's own pages, with no
    copy into a buffer of ours (measured over ten 94 MB splits: 0.42-0.43
    CPU s a split instead of 0.44-0.45). The mapping lives as long as the
    view does."""
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            return f.read()
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if start >= size or start >= end:
            return b""
        m = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
    if start > 0:
        # a line begins at start only if the byte before is a newline
        nl = m.find(b"\n", start - 1)
        if nl < 0 or nl + 1 >= end:
            return b""
        start = nl + 1
    end = min(end, size)
    if m[end - 1] != 10:
        # finish the line that begins before end
        nl = m.find(b"\n", end)
        end = size if nl < 0 else nl + 1
    return memoryview(m)[start:end]


def run_split(path, start, end, staging):
    """Process one split; a list of (table, day, path, rows), one per
    file written: what the driver collects."""
    parsed = P.parse(read_split(path, start, end))
    tag = uuid.uuid4().hex
    written = []
    ok = parsed.reason == 0
    table = parsed.table
    day = parsed.day  # codes into names
    names = np.array(parsed.day_names, dtype=object)
    # events, one file per day
    if ok.any():
        all_ok = ok.all()  # the usual case: no copy
        events = table if all_ok else table.filter(pa.array(ok))
        ev_day = day if all_ok else day[ok]
        # the four few-valued columns as codes once: the Parquet writer
        # takes their dictionary arrays as they are, the summaries group
        # by their codes
        enc = {"kind": parsed.kind, "result": parsed.result,
               "server": P.Codes(table["server"]),
               "app_id": P.Codes(table["app_id"])}
        codes = {name: (c.codes if all_ok else c.codes[ok], c.names)
                 for name, c in enc.items()}
        dict_events = events
        for name, c in enc.items():
            col = c.array if all_ok else c.array.filter(pa.array(ok))
            dict_events = dict_events.set_column(
                dict_events.column_names.index(name), name, col)
        written += _write_by_day(dict_events, ev_day, names, staging,
                                 "events", tag)
        written += _summaries(events, ev_day, names, parsed, codes,
                              staging, tag)
    bad = np.nonzero(~ok)[0]
    if len(bad):
        q = table.take(pa.array(bad))
        codes = parsed.reason[bad]
        q = q.append_column("_reason", pa.array(P.reason_names(codes),
                                                pa.string()))
        q = q.append_column("_raw", pa.array(parsed.raw(bad), pa.string()))
        q = q.append_column("_source", pa.array([path] * len(bad),
                                                pa.string()))
        q_day = day[bad]
        written += _write_by_day(q, q_day, names, staging, "quarantine",
                                 tag)
        counts = pa.table({"day": pa.array(q_day), "reason": q["_reason"]})\
            .group_by(["day", "reason"]).aggregate([([], "count_all")])
        written += _write_parts(
            counts.select(["reason"]).append_column("n", counts["count_all"]),
            counts["day"].to_numpy(), names, staging, "qcount", tag)
    return written


def _write(table, staging, name, day, tag):
    """``table`` as ``staging/<name>/day=<day>/part-<tag>.parquet``."""
    folder = os.path.join(staging, name, f"day={day}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"part-{tag}.parquet")
    # no column statistics for the events: their files are only ever read
    # whole, by day partition (measured: a fifth of the write time)
    # store_schema=False: a dictionary array is written as a plain string
    # column and read back as one (the Arrow schema is not stored)
    pq.write_table(
        table, path, compression=_COMPRESSION.get(name, "zstd"),
        use_dictionary=[c for c in table.column_names if c in _DICTIONARY],
        write_statistics=name not in ("events", "quarantine"),
        store_schema=False)
    return (name, day, path, table.num_rows)


def _write_parts(table, day, names, staging, name, tag):
    """A partial summary (``day``: the code of each row's day in
    ``names``) as one file per day under ``partial/<name>/day=D``, so the
    merge of a day reads only its own."""
    return _write_by_day(table, day, names, os.path.join(staging, "partial"),
                         name, tag)


def _write_by_day(table, day, names, staging, name, tag):
    out = []
    for d in np.unique(day):
        rows = np.nonzero(day == d)[0]
        part = table if len(rows) == len(day) else table.take(pa.array(rows))
        out.append(_write(part, staging, name, names[d], tag))
    return out


def _summaries(events, ev_day, names, parsed, codes, staging, tag):
    """The partial ``daily`` and ``sides`` summaries of valid events
    (``codes``: (codes, names) of their kind, result, server and app_id;
    a null is ``len(names)``)."""
    out = []
    kind = codes["kind"][0]
    not_bind = ~parsed.kind.is_in(("bind",), kind)
    ev = events.select(["bytes", "waiting_time", "total_time"])\
        .filter(pa.array(not_bind))
    if ev.num_rows:
        daily, daily_day = _daily(
            ev, ev_day[not_bind], names,
            *[(codes[c][0][not_bind], codes[c][1])
              for c in ("kind", "result", "server", "app_id")])
        out += _write_parts(daily, daily_day, names, staging, "daily", tag)
    keep = parsed.kind.is_in(("nameplate", "mailbox", "bind"), kind)
    sides, sides_day = _sides(events, ev_day, keep)
    if sides.num_rows:
        out += _write_parts(sides, sides_day, names, staging, "sides", tag)
    return out


def _daily(ev, day_idx, day_names, kinds, results, servers, apps):
    """Per (day, kind, server, app_id) group of non-bind events: counts by
    result, size histogram, bytes, KLL sketches (the columns of
    ``_aggregate.summarise``); and the day code of each group. ``kinds``,
    ``results``, ``servers`` and ``apps`` are (codes, names) of those
    columns (a null is ``len(names)``: strides are one more)."""
    kind_idx, kind_names = kinds
    srv_idx, srv_names = servers
    srv_names = srv_names + [None]
    app_idx, app_names = apps
    # no app_id (relay sessions) is grouped, and written, as ""
    if "" in app_names:
        app_idx = np.where(app_idx == len(app_names), app_names.index(""),
                           app_idx)
    else:
        app_names = app_names + [""]
    key = (((day_idx.astype(np.int64) * (len(kind_names) + 1) + kind_idx)
            * len(srv_names) + srv_idx) * len(app_names) + app_idx)
    # rows sorted by group: every per-group figure is a reduceat. A key
    # that fits 16 bits (the usual: one day, a few servers and apps) is
    # sorted as uint16, which numpy radix-sorts: 2 ms instead of 13-20
    # for 420k rows
    if len(key) and key.max() < 1 << 16:
        key = key.astype(np.uint16)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    bounds = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
    first = order[bounds]
    n_groups = len(bounds)
    group = np.cumsum(np.r_[False, sorted_key[1:] != sorted_key[:-1]])

    def counts(mask_sorted):
        return np.add.reduceat(mask_sorted.astype(np.int64), bounds)

    def sums(values_sorted, mask_sorted):
        """Integer sums per group; null where no value counted."""
        total = np.add.reduceat(np.where(mask_sorted, values_sorted, 0),
                                bounds)
        return pa.array(total, pa.int64(), mask=counts(mask_sorted) == 0)

    cols = {
        "kind": pa.array(np.array(kind_names, object)[kind_idx[first]],
                         pa.string()),
        "server": pa.array(np.array(srv_names, object)[srv_idx[first]],
                           pa.string()),
        "app_id": pa.array(np.array(app_names, object)[app_idx[first]],
                           pa.string()),
        "n": pa.array(np.diff(np.r_[bounds, len(key)]).astype(np.int64)),
    }
    res_idx, res_names = results
    stride = len(res_names) + 1
    # one bincount over (group, result) for all the result counts
    by_result = np.bincount(group * stride + res_idx[order],
                            minlength=n_groups * stride)\
        .reshape(n_groups, stride)
    for r in RESULTS:
        cols[r] = pa.array(by_result[:, res_names.index(r)]
                           if r in res_names else np.zeros(n_groups,
                                                           np.int64))
    is_relay = (kind_idx == kind_names.index("relay"))[order] \
        if "relay" in kind_names else np.zeros(len(key), bool)
    nbytes_col = ev["bytes"]
    has_bytes = pc.is_valid(nbytes_col).to_numpy(zero_copy_only=False)[order]
    nbytes = pc.fill_null(nbytes_col, 0).to_numpy(zero_copy_only=False)[order]
    bucket = np.where(is_relay, _bucket(nbytes), -1)
    for i in range(N_BUCKETS):
        cols[f"size_{i}"] = pa.array(counts(bucket == i))
    for i in range(N_BUCKETS):
        cols[f"size_bytes_{i}"] = sums(nbytes, (bucket == i) & has_bytes)
    cols["bytes"] = sums(nbytes, has_bytes)
    cols["wait_kll"] = _sketches(ev["waiting_time"], order, bounds)
    cols["total_kll"] = _sketches(ev["total_time"], order, bounds)
    return pa.table(cols), day_idx[first]


def _bucket(nbytes):
    """_aggregate.size_bucket: 0 for 0 bytes, then one per power of ten
    from 1 kB, capped."""
    with np.errstate(divide="ignore", invalid="ignore"):
        pow10 = np.floor(np.log10(np.maximum(nbytes, 1))).astype(np.int64)
    return np.where(nbytes <= 0, 0, np.where(
        nbytes < 1000, 1, np.minimum(pow10 - 1, N_BUCKETS - 1)))


def _sketches(col, order, bounds):
    """One serialized KLL sketch per group of the non-null values."""
    from datasketches import kll_doubles_sketch
    values = pc.fill_null(col, np.nan).to_numpy(zero_copy_only=False)[order]
    out = []
    ends = list(bounds[1:]) + [len(values)]
    for lo, hi in zip(bounds, ends, strict=False):
        v = values[lo:hi]
        # sorted first: the sketch's compactions sort its buffer, which
        # costs little when the values arrive in order (420k values:
        # 2 ms to sort + 3 to sketch, against 16 unsorted). KLL's error
        # bound holds for any order of the input.
        v = np.sort(v[~np.isnan(v)])
        s = kll_doubles_sketch(SKETCH_K)
        if len(v):
            s.update(v)
        out.append(s.serialize())
    return pa.array(out, pa.binary())


def _sides(events, ev_day, keep):
    """(server, side, impl, version) of every client of the ``keep`` rows
    (nameplates, mailboxes and binds), and the day code of each."""
    # flatten every row's clients (relay sessions have none) rather than
    # copy the kept rows first
    clients = events["clients"].combine_chunks()
    flat = pc.list_flatten(clients)
    parent = pc.list_parent_indices(clients).to_numpy(zero_copy_only=False)
    side = pc.struct_field(flat, "side")
    mask = keep[parent] & pc.is_valid(flat).to_numpy(zero_copy_only=False) \
        & pc.is_valid(side).to_numpy(zero_copy_only=False)
    rows = pa.array(np.nonzero(mask)[0])
    owner = parent[mask]
    return pa.table({
        "server": events["server"].take(pa.array(owner)),
        "side": side.take(rows),
        "impl": pc.fill_null(pc.struct_field(flat, "impl"), "unknown")
        .take(rows),
        "version": pc.fill_null(pc.struct_field(flat, "version"), "unknown")
        .take(rows),
    }), ev_day[owner]


@functools.cache
def _freeze_imports():
    """Move every object that exists now (the imported modules: numpy,
    pyarrow, datasketches, PySpark's worker) into the garbage
    collector's permanent generation, once per worker process.

    PySpark's daemon runs ``gc.collect()`` in a reused worker after every
    task (pyspark/daemon.py); with these modules loaded each full
    collection walks about 50k objects, 20-30 ms of CPU per task.
    Frozen, they are skipped, and a collection walks only what the task
    left behind. Nothing frozen is garbage: modules live as long as the
    worker does. Cached: the first call does it, the others nothing."""
    import datasketches  # noqa: F401 (loaded before the freeze)
    gc.freeze()


def split_partition(ids, parts, staging):
    """The parse stage's ``mapPartitions`` function: split numbers in
    (``parts[i]`` is (path, start, end)), files written out."""
    _freeze_imports()
    for i in ids:
        yield from run_split(*parts[i], staging)


def merge_partition(ids, days, out):
    """The summary stage's ``mapPartitions`` function: day numbers in
    (``days[i]`` is (day, {partial name: [paths]})), files written out."""
    _freeze_imports()
    for i in ids:
        day, paths = days[i]
        yield from merge_day(day, paths, out)


def merge_day(day, paths, out):
    """The summaries of one day from its partial ones: ``daily`` (counts
    summed, sketches merged per group), ``versions`` (each side once) and
    ``quarantine``; one Parquet file each under ``out/<table>/day=D``."""
    tag = uuid.uuid4().hex
    written = []
    if paths.get("daily"):
        daily = _merge_daily(_read(paths["daily"]))
        written.append(_write(daily, out, "daily", day, tag))
    if paths.get("sides"):
        versions = _versions(_read(paths["sides"]))
        written.append(_write(versions, out, "versions", day, tag))
    if paths.get("qcount"):
        q = _read(paths["qcount"]).group_by("reason").aggregate(
            [("n", "sum")]).rename_columns(["reason", "n"])
        written.append(_write(q, out, "quarantine", day, tag))
    return written


def _versions(sides):
    """Client sides per (server, impl, version), each (server, side)
    counted once, with the impl and version of its first row: a client
    that reconnects binds again with the same side.

    The first row of each (server, side) is found on integer codes
    (numpy's unique over server code x side code), not by a group-by on
    the strings: 21 ms instead of 35-40 for a day of 150k sides."""
    server = pc.dictionary_encode(sides["server"]).combine_chunks()
    side = pc.dictionary_encode(sides["side"]).combine_chunks()
    # a null (never written by _sides, but a key either way) is a code of
    # its own: -1 for the server, one past the dictionary for the side
    stride = len(side.dictionary) + 1
    key = (pc.fill_null(server.indices, -1).to_numpy().astype(np.int64)
           * stride + pc.fill_null(side.indices, stride - 1).to_numpy())
    _, first = np.unique(key, return_index=True)
    return sides.take(pa.array(first)).group_by(
        ["server", "impl", "version"], use_threads=False).aggregate(
        [([], "count_all")]).rename_columns(
        ["server", "impl", "version", "sides"])


def _read(paths):
    # the day is in the folder names, not wanted as a column here
    return pq.read_table(paths, partitioning=None)


def _merge_daily(t):
    """Partial ``daily`` rows of one day merged per (kind, server,
    app_id): counts and bytes summed (null stays null, as Spark's sum),
    sketches merged."""
    from datasketches import kll_doubles_sketch
    keys = ["kind", "server", "app_id"]
    sums = [c for c in t.column_names
            if c not in keys and not c.endswith("_kll")]
    agg = t.group_by(keys, use_threads=False).aggregate(
        [(c, "sum") for c in sums]
        + [("wait_kll", "list"), ("total_kll", "list")])
    cols = {k: agg[k] for k in keys}
    for c in sums:
        cols[c] = agg[f"{c}_sum"]
    for c in ("wait_kll", "total_kll"):
        merged = []
        for parts in agg[f"{c}_list"].to_pylist():
            s = kll_doubles_sketch.deserialize(parts[0])
            for b in parts[1:]:
                s.merge(kll_doubles_sketch.deserialize(b))
            merged.append(s.serialize())
        cols[c] = pa.array(merged, pa.binary())
    return pa.table(cols)
