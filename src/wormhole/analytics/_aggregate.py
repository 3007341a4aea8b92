"""The daily aggregates (issue 6 "The Spark jobs"), as Spark DataFrames.

All of them come from the ingested Parquet store, reading only the
columns they need and only the days asked for (partition pruning on
``day``)."""

import os

from .._usage_events import MAILBOX_RESULTS, RELAY_RESULTS

RESULTS = list(dict.fromkeys(MAILBOX_RESULTS + RELAY_RESULTS))
PERCENTILES = (0.5, 0.9, 0.99)
# percentile_approx's accuracy: relative rank error 1/ACCURACY; memory per
# group is bounded by it, not by the number of events
ACCURACY = 10000
ALL = "*"  # the server / app_id of the all-servers rows
SIZE_BUCKETS = ["0", "1 B-1 kB", "1-10 kB", "10-100 kB", "100 kB-1 MB",
                "1-10 MB", "10-100 MB", "100 MB-1 GB", "1-10 GB", ">10 GB"]


def read_table(spark, store, table, since=None, until=None):
    """One store table (``events`` or ``quarantine``), days in
    [since, until], or None when the table does not exist yet."""
    from pyspark.sql import functions as F
    path = os.path.join(store, table)
    if not os.path.isdir(path) or not any(
            d.startswith("day=") for d in os.listdir(path)):
        return None
    df = spark.read.option("basePath", path).parquet(path)
    if since:
        df = df.filter(F.col("day") >= since)
    if until:
        df = df.filter(F.col("day") <= until)
    return df


def daily(events):
    """Per (day, kind, server, app_id) and per (day, kind) over all
    servers and apps (server = app_id = ``*``): counts by result, success,
    crowded and scary rates, waiting and total time percentiles, bytes."""
    from pyspark.sql import functions as F
    c = F.col
    ev = events.filter(F.col("kind") != "bind").select(
        "day", "kind", "server",
        F.coalesce(c("app_id"), F.lit("")).alias("app_id"),
        "result", "waiting_time", "total_time", "bytes")
    ps = F.array(*[F.lit(p) for p in PERCENTILES])
    aggs = [F.count(F.lit(1)).alias("n")]
    aggs += [F.sum(F.when(c("result") == r, 1).otherwise(0)).alias(r)
             for r in RESULTS]
    aggs += [
        F.percentile_approx("waiting_time", ps, ACCURACY).alias("_wait"),
        F.percentile_approx("total_time", ps, ACCURACY).alias("_total"),
        F.sum("bytes").alias("bytes"),
    ]
    # one scan for both levels: grouping sets, not two jobs
    grouped = ev.groupingSets(
        [["day", "kind", "server", "app_id"], ["day", "kind"]],
        "day", "kind", "server", "app_id").agg(*aggs)
    out = grouped.select(
        "day", "kind",
        F.coalesce(c("server"), F.lit(ALL)).alias("server"),
        F.coalesce(c("app_id"), F.lit(ALL)).alias("app_id"),
        "n", *RESULTS,
        (c("happy") / c("n")).alias("success_rate"),
        (c("crowded") / c("n")).alias("crowded_rate"),
        (c("scary") / c("n")).alias("scary_rate"),
        *[c("_wait")[i].alias(f"waiting_p{int(p * 100)}")
          for i, p in enumerate(PERCENTILES)],
        *[c("_total")[i].alias(f"total_p{int(p * 100)}")
          for i, p in enumerate(PERCENTILES)],
        "bytes")
    return out


def size_bucket(col):
    """Index into SIZE_BUCKETS: 0 for 0 bytes, then one per power of ten
    from 1 kB, capped."""
    from pyspark.sql import functions as F
    return (F.when(col <= 0, 0)
            .when(col < 1000, 1)
            .otherwise(F.least(F.floor(F.log10(col)).cast("int") - 1,
                               F.lit(len(SIZE_BUCKETS) - 1))))


def sizes(events):
    """Relay sessions per (day, server, size bucket) and their bytes."""
    from pyspark.sql import functions as F
    relay = events.filter(F.col("kind") == "relay").select(
        "day", "server", F.coalesce(F.col("bytes"), F.lit(0)).alias("b"))
    return (relay.groupBy("day", "server",
                          size_bucket(F.col("b")).alias("bucket"))
            .agg(F.count(F.lit(1)).alias("n"), F.sum("b").alias("bytes")))


def versions(events):
    """Client implementation/version shares per (day, server), each side
    counted once a day however many bind, nameplate and mailbox events
    name it (a client that reconnects binds again with the same side)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    c = F.col
    sides = (events.filter(c("kind").isin("nameplate", "mailbox", "bind"))
             .select("day", "server", F.explode("clients").alias("cl"))
             .select("day", "server", c("cl.side").alias("side"),
                     F.coalesce(c("cl.impl"), F.lit("unknown")).alias("impl"),
                     F.coalesce(c("cl.version"), F.lit("unknown"))
                     .alias("version"))
             .filter(c("side").isNotNull())
             .dropDuplicates(["day", "server", "side"]))
    counted = sides.groupBy("day", "server", "impl", "version").agg(
        F.count(F.lit(1)).alias("sides"))
    w = Window.partitionBy("day", "server")
    return counted.withColumn("share", c("sides") / F.sum("sides").over(w))


def quarantine_counts(quarantine):
    from pyspark.sql import functions as F
    return quarantine.groupBy("day", F.col("_reason").alias("reason")).agg(
        F.count(F.lit(1)).alias("n"))
