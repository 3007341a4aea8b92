"""The daily aggregates (docs/analytics.md, "What ingest does" and "What
report does"), in two steps.

1. ``summarise`` (run by ``ingest`` for the days a batch touched): per
   (day, kind, server, app_id) the counts by result, the relay bytes and
   size histogram, and KLL sketches of the waiting and total times; per
   (day, server, impl, version) the distinct sides; per (day, reason) the
   quarantined lines. Written to ``summary/<table>/day=D``, replacing
   only those days.
2. ``finish`` (run by ``report``): reads the summaries of the days asked
   for, merges the sketches for the all-servers rows, reads the
   percentiles off the sketches, and computes the rates and shares.

So a daily report over months reads a few rows per day, not the events:
its cost does not grow with the number of events, and ingest only
re-reads the days it added to. KLL sketches merge without loss of their
error bound, which percentile_approx's results cannot; their size, and
so the memory per group, is fixed by ``SKETCH_K``, not by the input.
"""

import os

from wormhole_ops.events import MAILBOX_RESULTS, RELAY_RESULTS

RESULTS = list(dict.fromkeys(MAILBOX_RESULTS + RELAY_RESULTS))
PERCENTILES = (0.5, 0.9, 0.99)
# KLL's k: normalised rank error about 0.4% at 1000 (Apache DataSketches)
SKETCH_K = 1000
ALL = "*"  # the server / app_id of the all-servers rows
SIZE_BUCKETS = ["0", "1 B-1 kB", "1-10 kB", "10-100 kB", "100 kB-1 MB",
                "1-10 MB", "10-100 MB", "100 MB-1 GB", "1-10 GB", ">10 GB"]
SUMMARIES = ("daily", "versions", "quarantine")


def read_table(spark, folder, since=None, until=None):
    """A day-partitioned Parquet table, days in [since, until], or None
    when it does not exist yet."""
    from pyspark.sql import functions as F
    if not os.path.isdir(folder) or not any(
            d.startswith("day=") for d in os.listdir(folder)):
        return None
    df = spark.read.option("basePath", folder).parquet(folder)
    if since:
        df = df.filter(F.col("day") >= since)
    if until:
        df = df.filter(F.col("day") <= until)
    return df


def read_days(spark, folder, days):
    """Only the given day partitions of a table (no listing of others)."""
    paths = [os.path.join(folder, f"day={d}") for d in days
             if os.path.isdir(os.path.join(folder, f"day={d}"))]
    if not paths:
        return None
    return spark.read.option("basePath", folder).parquet(*paths)


def size_bucket(col):
    """Index into SIZE_BUCKETS: 0 for 0 bytes, then one per power of ten
    from 1 kB, capped."""
    from pyspark.sql import functions as F
    return (F.when(col <= 0, 0)
            .when(col < 1000, 1)
            .otherwise(F.least(F.floor(F.log10(col)).cast("int") - 1,
                               F.lit(len(SIZE_BUCKETS) - 1))))


def summarise(events, quarantine):
    """The per-day summaries of the given events and quarantine rows."""
    from pyspark.sql import functions as F
    c = F.col
    ev = events.filter(c("kind") != "bind")
    bucket = F.when(c("kind") == "relay",
                    size_bucket(F.coalesce(c("bytes"), F.lit(0))))
    aggs = [F.count(F.lit(1)).alias("n")]
    aggs += [F.count(F.when(c("result") == r, 1)).alias(r) for r in RESULTS]
    aggs += [F.count(F.when(bucket == i, 1)).alias(f"size_{i}")
             for i in range(len(SIZE_BUCKETS))]
    aggs += [F.sum(F.when(bucket == i, c("bytes"))).alias(f"size_bytes_{i}")
             for i in range(len(SIZE_BUCKETS))]
    aggs += [
        F.sum("bytes").alias("bytes"),
        F.kll_sketch_agg_double("waiting_time", SKETCH_K).alias("wait_kll"),
        F.kll_sketch_agg_double("total_time", SKETCH_K).alias("total_kll"),
    ]
    daily = ev.groupBy(
        "day", "kind", "server",
        F.coalesce(c("app_id"), F.lit("")).alias("app_id")).agg(*aggs)
    sides = (events.filter(c("kind").isin("nameplate", "mailbox", "bind"))
             .select("day", "server", F.explode("clients").alias("cl"))
             .select("day", "server", c("cl.side").alias("side"),
                     F.coalesce(c("cl.impl"), F.lit("unknown")).alias("impl"),
                     F.coalesce(c("cl.version"), F.lit("unknown"))
                     .alias("version"))
             .filter(c("side").isNotNull())
             # a client that reconnects binds again with the same side
             .dropDuplicates(["day", "server", "side"]))
    versions = sides.groupBy("day", "server", "impl", "version").agg(
        F.count(F.lit(1)).alias("sides"))
    out = {"daily": daily, "versions": versions}
    if quarantine is not None:
        out["quarantine"] = quarantine.groupBy(
            "day", c("_reason").alias("reason")).agg(
            F.count(F.lit(1)).alias("n"))
    return out


def _quantiles(sketch, prefix):
    from pyspark.sql import functions as F
    return [F.when(F.kll_sketch_get_n_double(sketch) > 0,
                   F.kll_sketch_get_quantile_double(sketch, F.lit(p)))
            .alias(f"{prefix}_p{int(p * 100)}") for p in PERCENTILES]


def daily(summary):
    """Per (day, kind, server, app_id), plus per (day, kind) over all
    servers and apps (server = app_id = ``*``): counts by result, success,
    crowded and scary rates, waiting and total time percentiles, bytes."""
    from pyspark.sql import functions as F
    c = F.col
    counts = ["n"] + RESULTS + ["bytes"]
    overall = summary.groupBy("day", "kind").agg(
        *[F.sum(x).alias(x) for x in counts],
        F.kll_merge_agg_double("wait_kll").alias("wait_kll"),
        F.kll_merge_agg_double("total_kll").alias("total_kll"),
    ).select("day", "kind", F.lit(ALL).alias("server"),
             F.lit(ALL).alias("app_id"), *counts, "wait_kll", "total_kll")
    both = summary.select("day", "kind", "server", "app_id", *counts,
                          "wait_kll", "total_kll").unionByName(overall)
    return both.select(
        "day", "kind", "server", "app_id", "n", *RESULTS,
        (c("happy") / c("n")).alias("success_rate"),
        (c("crowded") / c("n")).alias("crowded_rate"),
        (c("scary") / c("n")).alias("scary_rate"),
        *_quantiles(c("wait_kll"), "waiting"),
        *_quantiles(c("total_kll"), "total"),
        "bytes")


def sizes(summary):
    """Relay sessions per (day, server, size bucket) and their bytes."""
    from pyspark.sql import functions as F
    relay = summary.filter(F.col("kind") == "relay")
    stacked = F.explode(F.array(*[
        F.struct(F.lit(i).alias("bucket"), F.col(f"size_{i}").alias("n"),
                 F.col(f"size_bytes_{i}").alias("bytes"))
        for i in range(len(SIZE_BUCKETS))])).alias("s")
    return (relay.select("day", "server", stacked)
            .groupBy("day", "server", F.col("s.bucket").alias("bucket"))
            .agg(F.sum("s.n").alias("n"), F.sum("s.bytes").alias("bytes"))
            .filter(F.col("n") > 0))


def versions(summary):
    """Client implementation/version shares of sides per (day, server)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    w = Window.partitionBy("day", "server")
    return summary.withColumn("share",
                              F.col("sides") / F.sum("sides").over(w))


def quarantine_counts(summary):
    return summary
