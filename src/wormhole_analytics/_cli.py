"""``python -m wormhole_analytics`` / ``wormhole-analytics``."""

import argparse
import sys

from ._progress import Progress
from ._quiet import FilteredStderr


def _parser():
    p = argparse.ArgumentParser(
        prog="wormhole-analytics",
        description="Usage analytics for Magic Wormhole servers on Apache "
        "Spark (docs/analytics.md).")
    sub = p.add_subparsers(dest="command", required=True)
    spark_opts = argparse.ArgumentParser(add_help=False)
    spark_opts.add_argument(
        "--master", default=None,
        help="Spark master URL (default: what spark-submit chose, or "
        "local[*] when run as plain Python)")
    spark_opts.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE",
        help="extra Spark setting, e.g. spark.driver.memory=4g (repeat)")
    spark_opts.add_argument("--quiet", action="store_true",
                            help="no progress lines")

    ing = sub.add_parser(
        "ingest", parents=[spark_opts],
        help="JSON-lines events to the Parquet store",
        description="Read the servers' usage-event files (docs/usage-events.md) "
        "into the store: valid events as Parquet by day, every other line "
        "in the quarantine with its reason, and the daily summaries the "
        "report reads. Incremental: files already ingested are skipped, "
        "files that grew are read from where the last run stopped.")
    ing.add_argument("--events", nargs="+", required=True, metavar="PATH",
                     help="event files, folders of them, or globs")
    ing.add_argument("--store", required=True, metavar="DIR",
                     help="the store (created if missing; the same one on "
                     "every run)")
    ing.add_argument("--include-open", action="store_true",
                     help="also read files named for today (UTC), which "
                     "the servers may still be appending to (up to their "
                     "last whole line)")

    rep = sub.add_parser(
        "report", parents=[spark_opts],
        help="daily aggregates, published tables, HTML",
        description="Daily aggregates from the store's summaries: Parquet "
        "tables, CSV tables with small cells suppressed, and one "
        "self-contained report.html.")
    rep.add_argument("--store", required=True, metavar="DIR",
                     help="the store that ingest wrote")
    rep.add_argument("--out", required=True, metavar="DIR",
                     help="where the tables and report.html go")
    rep.add_argument("--since", metavar="YYYY-MM-DD",
                     help="first day (UTC) to report (default: the first "
                     "in the store)")
    rep.add_argument("--until", metavar="YYYY-MM-DD",
                     help="last day (UTC) to report (default: the last in "
                     "the store)")
    rep.add_argument("--min-cell", type=int, default=5, metavar="N",
                     help="published counts below N are shown as <N, and "
                     "figures derived from them left blank (default: 5)")
    rep.add_argument("--title", help="the HTML report's title")

    imp = sub.add_parser(
        "import", help="reference servers' usage databases and relay JSON "
        "log to event files",
        description="Turn the usage records of the reference servers "
        "(magic-wormhole-mailbox-server 0.8 usage database, "
        "magic-wormhole-transit-relay 0.5 database or JSON log) into "
        "usage-event files that ingest reads. No Spark needed.")
    imp.add_argument("--server-id", required=True,
                     help="the name these records get as their server")
    imp.add_argument("--mailbox-db", action="append", default=[],
                     metavar="SQLITE", help="a mailbox server's usage "
                     "database (repeat)")
    imp.add_argument("--relay-db", action="append", default=[],
                     metavar="SQLITE", help="a transit relay's usage "
                     "database (repeat)")
    imp.add_argument("--relay-log", action="append", default=[],
                     metavar="FILE", help="a transit relay's JSON usage "
                     "log (repeat)")
    imp.add_argument("--out", required=True, metavar="DIR",
                     help="where the event files go (one per UTC day)")
    return p


def _conf(pairs):
    conf = {}
    for kv in pairs:
        if "=" not in kv:
            raise SystemExit(f"--conf wants KEY=VALUE, got {kv!r}")
        k, v = kv.split("=", 1)
        conf[k] = v
    return conf


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "import":
        import itertools

        from . import _importer as I
        sources = itertools.chain(
            *(I.mailbox_events(p, args.server_id) for p in args.mailbox_db),
            *(I.relay_db_events(p, args.server_id) for p in args.relay_db),
            *(I.relay_log_events(p, args.server_id) for p in args.relay_log))
        counts = I.write_events(sources, args.out, args.server_id)
        for name, n in sorted(counts.items()):
            print(f"{n}\t{name}")
        return 0
    from ._session import (
        SHORT_JOB_CONF,
        end_gateway,
        get_session,
        quiet_jvm_conf,
        started_by_submit,
        stop_for_exit,
    )
    conf = dict(SHORT_JOB_CONF)
    # a JVM this CLI starts logs errors only and its two unconditional
    # start-up notices are filtered (_quiet); under spark-submit the JVM
    # runs already and the operator's settings apply
    ours = not started_by_submit() and _gateway_process() is None
    if ours:
        conf.update(quiet_jvm_conf(conf))
    conf.update(_conf(args.conf))
    archive = _archive(args.command, conf)
    stderr = FilteredStderr().start() if ours else None
    spark = get_session(args.master, conf=conf, progress=not args.quiet)
    try:
        if args.command == "ingest":
            from ._ingest import ingest
            r = ingest(spark, args.events, args.store,
                       include_open=args.include_open,
                       progress=Progress("ingest", quiet=args.quiet))
            reasons = ",".join(f"{k}:{v}" for k, v in r["reasons"].items())
            print(f"files={r['files']} skipped={r['skipped']} "
                  f"events={r['events']} quarantined={r['quarantined']} "
                  f"quarantine_reasons={reasons or '-'} "
                  f"days={len(r['days'])}")
        else:
            from ._report import run_report
            run_report(spark, args.store, args.out, args.since, args.until,
                       min_cell=args.min_cell, title=args.title,
                       progress=Progress("report", quiet=args.quiet))
    finally:
        stop_for_exit(spark)
        if archive is not None:
            archive.finish(_gateway_process())
        if stderr is not None:
            # the JVM's last words through the filter: it exits when its
            # standard input closes (PySpark's gateway), then the pipe ends
            proc = _gateway_process()
            if proc is not None:
                end_gateway(proc, 10)
            stderr.stop()
    return 0



def _archive(command, conf):
    """The driver JVM's classes from a class-data-sharing archive
    (``_cds``; ``conf`` gets the JVM option), unless that JVM is running
    already: under spark-submit, or a session this process made before
    (whose JVM must not be told to exit)."""
    from ._cds import Archive
    from ._session import started_by_submit
    if started_by_submit() or _gateway_process() is not None:
        return None
    return Archive(command, conf)


def _gateway_process():
    """The driver JVM that PySpark started (its ``Popen``), if any."""
    from pyspark import SparkContext
    return getattr(SparkContext._gateway, "proc", None)


if __name__ == "__main__":
    sys.exit(main())
