"""``ingest``: JSON-lines usage events to Parquet, partitioned by day.

Incremental (issue 6 "Benchmark": "only new days touched"): a manifest in
the store remembers every input file by path, size and mtime; a file seen
before is skipped, a file that changed since is reported and skipped (its
rows are already in the store; re-reading it would count them twice), and
by default a file named for today's UTC day is left for tomorrow's run
because the servers are still appending to it.

One pass over the input: every line is parsed with the explicit schema,
checked, and written either to ``events/day=D/`` or to
``quarantine/day=D/`` (with the reason and the raw line), never dropped.
The Spark job writes into a staging folder; its files are then moved into
the day folders, so a failed run leaves the store as it was.
"""

import datetime
import glob
import json
import os
import re
import shutil
import uuid

from ._progress import Progress

MANIFEST = "_ingested.json"
_DAY_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")
# events from before 2000 or after 2100 are not real (and would overflow
# date arithmetic under ANSI mode)
_MIN_T, _MAX_T = 946684800.0, 4102444800.0


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


def plan(files, manifest, today, include_open=False):
    """Split input files into (new, skipped) where skipped is a list of
    (path, why)."""
    new, skipped = [], []
    for path in files:
        st = os.stat(path)
        seen = manifest.get(path)
        if seen is not None:
            if seen["size"] == st.st_size and seen["mtime"] == st.st_mtime:
                skipped.append((path, "already ingested"))
            else:
                skipped.append((path, "changed since it was ingested"))
            continue
        m = _DAY_IN_NAME.search(os.path.basename(path))
        if m and m.group(1) >= today and not include_open:
            skipped.append((path, "today's file is still being written"))
            continue
        new.append(path)
    return new, skipped


def checked_events(spark, files):
    """The parsed events with ``_reason`` (None when valid), ``_raw``,
    ``_source`` and ``day``: the whole validation, as one projection."""
    from pyspark.sql import functions as F

    from . import _schema as S
    df = (spark.read.schema(S.EVENT_JSON)
          .option("columnNameOfCorruptRecord", S.CORRUPT)
          .option("mode", "PERMISSIVE")
          .json(files))
    c = F.col
    mailbox_like = c("kind").isin("nameplate", "mailbox")

    def bad_number(name):
        return F.isnan(c(name)) | (F.abs(c(name)) == float("inf"))

    reason = (
        F.when(c(S.CORRUPT).isNotNull(), "malformed")
        .when(c("v").isNull() | (c("v") != S.SCHEMA_VERSION), "bad-version")
        .when(c("kind").isNull() | ~c("kind").isin(*S.KINDS), "unknown-kind")
        .when(c("server").isNull() | c("started").isNull(),
              "missing-field")
        .when((c("kind") != "bind")
              & (c("total_time").isNull() | c("result").isNull()),
              "missing-field")
        .when((c("kind") == "bind")
              & (F.coalesce(F.size(c("clients")), F.lit(0)) < 1),
              "missing-field")
        .when(bad_number("started")
              | F.coalesce(bad_number("total_time"), F.lit(False))
              | F.coalesce(bad_number("waiting_time"), F.lit(False))
              | (c("started") < _MIN_T) | (c("started") >= _MAX_T),
              "bad-number")
        .when((c("total_time") < 0) | (c("waiting_time") < 0)
              | (c("bytes") < 0), "negative")
        .when(mailbox_like & ~c("result").isin(*S.MAILBOX_RESULTS),
              "unknown-mood")
        .when((c("kind") == "relay") & ~c("result").isin(*S.RELAY_RESULTS),
              "unknown-mood")
    )
    good_t = (c("started") >= _MIN_T) & (c("started") < _MAX_T)
    day = F.coalesce(
        F.date_format(F.timestamp_seconds(
            F.when(good_t & ~F.isnan(c("started")), c("started"))),
            "yyyy-MM-dd"),
        F.lit("unknown"))
    cols = [c(n) for n in S.EVENT_COLUMNS]
    return df.select(
        *cols,
        reason.alias("_reason"),
        F.when(reason.isNotNull(), F.coalesce(
            c(S.CORRUPT), F.to_json(F.struct(*cols)))).alias("_raw"),
        # only for quarantined rows: asking the scan for every row's file
        # path (the _metadata column) cost a third of the parse-and-write
        # time; input_file_name() is evaluated only where it is used
        F.when(reason.isNotNull(), F.input_file_name()).alias("_source"),
        day.alias("day"))


