"""The operator's HTML report (no Spark here: the report's tables are built
directly in the shape the aggregation returns).

- every published figure (tables, headline, chart data) obeys the
  small-cell rule, including the headline and derived rates;
- every chart has axis titles (checked from its specification), bytes
  carry a unit, a chart without data has no picture but says "no data";
- the page, rendered by headless Chromium at 1280 px, does not overflow
  horizontally and shows no broken image; the screenshot is kept in
  ``_trial_temp/artifacts/``.
"""

import json
import math
import os
import subprocess
from html.parser import HTMLParser

import pandas as pd
from twisted.trial import unittest

from wormhole_analytics import _aggregate as A
from wormhole_analytics._html import render
from wormhole_analytics._publish import HIDDEN
from wormhole_analytics._publish import suppress as published_from

from . import _browser as browser

MIN = 5
COUNTS = ["n"] + A.RESULTS
RATES = {"success_rate": "happy", "crowded_rate": "crowded",
         "scary_rate": "scary"}
DERIVED = ["waiting_p50", "waiting_p90", "waiting_p99", "total_p50",
           "total_p90", "total_p99", "bytes"]


def _row(day, kind, server, app_id, n, byte_count=None, **results):
    row = {"day": day, "kind": kind, "server": server, "app_id": app_id,
           "n": n}
    for r in A.RESULTS:
        row[r] = results.get(r, 0)
    for rate, count in RATES.items():
        row[rate] = row[count] / n if n else math.nan
    for i, col in enumerate(DERIVED[:-1]):
        row[col] = 1.5 * (i + 1)
    row["bytes"] = byte_count
    return row


def example_tables():
    """Four days; small cells in several places: a day with 3 mailboxes,
    a single small result in a row (scary=3), a relay day of 2
    sessions, a rare client version."""
    rows = [
        _row("2026-01-01", "mailbox", A.ALL, A.ALL, 40, happy=30, lonely=7,
             scary=3),
        _row("2026-01-02", "mailbox", A.ALL, A.ALL, 3, happy=3),
        _row("2026-01-03", "mailbox", A.ALL, A.ALL, 25, happy=25),
        _row("2026-01-01", "mailbox", "mbx-1", "app", 35, happy=27,
             lonely=5, scary=3),
        _row("2026-01-01", "mailbox", "mbx-2", "app", 5, happy=3, lonely=2),
        _row("2026-01-02", "mailbox", "mbx-1", "app", 3, happy=3),
        _row("2026-01-03", "mailbox", "mbx-1", "app", 25, happy=25),
        _row("2026-01-01", "relay", A.ALL, A.ALL, 12, 512_000_000,
             happy=12),
        _row("2026-01-03", "relay", A.ALL, A.ALL, 2, 1000, happy=2),
        _row("2026-01-01", "relay", "relay-1", A.ALL, 12, 512_000_000,
             happy=12),
        _row("2026-01-03", "relay", "relay-1", A.ALL, 2, 1000, happy=2),
    ]
    daily = pd.DataFrame(rows)
    sizes = pd.DataFrame([
        {"day": "2026-01-01", "server": "relay-1", "bucket": 7, "n": 12,
         "bytes": 512_000_000},
        {"day": "2026-01-03", "server": "relay-1", "bucket": 2, "n": 2,
         "bytes": 1000}])
    versions = pd.DataFrame([
        {"day": "2026-01-01", "server": "mbx-1", "impl": "python",
         "version": "0.24.0", "sides": 78, "share": 78 / 80},
        {"day": "2026-01-01", "server": "mbx-1", "impl": "go",
         "version": "1.0.6", "sides": 2, "share": 2 / 80}])
    quarantine = pd.DataFrame(columns=["day", "reason", "n"])
    return {"daily": daily, "sizes": sizes, "versions": versions,
            "quarantine": quarantine}


