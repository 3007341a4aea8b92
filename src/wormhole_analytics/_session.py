"""The SparkSession: local mode by default, whatever ``spark-submit``
set otherwise.

Settings from shared/SPARK.md: loopback only, no UI, few shuffle
partitions, UTC session time zone (days are UTC days everywhere in this
pipeline, like the event files' names)."""

import os
import subprocess
import sys

DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.session.timeZone": "UTC",
    # the report's Parquet reads only the columns it needs
    "spark.sql.parquet.filterPushdown": "true",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    # day=2026-01-01 stays a string: no date parsing of folder names, and
    # the quarantine's day=unknown lives beside real days
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    # the report's small results go to pandas (HTML, CSV)
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    # ingest writes partitioned by day: keep a writer per day open instead
    # of sorting every task's rows by day first (measured: the parse and
    # write stage took half the time)
    "spark.sql.maxConcurrentOutputFileWriters": "64",
    # the summaries' KLL sketches need the object hash aggregate; past
    # this many groups per task it falls back to sorting every row
    # (measured: 3x slower). Memory per group is bounded by the sketch's k.
    "spark.sql.objectHashAggregate.sortBased.fallbackThreshold": "4096",
}

# Both jobs keep the JVM's work small: the report reads a few summary rows
# per day, and ingest parses in the Python workers (pyarrow). The JIT's
# first tier compiles Spark's generated code in a fraction of the time,
# and the serial collector needs no GC threads (measured: half the
# report's CPU; about 3 of ingest's 30 CPU seconds at 10M events).
JAVA_OPTS = "spark.driver.extraJavaOptions"

SHORT_JOB_CONF = {
    JAVA_OPTS:
        "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}


def quiet_jvm_conf(conf):
    """The driver JVM's logging at errors only (``log4j2.properties``
    beside this module), added to the JVM options ``conf`` has: for a
    JVM this package starts, never under spark-submit."""
    here = os.path.dirname(os.path.abspath(__file__))
    flag = f"-Dlog4j2.configurationFile=file:{os.path.join(here, 'log4j2.properties')}"
    opts = conf.get(JAVA_OPTS, "")
    return {JAVA_OPTS: f"{opts} {flag}".strip()}


def get_session(master=None, app_name="wormhole-analytics", conf=None,
                progress=True):
    """Build (or reuse) the session. ``master`` None keeps what
    ``spark-submit`` chose, or ``local[*]`` when run as plain Python."""
    # a driver started by plain Python binds to loopback unless told
    # otherwise; under spark-submit the operator's environment decides
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # ingest's tasks run this package's code (pyarrow) in Spark's Python
    # workers: in local mode they are this interpreter, not whatever
    # "python3" is on PATH
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    elif "spark.master" not in _submitted_conf():
        builder = builder.master("local[*]")
    settings = dict(DEFAULT_CONF)
    settings["spark.ui.showConsoleProgress"] = "true" if progress else \
        "false"
    settings.update(conf or {})
    for k, v in settings.items():
        builder = builder.config(k, v)
    return builder.getOrCreate()


def started_by_submit():
    """Is this driver's JVM already running (``spark-submit``)?"""
    return bool(_submitted_conf())


def _submitted_conf():
    """Keys that spark-submit passed to this driver (it sets them as
    ``SPARK_CONF_*``-free system properties read by the JVM; PySpark
    exposes them through the launcher environment)."""
    if os.environ.get("SPARK_SUBMIT_OPTS") or os.environ.get(
            "PYSPARK_GATEWAY_PORT"):
        return {"spark.master": True}
    return {}


def stop_for_exit(spark):
    """``spark.stop()`` for a driver that exits next (the CLI).

    PySpark's ``SparkContext.stop`` ends by shutting its accumulator
    server down and waiting for it, and that server's handler only looks
    for the shutdown between one-second polls of its connection from the
    JVM, which the JVM does not close: every stop waited 0.5-1 s (measured
    0.85 of a 0.97 s stop) after the JVM had stopped. Here the server is
    told to stop and not waited for: its threads are daemon threads that
    end with the process. The JVM's SparkContext stops exactly as before.

    ``_accumulatorServer`` and ``server_shutdown`` are PySpark's private
    names: without them this is a plain ``spark.stop()``, and
    tests/analytics/test_session_privates.py fails on that PySpark."""
    server = getattr(spark.sparkContext, "_accumulatorServer", None)
    if server is not None and hasattr(server, "server_shutdown"):
        def shutdown():
            server.server_shutdown = True
        server.shutdown = shutdown
    spark.stop()


def end_gateway(proc, timeout):
    """Let the driver JVM that PySpark started (``proc``, a ``Popen``)
    exit: its gateway exits when its standard input closes. True when it
    has exited within ``timeout`` seconds."""
    try:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return True