def ingest(spark, inputs, store, today=None, include_open=False,
           progress=None):
    """Run the ingest; returns a dict of counts."""
    from pyspark.sql import functions as F

    from . import _schema as S
    progress = progress or Progress("ingest")
    today = today or datetime.datetime.now(
        datetime.timezone.utc).strftime("%Y-%m-%d")
    os.makedirs(store, exist_ok=True)
    manifest = load_manifest(store)
    files = expand_inputs(inputs)
    new, skipped = plan(files, manifest, today, include_open)
    for path, why in skipped:
        progress.say(f"skip {path}: {why}")
    result = {"files": len(new), "skipped": len(skipped), "events": 0,
              "quarantined": 0, "days": []}
    if not new:
        progress.say("nothing new to ingest")
        return result
    stats = {p: os.stat(p) for p in new}
    batch = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    staging = os.path.join(store, "_staging", batch)
    progress.say(f"reading {len(new)} files into batch {batch}")
    df = checked_events(spark, new)
    table = F.when(F.col("_reason").isNull(), "events") \
        .otherwise("quarantine")
    out = df.select(*S.EVENT_COLUMNS, "_reason", "_raw", "_source", "day",
                    table.alias("_table"))
    (out.write.mode("error").partitionBy("_table", "day")
     .option("compression", "zstd").parquet(staging))
    progress.say("parsed and written; counting")
    counts = (spark.read.parquet(staging).groupBy("_table", "day").count()
              .collect())
    days = set()
    for row in counts:
        key = "events" if row["_table"] == "events" else "quarantined"
        result[key] += row["count"]
        days.add(row["day"])
    result["days"] = sorted(days)
    _publish(staging, store, batch)
    for p in new:
        manifest[p] = {"size": stats[p].st_size, "mtime": stats[p].st_mtime,
                       "batch": batch}
    _save_manifest(store, manifest)
    shutil.rmtree(os.path.join(store, "_staging", batch), ignore_errors=True)
    progress.say(f"summarising {len(days)} days")
    summarise_days(spark, store, sorted(days))
    progress.say(f"ingested {result['events']} events, quarantined "
                 f"{result['quarantined']}, days {', '.join(result['days'])}")
    return result


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
    for name, df in tables.items():
        (df.write.mode("overwrite").partitionBy("day")
         .option("partitionOverwriteMode", "dynamic")
         .parquet(os.path.join(store, "summary", name)))


def _empty_events_schema():
    from pyspark.sql import types as T

    from . import _schema as S
    return T.StructType([f for f in S.EVENT_JSON.fields
                         if f.name != S.CORRUPT]
                        + [T.StructField("day", T.StringType())])


def _publish(staging, store, batch):
    """Move the staged part files into ``events/day=D`` and
    ``quarantine/day=D``: only the days in this batch are touched."""
    for table_dir in os.listdir(staging):
        if not table_dir.startswith("_table="):
            continue
        table = table_dir.split("=", 1)[1]
        for day_dir in os.listdir(os.path.join(staging, table_dir)):
            src = os.path.join(staging, table_dir, day_dir)
            dst = os.path.join(store, table, day_dir)
            os.makedirs(dst, exist_ok=True)
            for name in os.listdir(src):
                if name.endswith(".parquet"):
                    os.replace(os.path.join(src, name),
                               os.path.join(dst, f"{batch}-{name}"))