class _Page(HTMLParser):
    """Collects the chart specifications, the headline and the tables."""

    def __init__(self):
        super().__init__()
        self.charts, self.headline, self.tables = [], [], []
        self._in_big = self._in_cell = False
        self._big, self._row = [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and "data-spec" in a:
            self.charts.append((json.loads(a["data-spec"]),
                                a["data-has-image"]))
        elif tag == "img" and self.charts:
            self.charts[-1] += (a,)
        elif tag == "div" and a.get("class") == "big":
            self._in_big, self._big = True, []
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
            self.tables[-1].append(self._row)
        elif tag in ("td", "th"):
            self._in_cell = True
            self._row.append("")

    def handle_endtag(self, tag):
        if tag == "div" and self._in_big:
            self._in_big = False
            self.headline.append(tuple(self._big))
        elif tag in ("td", "th"):
            self._in_cell = False

    def handle_data(self, data):
        if self._in_big:
            self._big.append(data)
        if self._in_cell:
            self._row[-1] += data


def page_for(tables):
    published = published_from(tables, MIN)
    return render(tables, published, MIN)


def parse(page):
    p = _Page()
    p.feed(page)
    return p


def as_records(table):
    header, *rows = table
    return [dict(zip(header, row, strict=False)) for row in rows]


class Suppression(unittest.TestCase):
    def test_every_published_figure(self):
        """Every count on the page is 0, at least 5, or masked; a row never
        has exactly one masked result under a published total; no derived
        figure (rate, percentile, bytes, share) rests on a masked count;
        the headline is the sum of the published cells and the charts add
        up to it."""
        page = parse(page_for(example_tables()))
        rows = [r for t in page.tables for r in as_records(t)]
        self.assertTrue(rows)
        masks = (f"<{MIN}", HIDDEN, "")
        for r in rows:
            for col in COUNTS + ["sides"]:
                if col in r and r[col] not in masks:
                    v = int(r[col])
                    self.assertTrue(v == 0 or v >= MIN, (col, r))
            if "kind" in r:
                masked = [c for c in A.RESULTS if r[c] in masks[:2]]
                self.assertTrue(r["n"] == f"<{MIN}" or len(masked) != 1, r)
                for rate, count in RATES.items():
                    if r[count] in masks[:2] or r["n"] in masks[:2]:
                        self.assertEqual(r[rate], "", (rate, r))
                if r["n"] == f"<{MIN}":
                    for col in DERIVED:
                        self.assertEqual(r[col], "", (col, r))
            if "share" in r and r["sides"] in masks[:2]:
                self.assertEqual(r["share"], "", r)
            if "bucket" in r and r["n"] in masks[:2]:
                self.assertEqual(r["bytes"], "", r)

        headline = {big[1]: big[0] for big in page.headline}
        # 40 + 25: the day of 3 is not counted anywhere
        self.assertEqual(headline["wormholes"], "65")
        charts = {c[0]["id"]: c[0] for c in page.charts}
        bars = charts["mailboxes"]["series"][0]["values"]
        self.assertEqual(sum(v for v in bars if v), 65)
        self.assertNotIn(3, bars)
        table_total = sum(int(r["n"]) for r in rows if r.get("kind") ==
                          "mailbox" and r["server"] == A.ALL
                          and r["n"] not in masks)
        self.assertEqual(table_total, 65)
        # scary (3) and, hidden with it, lonely: the rate rests on
        # published cells only
        self.assertEqual(headline["scary"], "0.0% of 25")
        # (over the published days: the day of 3 is withheld)
        self.assertEqual(headline["succeeded"], f"{55 / 65:.1%} of 65")
        # relay: the day of 2 sessions adds nothing, its bytes are blank
        self.assertEqual(headline["relay sessions"], "12")
        self.assertEqual(headline["bytes relayed"], "512.00 MB")
        for chart, _, *_ in page.charts:
            for s in chart["series"]:
                for v in s["values"]:
                    if v is not None and chart["id"] not in (
                            "rates", "waiting", "relay_bytes"):
                        self.assertTrue(v == 0 or v >= MIN, (chart["id"], v))
        self.assertEqual(charts["relay_bytes"]["series"][0]["values"],
                         [512.0, None])
        # the rare version's count is masked: no (empty) bar for it
        self.assertEqual(charts["versions"]["categories"], ["python 0.24.0"])

    def test_charts_have_axis_titles_and_no_empty_picture(self):
        """Every chart specification has a title and both axis titles;
        byte axes name their unit; a chart with no data has no picture
        and says "no data" (here: no relay, no versions at all)."""
        tables = example_tables()
        tables["daily"] = tables["daily"][tables["daily"]["kind"] ==
                                          "mailbox"]
        tables["versions"] = tables["versions"].iloc[0:0]
        tables["sizes"] = tables["sizes"].iloc[0:0]
        html_page = page_for(tables)
        page = parse(html_page)
        self.assertGreaterEqual(len(page.charts), 8)
        empty = set()
        for chart, has_image, *img in page.charts:
            self.assertTrue(chart["title"])
            self.assertTrue(chart["x"]["title"], chart["id"])
            self.assertTrue(chart["y"]["title"], chart["id"])
            data = any(v for s in chart["series"] for v in s["values"])
            self.assertEqual(has_image, "yes" if data else "no", chart["id"])
            self.assertEqual(bool(img), data, chart["id"])
            if not data:
                empty.add(chart["id"])
            if "bytes" in chart["y"]["title"]:
                self.assertRegex(chart["y"]["title"], r"\((B|kB|MB|GB|TB)\)")
        self.assertEqual(empty, {"relay_bytes", "sizes", "versions"})
        self.assertEqual(html_page.count("no data for these days"), 3)
        self.assertIn("Days covered: 2026-01-01 to 2026-01-03", html_page)


def three_relayed_transfers():
    """A small operator's day: 3 relayed transfers and 12 wormholes, so
    every relay figure is below the threshold."""
    daily = pd.DataFrame([
        _row("2026-01-01", "mailbox", A.ALL, A.ALL, 12, happy=12),
        _row("2026-01-01", "mailbox", "mbx-1", "app", 12, happy=12),
        _row("2026-01-01", "relay", A.ALL, A.ALL, 3, 62_960_000, happy=3),
        _row("2026-01-01", "relay", "relay-1", A.ALL, 3, 62_960_000,
             happy=3)])
    sizes = pd.DataFrame([{"day": "2026-01-01", "server": "relay-1",
                           "bucket": 6, "n": 3, "bytes": 62_960_000}])
    versions = pd.DataFrame([{"day": "2026-01-01", "server": "mbx-1",
                              "impl": "python", "version": "0.24.0",
                              "sides": 24, "share": 1.0}])
    return {"daily": daily, "sizes": sizes, "versions": versions,
            "quarantine": pd.DataFrame(columns=["day", "reason", "n"])}


class Withheld(unittest.TestCase):
    def test_a_suppressed_figure_is_never_zero_or_no_data(self):
        """With every relay cell below the threshold the headline says
        "withheld" (not "0" or "0 B"), and the relay charts say withheld,
        not "no data"; the figures that are published stay numbers."""
        page = parse(page_for(three_relayed_transfers()))
        headline = {big[1]: big for big in page.headline}
        self.assertEqual(headline["relay sessions"][0], "withheld")
        self.assertIn("fewer than 5 sessions", headline["relay sessions"][2])
        self.assertEqual(headline["bytes relayed"][0], "withheld")
        self.assertEqual(headline["wormholes"][0], "12")
        self.assertEqual(len(headline["wormholes"]), 2)  # no note
        charts = {c[0]["id"]: c for c in page.charts}
        for chart_id in ("relay_bytes", "sizes", "server-relay-1"):
            spec, has_image = charts[chart_id][:2]
            self.assertEqual(has_image, "no", chart_id)
            self.assertGreater(spec["withheld"], 0, chart_id)
        # the sizes chart: the bucket is blank, not a bar of 0
        self.assertIsNone(charts["sizes"][0]["series"][0]["values"][6])
        self.assertNotIn("no data", page_for(three_relayed_transfers()))

    def test_some_days_withheld_are_counted_as_such(self):
        """A sum over published days says how many days it leaves out."""
        page = parse(page_for(example_tables()))
        headline = {big[1]: big for big in page.headline}
        self.assertEqual(headline["wormholes"][:2], ("65", "wormholes"))
        self.assertIn("1 day withheld", headline["wormholes"][2])
        self.assertIn("1 day withheld", headline["relay sessions"][2])

    def test_no_threshold_no_suppression_wording(self):
        """--min-cell 1 suppresses nothing: no "fewer than 1" anywhere."""
        tables = three_relayed_transfers()
        page = render(tables, published_from(tables, 1), 1)
        self.assertNotIn("fewer than 1", page)
        self.assertNotIn("below 1", page)
        self.assertIn("No small-cell suppression", page)
        self.assertEqual({big[1]: big[0] for big in parse(page).headline}
                         ["relay sessions"], "3")


class Browser(unittest.TestCase):
    timeout = 120

    def test_small_operator_reads_withheld(self):
        """The page of a server with 3 relayed transfers, as Chromium shows
        it: the relay headline figures read "withheld" with their reason,
        never 0, and no chart says "no data" for what is withheld."""
        base = os.path.abspath(self.mktemp())
        os.makedirs(base)
        shown = browser.probe(page_for(three_relayed_transfers()), base)
        figures = {fig.split("\n")[1]: fig for fig in shown["headline"]}
        for label in ("relay sessions", "bytes relayed"):
            self.assertTrue(figures[label].startswith("withheld\n"),
                            figures[label])
            self.assertIn("fewer than 5 sessions", figures[label])
        self.assertNotIn("no data", shown["text"])
        self.assertIn("Relay: bytes carried per day: withheld", shown["text"])
        self.assertNotRegex(shown["text"], r"(?m)^0 B$")

    def test_chromium_1280(self):
        """Headless Chromium at 1280 px: the page is no wider than the
        window (the wide tables scroll inside their box), every picture
        decodes and fits; the screenshot is kept as an artifact."""
        base = os.path.abspath(self.mktemp())
        os.makedirs(base)
        page = page_for(example_tables())
        report = os.path.join(base, "report.html")
        with open(report, "w") as f:
            f.write(page)
        probe = browser.probe(page, base)
        self.assertEqual(probe["innerWidth"], 1280)
        self.assertLessEqual(probe["scrollWidth"], 1280, probe)
        self.assertEqual(probe["overflowing"], [])
        self.assertGreaterEqual(len(probe["images"]), 5)
        for alt, natural, right in probe["images"]:
            self.assertGreater(natural, 0, alt)
            self.assertLessEqual(right, 1280, alt)
        artifacts = os.path.abspath("artifacts")
        os.makedirs(artifacts, exist_ok=True)
        shot = os.path.join(artifacts, "report-1280.png")
        subprocess.run(browser.flags(base, 4000) + [f"--screenshot={shot}",
                                                    "file://" + report],
                       capture_output=True, timeout=90, check=True)
        self.assertGreater(os.path.getsize(shot), 10000)
