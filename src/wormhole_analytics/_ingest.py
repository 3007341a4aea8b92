"""``ingest``: JSON-lines usage events to Parquet, partitioned by day.

Incremental (docs/analytics.md, "What ingest does": only new days touched): a manifest in
the store remembers every input file by path, size, mtime and the offset
read up to. A file seen before and unchanged is skipped; a file that grew
(the servers append whole lines to the day's file) is read from that
offset on, so only its new lines are ingested; a file that shrank or was
rewritten (the last 4 KiB before that offset changed: the manifest keeps
their sha256) is reported and skipped (re-reading it would count its
lines twice). By default a file named for today's UTC day is left for
tomorrow's run because the servers are still appending to it.

One pass over the input, in the Spark Python workers with pyarrow (issue
6 "Targets": ingest at least 2x the straightforward job's events per
second): each task takes a split of a file, parses and checks its lines
(``_arrow_parse``), writes the valid events and the quarantined lines
(with the reason and the raw line, never dropped) as Parquet, and the
partial summaries of what it read (``_split_task``). Spark merges the
partial summaries of the days new to the store; days the store already
had are recomputed from all their events. The tasks write into a staging
folder; their files are then moved into the day folders, so a failed
run leaves the store as it was.
"""

import datetime
import glob
import hashlib
import json
import os
import re
import shutil
import uuid

from ._progress import Progress

MANIFEST = "_ingested.json"
_DAY_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")
# the most bytes of one file one task reads (--conf to change): what a
# Python worker holds is a few times this, whatever the input's size.
# 128 MiB rather than 64: a 180 MB day file in two tasks instead of three
# (measured at 30M events, three alternating pairs: 49-63 CPU s against
# 58-67; peak RSS 1.5 GB against 1.25)
SPLIT_CONF = "spark.wormhole.ingest.splitBytes"
SPLIT_BYTES = 128 << 20


def expand_inputs(paths):
    """Files named, files under folders named (``*.jsonl``,
    ``*.jsonl.gz``, ``*.json``), and glob matches; sorted, absolute."""
    out = set()
    for p in paths:
        matches = glob.glob(p) or [p]
        for m in matches:
            if os.path.isdir(m):
                for root, _dirs, files in os.walk(m):
                    for f in files:
                        if f.endswith((".jsonl", ".jsonl.gz", ".json")):
                            out.add(os.path.abspath(os.path.join(root, f)))
            elif os.path.exists(m):
                out.add(os.path.abspath(m))
            else:
                raise FileNotFoundError(f"no such events file or folder: {m}")
    return sorted(out)


