"""The daily aggregates and the incremental ingest, checked against an
independent computation in plain Python over the same event files
(docs/analytics.md, "Tests": generated data with heavy tails and several
days, servers and app ids)."""

import bisect
import collections
import json
import math
import os

from twisted.trial import unittest

from wormhole_analytics import _aggregate as A
from wormhole_analytics._generate import write_files
from wormhole_analytics._ingest import ingest, plan, tail_hash
from wormhole_analytics._report import run_report
from wormhole_ops.events import day_of

from ._spark import QuietProgress, spark


def oracle(files):
    """Daily figures from the raw lines, without Spark."""
    groups = collections.defaultdict(list)
    bad = 0
    sides = {}
    sizes = collections.Counter()
    for path in files:
        with open(path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    bad += 1
                    continue
                day = day_of(e["started"])
                if e["kind"] == "bind" or e["clients"]:
                    for c in e["clients"]:
                        sides.setdefault((day, e["server"], c["side"]),
                                         (c["impl"], c["version"]))
                if e["kind"] == "bind":
                    continue
                groups[(day, e["kind"], e["server"], e["app_id"] or "")]\
                    .append(e)
                groups[(day, e["kind"], A.ALL, A.ALL)].append(e)
                if e["kind"] == "relay":
                    b = e["bytes"]
                    bucket = 0 if b <= 0 else 1 if b < 1000 else min(
                        math.floor(math.log10(b)) - 1,
                        len(A.SIZE_BUCKETS) - 1)
                    sizes[(day, e["server"], bucket)] += 1
    versions = collections.Counter(
        (day, server, impl, ver)
        for (day, server, _side), (impl, ver) in sides.items())
    return groups, bad, versions, sizes


_fixture = {}


def _aggregated():
    """Generate, ingest and report once per test process (trial has no
    setUpClass); the tests below only read the result."""
    if not _fixture:
        base = os.path.abspath("aggregates")
        files = write_files(os.path.join(base, "events"), 6000, seed=7,
                            days=3, servers=3, bad_every=101)
        store = os.path.join(base, "store")
        _fixture["ingested"] = ingest(spark(), files, store,
                                      progress=QuietProgress())
        _fixture["tables"] = run_report(spark(), store,
                                        os.path.join(base, "out"),
                                        progress=QuietProgress())
        _fixture["oracle"] = oracle(files)
        _fixture["out"] = os.path.join(base, "out")
    return _fixture


class Aggregates(unittest.TestCase):
    def setUp(self):
        f = _aggregated()
        self.ingested, self.tables, self.oracle, self.out = (
            f["ingested"], f["tables"], f["oracle"], f["out"])

    def test_ingest_counts(self):
        """Ingest counts every line: events plus quarantined equals the
        lines written."""
        _, bad, _, _ = self.oracle
        self.assertEqual(self.ingested["quarantined"], bad)
        self.assertEqual(self.ingested["events"] + bad, 6000)

    def test_daily_counts_and_rates(self):
        """Counts by result, success/crowded/scary rates and bytes of every
        (day, kind, server, app) and all-servers group match."""
        groups, _, _, _ = self.oracle
        daily = self.tables["daily"]
        self.assertEqual(len(daily), len(groups))
        for row in daily.itertuples(index=False):
            evs = groups[(row.day, row.kind, row.server, row.app_id)]
            moods = collections.Counter(e["result"] for e in evs)
            self.assertEqual(row.n, len(evs))
            for r in A.RESULTS:
                self.assertEqual(getattr(row, r), moods[r], (row, r))
            self.assertAlmostEqual(row.success_rate, moods["happy"] / len(evs))
            self.assertAlmostEqual(row.crowded_rate,
                                   moods["crowded"] / len(evs))
            self.assertAlmostEqual(row.scary_rate, moods["scary"] / len(evs))
            if row.kind == "relay":
                self.assertEqual(row.bytes, sum(e["bytes"] for e in evs))

    def test_percentiles(self):
        """Waiting and total time percentiles (heavy-tailed) are values of
        the group whose rank is within the sketch's error bound (1% of the
        group, KLL k=1000) of the nearest-rank percentile."""
        groups, _, _, _ = self.oracle
        for row in self.tables["daily"].itertuples(index=False):
            evs = groups[(row.day, row.kind, row.server, row.app_id)]
            waits = [e["waiting_time"] for e in evs
                     if e["waiting_time"] is not None]
            totals = [e["total_time"] for e in evs]
            for p in A.PERCENTILES:
                col = int(p * 100)
                self.assertRankClose(totals, p, getattr(row, f"total_p{col}"))
                got = getattr(row, f"waiting_p{col}")
                if waits:
                    self.assertRankClose(waits, p, got)
                else:
                    self.assertTrue(got is None or math.isnan(got), got)

    def assertRankClose(self, values, p, got):
        v = sorted(values)
        self.assertIn(got, v)
        want = max(1, math.ceil(p * len(v)))
        lo = bisect.bisect_left(v, got) + 1
        hi = bisect.bisect_right(v, got)
        slack = 0.01 * len(v) + 1
        self.assertTrue(lo - slack <= want <= hi + slack,
                        (p, len(v), want, lo, hi, got))

    def test_versions_dedup_by_side(self):
        """Version shares count each side once a day per server."""
        _, _, versions, _ = self.oracle
        got = {(r.day, r.server, r.impl, r.version): r.sides
               for r in self.tables["versions"].itertuples(index=False)}
        self.assertEqual(got, dict(versions))
        shares = self.tables["versions"].groupby(["day", "server"])[
            "share"].sum()
        for s in shares:
            self.assertAlmostEqual(s, 1.0)

    def test_sizes(self):
        """The relay size histogram matches."""
        _, _, _, sizes = self.oracle
        got = {(r.day, r.server, r.bucket): r.n
               for r in self.tables["sizes"].itertuples(index=False)}
        self.assertEqual(got, dict(sizes))

    def test_quarantine_table(self):
        """Malformed lines are counted in the report's quarantine table."""
        _, bad, _, _ = self.oracle
        q = self.tables["quarantine"]
        self.assertEqual(int(q["n"].sum()), bad)
        self.assertEqual(set(q["reason"]), {"malformed"})

    def test_outputs(self):
        """The report writes Parquet partitioned by day, suppressed CSVs
        and one self-contained HTML page with inlined charts."""
        out = self.out
        days = sorted(d for d in os.listdir(os.path.join(out, "daily"))
                      if d.startswith("day="))
        self.assertEqual(days, ["day=2026-01-01", "day=2026-01-02",
                                "day=2026-01-03"])
        with open(os.path.join(out, "report.html")) as f:
            page = f.read()
        self.assertIn("data:image/png;base64,", page)
        self.assertNotIn("src=\"http", page)
        for name in ("daily", "sizes", "versions", "quarantine"):
            self.assertTrue(os.path.exists(
                os.path.join(out, "published", f"{name}.csv")))


class Incremental(unittest.TestCase):
    def test_only_new_files(self):
        """A second ingest skips files already read, reads a new day's
        file, leaves today's file alone, and reports a changed file
        instead of counting it twice."""
        base = os.path.abspath(self.mktemp())
        files = write_files(os.path.join(base, "ev"), 300, seed=1, days=2)
        store = os.path.join(base, "store")
        first = ingest(spark(), files[:1], store, progress=QuietProgress())
        self.assertEqual(first["files"], 1)
        before = sorted(os.listdir(os.path.join(store, "events")))
        again = ingest(spark(), files, store, today="2026-01-02",
                       progress=QuietProgress())
        self.assertEqual((again["files"], again["skipped"]), (0, 2))
        later = ingest(spark(), files, store, today="2026-01-03",
                       progress=QuietProgress())
        self.assertEqual(later["files"], 1)
        self.assertEqual(later["days"], ["2026-01-02"])
        after = sorted(os.listdir(os.path.join(store, "events")))
        self.assertEqual(after, before + ["day=2026-01-02"])
        total = spark().read.parquet(os.path.join(store, "events")).count()
        self.assertEqual(total, 300)

    def test_grown_and_rewritten_files(self):
        """A file that grew since it was ingested is read from where the
        last run stopped: only its new lines are counted. One that shrank
        (rewritten) is reported and skipped instead of counted twice."""
        base = os.path.abspath(self.mktemp())
        [path] = write_files(os.path.join(base, "ev"), 100, seed=4, days=1)
        store = os.path.join(base, "store")
        ingest(spark(), [path], store, progress=QuietProgress())
        with open(path) as f:
            first = f.readline()
        with open(path, "a") as f:
            f.write(first)
            f.write("{}\n")
        p = QuietProgress()
        grown = ingest(spark(), [path], store, progress=p)
        self.assertEqual((grown["files"], grown["events"],
                          grown["quarantined"]), (1, 1, 1))
        self.assertEqual(grown["reasons"], {"bad-version": 1})
        self.assertTrue(any("grew" in line for line in p.lines))
        events = spark().read.parquet(os.path.join(store, "events"))
        self.assertEqual(events.count(), 101)
        # the day's summary was recomputed from all its events
        summary = spark().read.parquet(os.path.join(store, "summary",
                                                    "daily"))
        with open(path) as f:
            binds = sum('"kind":"bind"' in line for line in f)
        self.assertEqual(summary.groupBy().sum("n").collect()[0][0],
                         101 - binds)
        with open(path, "w") as f:
            f.write(first)
        p = QuietProgress()
        changed = ingest(spark(), [path], store, progress=p)
        self.assertEqual(changed["files"], 0)
        self.assertTrue(any("changed since" in line for line in p.lines))
        self.assertEqual(spark().read.parquet(
            os.path.join(store, "events")).count(), 101)

    def test_failed_task_leaves_the_store_as_it_was(self):
        """A split whose task fails (here a corrupt gzip file) fails the
        ingest with Spark's error; nothing of the batch is published, the
        manifest does not record the files, and no staging is left."""
        base = os.path.abspath(self.mktemp())
        [good] = write_files(os.path.join(base, "ev"), 20, seed=6, days=1)
        bad = os.path.join(base, "ev", "usage-events-2026-01-02.jsonl.gz")
        with open(bad, "wb") as f:
            f.write(b"this is not gzip\n")
        store = os.path.join(base, "store")
        # Spark's error class depends on where the task fails; the store is the point
        self.assertRaises(Exception, ingest, spark(), [good, bad], store,  # noqa: B017
                          progress=QuietProgress())
        self.assertEqual(sorted(os.listdir(store)), ["_staging"])
        self.assertEqual(os.listdir(os.path.join(store, "_staging")), [])

    def test_versions_count_each_side_once_at_its_first_row(self):
        """The day's version shares count each (server, side) once, with
        the impl and version of its first row (a reconnecting client binds
        again with the same side, perhaps after an upgrade); the same side
        on another server is another client."""
        import pyarrow as pa

        from wormhole_analytics._split_task import _versions
        sides = pa.table({
            "server": ["s1", "s1", "s2", "s1", "s1"],
            "side": ["a", "a", "a", "b", "c"],
            "impl": ["python", "python", "go", "python", "go"],
            "version": ["0.23", "0.24", "1.0", "0.24", "1.0"]})
        got = {(r["server"], r["impl"], r["version"]): r["sides"]
               for r in _versions(sides).to_pylist()}
        self.assertEqual(got, {("s1", "python", "0.23"): 1,
                               ("s1", "python", "0.24"): 1,
                               ("s1", "go", "1.0"): 1,
                               ("s2", "go", "1.0"): 1})

    def test_grown_file_whose_old_bytes_changed_is_skipped(self):
        """A file that grew is read from the recorded offset only if the
        bytes before that offset are still the ones ingested (the
        manifest's sha256 of the last 4 KiB): one rewritten with a longer
        content is reported and skipped, not half read. A manifest from
        before the check (no hash) still reads a grown file."""
        path = os.path.abspath(self.mktemp())
        with open(path, "w") as f:
            f.write('{"a":1}\n{"b":2}\n')
        st = os.stat(path)
        seen = {"size": st.st_size, "mtime": st.st_mtime,
                "offset": st.st_size,
                "tail_sha256": tail_hash(path, st.st_size)}
        with open(path, "a") as f:
            f.write('{"c":3}\n')
        new, skipped = plan([path], {path: seen}, "2026-01-01")
        self.assertEqual((new, skipped), ([(path, seen["offset"],
                                            os.path.getsize(path))], []))
        with open(path, "w") as f:
            f.write('{"a":9}\n{"b":2}\n{"c":3}\n')
        new, skipped = plan([path], {path: seen}, "2026-01-01")
        self.assertEqual((new, skipped),
                         ([], [(path, "changed since it was ingested")]))
        del seen["tail_sha256"]
        new, _ = plan([path], {path: seen}, "2026-01-01")
        self.assertEqual(new, [(path, seen["offset"],
                                os.path.getsize(path))])

    def test_today_skipped_with_advice(self):
        """Today's file is skipped, and the reason says how to include it
        (--include-open) instead of leaving the operator guessing."""
        base = os.path.abspath(self.mktemp())
        os.makedirs(base)
        path = os.path.join(base, "mailbox-events-2026-01-01.jsonl")
        with open(path, "w") as f:
            f.write('{"a":1}\n')
        new, skipped = plan([path], {}, "2026-01-01")
        self.assertEqual(new, [])
        [(where, why)] = skipped
        self.assertEqual(where, path)
        self.assertIn("--include-open", why)

    def test_open_file_whole_lines_only(self):
        """With --include-open, today's file is read up to its last whole
        line; the unterminated tail is read by the next run, once whole."""
        base = os.path.abspath(self.mktemp())
        [path] = write_files(os.path.join(base, "ev"), 50, seed=5, days=1)
        with open(path) as f:
            lines = f.readlines()
        with open(path, "w") as f:
            f.writelines(lines[:-1])
            f.write(lines[-1][:10])
        store = os.path.join(base, "store")
        first = ingest(spark(), [path], store, today="2026-01-01",
                       include_open=True, progress=QuietProgress())
        self.assertEqual(first["events"] + first["quarantined"], 49)
        with open(path, "a") as f:
            f.write(lines[-1][10:])
        second = ingest(spark(), [path], store, today="2026-01-01",
                        include_open=True, progress=QuietProgress())
        self.assertEqual((second["events"], second["quarantined"]), (1, 0))

    def test_day_added_to_later(self):
        """Events for a day that is already summarised (another server's
        file, ingested in a later run) are merged: the day's summary is
        recomputed from all its events, and other days are not touched."""
        base = os.path.abspath(self.mktemp())
        a = write_files(os.path.join(base, "a"), 200, seed=2, days=1)
        b = write_files(os.path.join(base, "b"), 150, seed=3, days=1,
                        servers=1)
        other = os.path.join(base, "b", "more-2026-01-01.jsonl")
        os.rename(b[0], other)
        store = os.path.join(base, "store")
        ingest(spark(), a, store, progress=QuietProgress())
        ingest(spark(), [other], store, progress=QuietProgress())
        tables = run_report(spark(), store, os.path.join(base, "out"),
                            progress=QuietProgress())
        binds = 0
        for path in a + [other]:
            with open(path) as f:
                binds += sum('"kind":"bind"' in line for line in f)
        d = tables["daily"]
        self.assertEqual(int(d[d["server"] == A.ALL]["n"].sum()),
                         350 - binds)
        self.assertEqual(int(tables["versions"]["sides"].sum()), binds)
