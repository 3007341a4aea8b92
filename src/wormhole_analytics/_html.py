# -*- test-case-name: tests.analytics.test_report_page -*-
"""The self-contained HTML report for operators (docs/analytics.md).

Everything on the page comes from the *published* tables (small cells
suppressed, ``_publish``): the headline figures are sums of published
cells and rates of such sums, the charts (``_charts``) are drawn from the
same cells, so the headline's wormholes equal the sum of the per-day bars
and nothing on the page gives back a suppressed cell. At the top: the days
covered, the newest day with data and when the page was made. Tables
scroll inside their box instead of running off the page.
"""

import datetime
import html
import json

from . import _aggregate as A
from ._charts import count_withheld, daily_specs, distribution_specs, draw, number, per_server_specs

_CSS = """
body{font-family:sans-serif;margin:1.5em auto;max-width:72em;color:#222;
 padding:0 1em}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:2em}
.scroll{max-width:100%;overflow-x:auto;border:1px solid #ddd;
 margin:.5em 0}
table{border-collapse:collapse;font-size:.8em}
td,th{border:1px solid #ccc;padding:.2em .4em;text-align:right;
 white-space:nowrap}
th{background:#f0f0f0;position:sticky;top:0}
.big{display:inline-block;margin:0 2em 1em 0;vertical-align:top}
.big b{display:block;font-size:1.8em} .big .note{display:block;max-width:14em}
.note{color:#666;font-size:.85em}
figure{margin:1em 0;max-width:100%} figure img{max-width:100%;height:auto}
.nodata{color:#666;font-style:italic;border:1px dashed #ccc;padding:1em}
.multiples{display:grid;grid-template-columns:repeat(auto-fill,
 minmax(22em,1fr));gap:.5em}
"""

_COLUMNS = ["day", "kind", "server", "app_id", "n", "happy", "lonely",
            "scary", "errory", "pruney", "crowded", "quiet", "impatient",
            "redundant", "jilted", "empty", "success_rate", "crowded_rate",
            "scary_rate", "waiting_p50", "waiting_p90", "waiting_p99",
            "total_p50", "total_p90", "total_p99", "bytes"]


def _figure(chart, small=False):
    """A chart's picture (or "no data") with its specification beside it
    as JSON (``data-spec``) for the tests and for anyone re-plotting."""
    img = draw(chart, *((4.5, 2.6) if small else (9.0, 3.2)))
    if img:
        body = img
    elif chart.get("withheld"):
        # suppressed cells are not "no data": say they exist and why
        body = (f'<p class=nodata>{html.escape(chart["title"])}: withheld '
                f'({chart["withheld"]} {_cells(chart["withheld"])} below '
                "the small-cell threshold)</p>")
    else:
        body = (f'<p class=nodata>{html.escape(chart["title"])}: '
                "no data for these days</p>")
    note = (f'<figcaption class=note>{html.escape(chart["note"])}'
            "</figcaption>" if chart.get("note") and img else "")
    attr = html.escape(json.dumps(chart), quote=True)
    return (f'<figure class=chart data-spec="{attr}" '
            f'data-has-image="{"yes" if img else "no"}">{body}{note}'
            "</figure>")


def _cells(n):
    return "cell" if n == 1 else "cells"


def _cell(v):
    f = number(v)
    if f is None:
        return "" if v is None or isinstance(v, float) else str(v)
    if f != int(f):
        return f"{f:.3f}"
    return f"{int(f)}"


def _table(df, columns=None, limit=400):
    if not len(df):
        return "<p class=note>none</p>"
    cols = [c for c in (columns or list(df.columns)) if c in df.columns]
    rows = ["<tr>" + "".join(f"<th>{html.escape(str(c))}</th>"
                             for c in cols) + "</tr>"]
    for rec in df[cols].head(limit).itertuples(index=False):
        rows.append("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>"
                                     for v in rec) + "</tr>")
    more = (f"<p class=note>first {limit} of {len(df)} rows; all in "
            "published/*.csv</p>" if len(df) > limit else "")
    return ("<div class=scroll><table>" + "".join(rows) + "</table></div>"
            + more)


