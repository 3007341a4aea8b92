"""``report``: the daily aggregates as Parquet (partitioned by day),
published CSV tables with small cells suppressed, and one self-contained
HTML page (docs/analytics.md). It reads the per-day summaries that
``ingest`` keeps (``summary/``), never the events themselves."""

import os

from . import _aggregate as A
from ._progress import Progress

DEFAULT_MIN_CELL = 5


def _write_parquet(df, folder):
    """A small table as Parquet partitioned by day, written by the driver
    (pyarrow): the report's results are rows per day, and a Spark job per
    table would cost more than the data."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq
    shutil.rmtree(folder, ignore_errors=True)
    if len(df):
        pq.write_to_dataset(pa.Table.from_pandas(df, preserve_index=False),
                            folder, partition_cols=["day"])


def run_report(spark, store, out, since=None, until=None,
               min_cell=DEFAULT_MIN_CELL, progress=None, title=None):
    """Compute, write and render; returns the collected (small) pandas
    tables: ``daily``, ``sizes``, ``versions``, ``quarantine``."""
    import pandas as pd
    progress = progress or Progress("report")
    os.makedirs(out, exist_ok=True)
    summary = {name: A.read_table(spark, os.path.join(store, "summary", name),
                                  since, until)
               for name in A.SUMMARIES}
    if summary["daily"] is None:
        progress.say(f"no ingested events in {store} for these days")
    steps = (("daily", A.daily, "daily"), ("sizes", A.sizes, "daily"),
             ("versions", A.versions, "versions"),
             ("quarantine", A.quarantine_counts, "quarantine"))
    tables = {}
    for name, fn, source in steps:
        if summary[source] is None:
            tables[name] = pd.DataFrame()
            continue
        progress.say(f"aggregating {name}")
        # the result is small (rows per day, not per event): collect it
        # once and write the Parquet from the same rows
        t = fn(summary[source]).toPandas()
        _write_parquet(t, os.path.join(out, name))
        tables[name] = t
    if not len(tables["quarantine"]):
        tables["quarantine"] = pd.DataFrame(columns=["day", "reason", "n"])
    for t in tables.values():
        if len(t):
            t.sort_values(list(t.columns[:4]), inplace=True,
                          ignore_index=True)
    progress.say("writing published tables and HTML")
    from ._publish import publish_csv, suppress
    published = suppress(tables, min_cell)
    publish_csv(published, os.path.join(out, "published"))
    from ._html import render
    html = render(tables, published, min_cell, since=since, until=until,
                  title=title)
    with open(os.path.join(out, "report.html"), "w", encoding="utf-8") as f:
        f.write(html)
    progress.say(f"report at {os.path.join(out, 'report.html')}")
    return tables
