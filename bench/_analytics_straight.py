"""The baseline of bench/analytics_bench.py: a straightforward PySpark job
(explicit schema, the raw JSON lines aggregated directly, daily
aggregates with percentile_approx, Parquet out), as an operator would
write it first. Usage: _analytics_straight.py OUT FILE_OR_DIR..."""

import os
import sys

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
from pyspark.sql import SparkSession, functions as F, types as T  # noqa

RESULTS = ["happy", "lonely", "scary", "errory", "pruney", "crowded",
           "quiet", "impatient", "redundant", "jilted", "empty"]
SCHEMA = T.StructType([
    T.StructField("v", T.LongType()), T.StructField("server", T.StringType()),
    T.StructField("kind", T.StringType()),
    T.StructField("app_id", T.StringType()),
    T.StructField("started", T.DoubleType()),
    T.StructField("waiting_time", T.DoubleType()),
    T.StructField("total_time", T.DoubleType()),
    T.StructField("result", T.StringType()),
    T.StructField("bytes", T.LongType()),
])

spark = (SparkSession.builder.master(os.environ.get("MASTER", "local[2]"))
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "4")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.memory", os.environ.get("DRIVER_MEM", "2g"))
         .getOrCreate())
out, inputs = sys.argv[1], sys.argv[2:]
df = spark.read.schema(SCHEMA).json(inputs).filter(F.col("kind") != "bind")
ps = F.array(F.lit(0.5), F.lit(0.9), F.lit(0.99))
agg = df.groupBy(
    F.date_format(F.timestamp_seconds("started"), "yyyy-MM-dd").alias("day"),
    "kind", "server", "app_id").agg(
    F.count(F.lit(1)).alias("n"),
    *[F.sum(F.when(F.col("result") == r, 1).otherwise(0)).alias(r)
      for r in RESULTS],
    F.percentile_approx("waiting_time", ps, 10000).alias("wait"),
    F.percentile_approx("total_time", ps, 10000).alias("total"),
    F.sum("bytes").alias("bytes"))
agg.write.mode("overwrite").partitionBy("day").parquet(out)
spark.stop()
