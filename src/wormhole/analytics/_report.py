"""``report``: the daily aggregates as Parquet (partitioned by day),
published CSV tables with small cells suppressed, and one self-contained
HTML page (docs/analytics.md)."""

import os

from . import _aggregate as A
from ._progress import Progress

DEFAULT_MIN_CELL = 5


def run_report(spark, store, out, since=None, until=None,
               min_cell=DEFAULT_MIN_CELL, progress=None, title=None):
    """Compute, write and render; returns the collected (small) pandas
    tables: ``daily``, ``sizes``, ``versions``, ``quarantine``."""
    progress = progress or Progress("report")
    os.makedirs(out, exist_ok=True)
    events = A.read_table(spark, store, "events", since, until)
    quarantine = A.read_table(spark, store, "quarantine", since, until)
    tables = {}
    if events is None:
        progress.say(f"no ingested events in {store}")
        import pandas as pd
        tables = {k: pd.DataFrame() for k in ("daily", "sizes", "versions")}
    else:
        for name, fn in (("daily", A.daily), ("sizes", A.sizes),
                         ("versions", A.versions)):
            progress.say(f"aggregating {name}")
            # small results: collect once, write the Parquet from pandas'
            # copy through Spark so the layout is Spark's
            df = fn(events).cache()
            df.write.mode("overwrite").partitionBy("day").parquet(
                os.path.join(out, name))
            tables[name] = df.toPandas()
            df.unpersist()
    if quarantine is not None:
        progress.say("counting quarantine")
        q = A.quarantine_counts(quarantine)
        q.write.mode("overwrite").partitionBy("day").parquet(
            os.path.join(out, "quarantine"))
        tables["quarantine"] = q.toPandas()
    else:
        import pandas as pd
        tables["quarantine"] = pd.DataFrame(columns=["day", "reason", "n"])
    for name, t in tables.items():
        if len(t.columns):
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