def load_manifest(store):
    try:
        with open(os.path.join(store, MANIFEST), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def _save_manifest(store, manifest):
    tmp = os.path.join(store, MANIFEST + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(store, MANIFEST))


def _open_end(path, size):
    """The end of the last whole line of a file the servers may still be
    appending to: its unterminated tail is left for the next run."""
    with open(path, "rb") as f:
        pos = size
        while pos > 0:
            step = min(pos, 1 << 16)
            f.seek(pos - step)
            chunk = f.read(step)
            i = chunk.rfind(b"\n")
            if i >= 0:
                return pos - step + i + 1
            pos -= step
    return 0


def plan(files, manifest, today, include_open=False):
    """Split input files into (new, skipped): new is a list of (path,
    start, end) byte ranges to read, skipped a list of (path, why).

    A file that grew since it was ingested is read from where the last
    run stopped; one that shrank or was rewritten at the same size is
    reported and skipped. A file named for today's UTC day is left alone
    unless ``include_open``, and then only its whole lines are read."""
    new, skipped = [], []
    for path in files:
        st = os.stat(path)
        seen = manifest.get(path)
        m = _DAY_IN_NAME.search(os.path.basename(path))
        is_open = bool(m and m.group(1) >= today)
        if is_open and not include_open:
            skipped.append((path, "today's file is still being written; "
                            "--include-open reads what it holds so far"))
            continue
        gz = path.endswith(".gz")
        offset = 0
        if seen is not None:
            offset = seen.get("offset", seen["size"])
            same = (seen["size"] == st.st_size
                    and seen["mtime"] == st.st_mtime)
            rewritten = st.st_size <= seen["size"] or gz or (
                "tail_sha256" in seen
                and tail_hash(path, offset) != seen["tail_sha256"])
            if not same and rewritten:
                skipped.append((path, "changed since it was ingested"))
                continue
            if gz:
                skipped.append((path, "already ingested"))
                continue
        end = _open_end(path, st.st_size) if is_open and not gz \
            else st.st_size
        if end <= offset:
            skipped.append((path, "already ingested"))
            continue
        new.append((path, offset, end))
    return new, skipped


def tail_hash(path, offset):
    """sha256 of the last ``TAIL_BYTES`` before ``offset``: recorded in
    the manifest, so that a file that grew can be checked to have only
    grown (the bytes already ingested unchanged) before its new lines
    are read."""
    with open(path, "rb") as f:
        f.seek(max(0, offset - TAIL_BYTES))
        data = f.read(min(offset, TAIL_BYTES))
    return hashlib.sha256(data).hexdigest()


TAIL_BYTES = 4096


def splits(ranges, split_bytes):
    """Byte ranges cut into splits of at most ``split_bytes`` (gzipped
    files whole): each is one Spark task.

    A range is cut into equal parts (a 188 MB day file with 128 MiB
    splits is two of 94 MB, not 134 + 54), and the splits are listed
    largest first: Spark starts tasks in partition order, so the last
    tasks of the stage are the short ones and no core idles long while
    the other finishes a big one (longest-processing-time-first)."""
    out = []
    for path, start, end in ranges:
        if path.endswith(".gz"):
            out.append((path, start, end))
            continue
        if end <= start:
            continue
        n = -(-(end - start) // split_bytes)  # ceil
        cuts = [start + (end - start) * i // n for i in range(n + 1)]
        out.extend((path, lo, hi) for lo, hi in zip(cuts, cuts[1:], strict=False))
    # stable: equal sizes keep their file order
    out.sort(key=lambda s: s[2] - s[1], reverse=True)
    return out


def ingest(spark, inputs, store, today=None, include_open=False,
           progress=None, split_bytes=None):
    """Run the ingest; returns a dict of counts (``reasons``: the
    quarantined lines of this run by reason)."""
    progress = progress or Progress("ingest")
    today = today or datetime.datetime.now(
        datetime.timezone.utc).strftime("%Y-%m-%d")
    split_bytes = int(split_bytes or spark.conf.get(
        SPLIT_CONF, str(SPLIT_BYTES)))
    os.makedirs(store, exist_ok=True)
    manifest = load_manifest(store)
    files = expand_inputs(inputs)
    new, skipped = plan(files, manifest, today, include_open)
    for path, why in skipped:
        progress.say(f"skip {path}: {why}")
    result = {"files": len(new), "skipped": len(skipped), "events": 0,
              "quarantined": 0, "reasons": {}, "days": []}
    if not new:
        progress.say("nothing new to ingest")
        return result
    for path, start, _end in new:
        if start:
            progress.say(f"{path} grew: reading from byte {start}")
    stats = {p: os.stat(p) for p, _s, _e in new}
    batch = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    staging = os.path.join(store, "_staging", batch)
    os.makedirs(staging)
    parts = splits(new, split_bytes)
    progress.say(f"reading {len(new)} files ({len(parts)} splits) into "
                 f"batch {batch}")
    # until the files are published the store is untouched: a failed task
    # (a worker that died, a file truncated under it) leaves no staging
    try:
        by_table = {}
        for table, day, path, rows in _run_tasks(spark, parts, staging):
            by_table.setdefault(table, []).append((day, path, rows))
        days = set()
        for key, table in (("events", "events"), ("quarantined", "quarantine")):
            for day, _path, rows in by_table.get(table, []):
                result[key] += rows
                days.add(day)
        result["days"] = sorted(days)
        # days the store has never seen: their summaries come from this
        # pass's partial ones; the others are recomputed from the store
        fresh = sorted(d for d in days if not any(
            os.path.isdir(os.path.join(store, t, f"day={d}"))
            for t in ("events", "quarantine")))
        old = sorted(days.difference(fresh))
        progress.say(f"parsed and written; summarising {len(days)} days "
                     f"({len(old)} already in the store)")
        summary = _merge_partials(spark, by_table, fresh, staging)
        result["reasons"] = _reasons(by_table)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _publish(by_table, store, batch)
    for path, _start, end in new:
        manifest[path] = {"size": stats[path].st_size,
                          "mtime": stats[path].st_mtime, "offset": end,
                          "tail_sha256": tail_hash(path, end),
                          "batch": batch}
    _save_manifest(store, manifest)
    _publish_summaries(summary, store, batch)
    shutil.rmtree(staging, ignore_errors=True)
    if old:
        summarise_days(spark, store, old)
    progress.say(f"ingested {result['events']} events, quarantined "
                 f"{result['quarantined']}, days {', '.join(result['days'])}")
    return result


def _run_tasks(spark, parts, staging):
    """One Spark task per split, each parsing, checking and writing with
    pyarrow in the Python worker (``_split_task.run_split``); the files
    they wrote, as (table, day, path, rows)."""
    import functools

    from . import _split_task as T
    # an RDD of split numbers, not a DataFrame: the JVM only pipes a few
    # pickled numbers and file names, with no query planning, code
    # generation or Arrow conversion (measured: 1.7 of the JVM's 2.7 CPU
    # seconds in this stage at 10M events)
    rdd = spark.sparkContext.parallelize(range(len(parts)), len(parts))
    return rdd.mapPartitions(functools.partial(
        T.split_partition, parts=parts, staging=staging)).collect()


def _merge_partials(spark, by_table, days, staging):
    """The summaries of ``days`` (new to the store) from the parse
    tasks' partial ones, one Spark task per day; the files written under
    ``staging/summary``, as (table, day, path, rows)."""
    import functools

    from . import _split_task as T
    if not days:
        return []
    per_day = {d: {} for d in days}
    for name in ("daily", "sides", "qcount"):
        for day, path, _rows in by_table.get(name, []):
            if day in per_day:
                per_day[day].setdefault(name, []).append(path)
    work = sorted(per_day.items())
    out = os.path.join(staging, "summary")
    # a day's merge is small: a few days per task, not a task per day
    sc = spark.sparkContext
    tasks = min(len(work), 2 * sc.defaultParallelism)
    return sc.parallelize(range(len(work)), tasks).mapPartitions(
        functools.partial(T.merge_partition, days=work, out=out)).collect()


def _reasons(by_table):
    """Quarantined lines of this run by reason (from the parse tasks'
    per-day counts: a few rows per split)."""
    import pyarrow.parquet as pq
    paths = [p for _d, p, _n in by_table.get("qcount", [])]
    if not paths:
        return {}
    t = pq.read_table(paths, partitioning=None).group_by("reason").aggregate([("n", "sum")])
    return dict(sorted(zip(t["reason"].to_pylist(),
                           t["n_sum"].to_pylist(), strict=False)))


def _write_summaries(store, tables):
    for name, df in tables.items():
        (df.write.mode("overwrite").partitionBy("day")
         .option("partitionOverwriteMode", "dynamic")
         .parquet(os.path.join(store, "summary", name)))


def summarise_days(spark, store, days):
    """(Re)compute the summaries of ``days`` from everything the store
    holds for them, replacing only those day partitions."""
    from . import _aggregate as A
    events = A.read_days(spark, os.path.join(store, "events"), days)
    quarantine = A.read_days(spark, os.path.join(store, "quarantine"), days)
    if events is None:
        if quarantine is None:
            return
        tables = {"quarantine": A.summarise(
            spark.createDataFrame([], _empty_events_schema()),
            quarantine)["quarantine"]}
    else:
        tables = A.summarise(events, quarantine)
    _write_summaries(store, tables)


def _empty_events_schema():
    from pyspark.sql import types as T

    from . import _schema as S
    return T.StructType([f for f in S.EVENT_JSON.fields
                         if f.name != S.CORRUPT]
                        + [T.StructField("day", T.StringType())])


def _publish_summaries(written, store, batch):
    """Replace the summary partitions of the merged days with the merge
    tasks' files (what a dynamic partition overwrite does)."""
    for table, day, path, _rows in written:
        dst = os.path.join(store, "summary", table, f"day={day}")
        if os.path.isdir(dst):
            gone = f"{dst}.{batch}.old"
            os.replace(dst, gone)
            shutil.rmtree(gone)
        os.makedirs(dst)
        os.replace(path, os.path.join(dst, f"{batch}-"
                                      f"{os.path.basename(path)}"))


def _publish(by_table, store, batch):
    """Move the files the tasks wrote into ``events/day=D`` and
    ``quarantine/day=D``: only the days in this batch are touched."""
    for table in ("events", "quarantine"):
        for day, path, _rows in by_table.get(table, []):
            dst = os.path.join(store, table, f"day={day}")
            os.makedirs(dst, exist_ok=True)
            os.replace(path, os.path.join(
                dst, f"{batch}-{os.path.basename(path)}"))