def human_bytes(n):
    """Bytes with an SI unit (kB, MB, GB, TB)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1000


def _sum(values):
    return sum(number(v) for v in values if number(v) is not None)


def _days(n):
    return "day" if n == 1 else "days"


def _total(label, counts, text, min_cell, unit):
    """A headline sum of published day cells: a number when every day is
    published; with a note when some days are withheld; "withheld" (never
    0) when every day is."""
    masked = count_withheld(counts)
    if masked == len(counts):
        return (label, "withheld",
                f"every day had fewer than {min_cell} {unit}")
    note = (f"and {masked} {_days(masked)} withheld (fewer than "
            f"{min_cell} {unit} each)" if masked else None)
    return (label, text, note)


def headline(published, min_cell):
    """[(label, text, note)] from the published all-servers rows: sums of
    published cells, and each rate over the rows whose numerator is
    published (so the rate needs no hidden cell). A figure that rests on
    withheld cells says so: it never reads as zero."""
    d = published["daily"]
    figures = []
    overall = d[d["server"] == A.ALL] if len(d) else d
    mb = overall[overall["kind"] == "mailbox"] if len(d) else d
    if len(mb):
        figures.append(_total("wormholes", list(mb["n"]),
                              f"{int(_sum(mb['n']))}", min_cell,
                              "mailboxes"))
        for label, col in (("succeeded", "happy"), ("crowded", "crowded"),
                           ("scary", "scary")):
            rows = [(number(c), number(n)) for c, n in zip(mb[col], mb["n"], strict=False)
                    if number(c) is not None and number(n) is not None]
            num = sum(c for c, _ in rows)
            den = sum(n for _, n in rows)
            note = None
            if den and (num == 0 or num >= min_cell):
                text = f"{num / den:.1%}"
                if den < _sum(mb["n"]) or count_withheld(mb["n"]):
                    # days whose counts were withheld are not in this rate
                    text += f" of {int(den)}"
            else:
                text = "withheld"
                note = f"fewer than {min_cell} behind it"
            figures.append((label, text, note))
    rl = overall[overall["kind"] == "relay"] if len(d) else d
    if len(rl):
        figures.append(_total("relay sessions", list(rl["n"]),
                              f"{int(_sum(rl['n']))}", min_cell,
                              "sessions"))
        figures.append(_total("bytes relayed", list(rl["n"]),
                              human_bytes(_sum(rl["bytes"])), min_cell,
                              "sessions"))
    q = published["quarantine"]
    figures.append(("quarantined lines",
                    f"{int(_sum(q['n'])) if len(q) else 0}", None))
    return figures


def _big(label, value, note):
    extra = f"<span class=note>{html.escape(note)}</span>" if note else ""
    return (f"<div class=big><b>{html.escape(value)}</b>"
            f"{html.escape(label)}{extra}</div>")


def _rule(min_cell):
    if min_cell <= 1:
        return ("<p class=note>No small-cell suppression (--min-cell "
                f"{min_cell}): every count is shown as it is. Times in "
                "seconds, days in UTC.</p>")
    return (f"<p class=note>Every figure on this page is published: counts "
            f"below {min_cell} show as &lt;{min_cell} (a second count of the "
            f"same row as <i>hidden</i> when one alone would be given back by "
            "the total), figures derived from them are blank, and the "
            "headline and the charts add up only published cells; a figure "
            "or chart whose cells are all below the threshold says "
            "<i>withheld</i>. Times in seconds, days in UTC.</p>")


def render(tables, published, min_cell, since=None, until=None,
           title=None, generated=None):
    d = published["daily"]
    days = sorted(set(d["day"])) if len(d) else []
    generated = generated or datetime.datetime.now(datetime.timezone.utc)
    title = title or "Magic Wormhole usage"
    covered = (f"Days covered: {days[0]} to {days[-1]} (UTC), {len(days)} "
               f"days with data; newest data: {days[-1]}"
               if days else "Days covered: none (no data for these days)")
    asked = (f" (asked: {since or '...'} to {until or '...'})"
             if since or until else "")
    overall = d[d["server"] == A.ALL] if len(d) else d
    per = d[d["server"] != A.ALL] if len(d) else d
    figures = "".join(_big(*f) for f in headline(published, min_cell))
    multiples = per_server_specs(published, min_cell)
    parts = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style>",
        f"</head><body><h1>{html.escape(title)}</h1>",
        f"<p id=coverage>{html.escape(covered + asked)}. Made "
        f"{generated:%Y-%m-%d %H:%M} UTC.</p>",
        f"<div id=headline>{figures}</div>",
        _rule(min_cell),
        "<h2>Per day, all servers</h2>",
        *[_figure(c) for c in daily_specs(published, min_cell)],
        "<h2>Per server</h2>",
        ("<div class=multiples>" + "".join(_figure(c, small=True)
                                           for c in multiples) + "</div>"
         if multiples else "<p class=nodata>no data for these days</p>"),
        "<h2>Relay sizes and clients</h2>",
        *[_figure(c) for c in distribution_specs(published)],
        "<h2>Table: all servers, per day</h2>",
        _table(overall, _COLUMNS),
        "<h2>Table: per server and app id, per day</h2>",
        _table(per, _COLUMNS),
        "<h2>Table: client versions (sides, deduplicated)</h2>",
        _table(published["versions"]),
        "<h2>Table: relay sizes</h2>", _table(published["sizes"]),
        "<h2>Table: quarantined lines, by reason</h2>",
        _table(published["quarantine"]),
        "</body></html>",
    ]
    return "\n".join(parts)
