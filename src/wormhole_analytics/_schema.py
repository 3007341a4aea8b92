"""Explicit Spark schemas of the usage events and the store
(docs/usage-events.md, schema version 1).

Nothing is inferred: an inferred schema would read every input twice and
would change type when one line is odd."""

from pyspark.sql import types as T

from wormhole_ops.events import KINDS, MAILBOX_RESULTS, RELAY_RESULTS, SCHEMA_VERSION

CORRUPT = "_corrupt"

CLIENT = T.StructType([
    T.StructField("side", T.StringType()),
    T.StructField("impl", T.StringType()),
    T.StructField("version", T.StringType()),
])

# what one JSON line holds
EVENT_JSON = T.StructType([
    T.StructField("v", T.LongType()),
    T.StructField("server", T.StringType()),
    T.StructField("kind", T.StringType()),
    T.StructField("app_id", T.StringType()),
    T.StructField("started", T.DoubleType()),
    T.StructField("waiting_time", T.DoubleType()),
    T.StructField("total_time", T.DoubleType()),
    T.StructField("result", T.StringType()),
    T.StructField("bytes", T.LongType()),
    T.StructField("clients", T.ArrayType(CLIENT)),
    T.StructField(CORRUPT, T.StringType()),
])

EVENT_COLUMNS = [f.name for f in EVENT_JSON.fields if f.name != CORRUPT]

__all__ = [
    "CORRUPT",
    "EVENT_COLUMNS",
    "EVENT_JSON",
    "KINDS",
    "MAILBOX_RESULTS",
    "RELAY_RESULTS",
    "SCHEMA_VERSION",
]
