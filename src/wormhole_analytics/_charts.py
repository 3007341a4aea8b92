# -*- test-case-name: tests.analytics.test_report_page -*-
"""The report's charts: first a specification (plain data: titles, axis
titles with units, series), then a matplotlib PNG drawn from it.

Every chart is built from the *published* tables (small cells already
suppressed), so no bar reveals what a table hides, and the page embeds
each specification next to its picture so tests check the chart's content
and labels from the specification, not from pixels. A chart with nothing
to draw gets no picture, only words: "withheld" when small-cell
suppression took its cells (a suppressed figure is never shown as zero
or as missing data), "no data" when there were none.
"""

import base64
import io
import math

from . import _aggregate as A

# SI byte units, for axes that carry bytes (never 1e8 on an axis)
_BYTE_UNITS = (("B", 1), ("kB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12))


def number(v):
    """A published cell as a float, or None (suppressed, hidden or
    missing)."""
    if v is None or isinstance(v, (str, bool)):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def withheld(v):
    """Is this published cell a suppressed count (``<N`` or hidden,
    ``_publish``)? Such a cell is withheld, never zero."""
    return isinstance(v, str)


def count_withheld(values):
    return sum(1 for v in values if withheld(v))


def byte_unit(values):
    """(unit, divisor) that shows the largest of ``values`` as 1-999."""
    top = max((v for v in values if v is not None), default=0)
    unit, div = _BYTE_UNITS[0]
    for u, d in _BYTE_UNITS:
        if top >= d:
            unit, div = u, d
    return unit, div


def spec(chart_id, title, kind, x_title, y_title, categories, series,
         note=None, y_percent=False, y_log=False, withheld=0):
    """A chart specification. ``series``: [{"name", "values"}] aligned with
    ``categories``; ``kind``: bar, line or barh; ``withheld``: how many of
    its cells small-cell suppression left out (so that a chart with
    nothing to draw says "withheld", not "no data")."""
    return {"id": chart_id, "title": title, "kind": kind, "withheld": withheld,
            "x": {"title": x_title}, "y": {"title": y_title,
                                           "percent": y_percent,
                                           "log": y_log},
            "categories": [str(c) for c in categories],
            "series": [{"name": s["name"],
                        "values": [None if v is None else float(v)
                                   for v in s["values"]]}
                       for s in series],
            "note": note}


def has_data(chart):
    return any(v is not None and v != 0
               for s in chart["series"] for v in s["values"])


def _overall(published, kind):
    d = published["daily"]
    if not len(d):
        return d
    return d[(d["kind"] == kind) & (d["server"] == A.ALL)].sort_values("day")


def daily_specs(published, min_cell):
    """The per-day charts of the all-servers rows."""
    mb = _overall(published, "mailbox")
    days = list(mb["day"]) if len(mb) else []
    hidden = suppression_note(min_cell, "days with fewer than {n} mailboxes "
                              "are left out")
    masked_days = count_withheld(mb["n"]) if days else 0
    waits = [number(v) for col in ("waiting_p50", "waiting_p90")
             for v in (mb[col] if days else [])]
    waits = [w for w in waits if w]
    # a log axis only when the times span more than two decades
    wide = bool(waits) and max(waits) > 100 * min(waits)
    charts = [
        spec("mailboxes", "Wormholes (mailboxes) per day", "bar",
             "day (UTC)", "mailboxes per day", days,
             [{"name": "mailboxes",
               "values": [number(v) for v in mb["n"]] if days else []}],
             note=hidden, withheld=masked_days),
        spec("rates", "Success, crowded and scary rates per day", "line",
             "day (UTC)", "share of the day's mailboxes (%)", days,
             [{"name": name, "values": [
                 None if number(v) is None else 100 * number(v)
                 for v in mb[col]] if days else []}
              for name, col in (("succeeded (happy)", "success_rate"),
                                ("crowded", "crowded_rate"),
                                ("scary", "scary_rate"))],
             y_percent=True,
             note=suppression_note(min_cell, "blank where the count behind "
                                   "a rate is below {n}"),
             withheld=masked_days),
        spec("waiting", "Time waiting for the peer", "line", "day (UTC)",
             "seconds (log scale)" if wide else "seconds", days,
             [{"name": name, "values": [number(v) for v in mb[col]]
               if days else []}
              for name, col in (("median", "waiting_p50"),
                                ("90th percentile", "waiting_p90"))],
             y_log=wide, note=hidden, withheld=masked_days),
    ]
    rl = _overall(published, "relay")
    rdays = list(rl["day"]) if len(rl) else []
    raw = [number(v) for v in rl["bytes"]] if rdays else []
    unit, div = byte_unit(raw)
    charts.append(spec(
        "relay_bytes", "Relay: bytes carried per day", "bar", "day (UTC)",
        f"bytes relayed ({unit})", rdays,
        [{"name": "bytes", "values": [None if v is None else v / div
                                      for v in raw]}],
        note=suppression_note(min_cell, "blank where the day had fewer "
                              "than {n} sessions"),
        withheld=count_withheld(rl["n"]) if rdays else 0))
    return charts


def suppression_note(min_cell, text):
    """``text`` with ``{n}`` the threshold, or None when nothing is
    suppressed (``--min-cell 1`` or less)."""
    return text.format(n=min_cell) if min_cell > 1 else None


def distribution_specs(published):
    """Totals over the report's days: relay sizes, client versions."""
    s = published["sizes"]
    # a bucket is 0 when no session fell in it, and blank (not 0) when
    # its only cells are withheld
    totals = {b: 0.0 for b in A.SIZE_BUCKETS}
    masked = set()
    for b, n in zip(s["bucket"], s["n"], strict=False) if len(s) else ():
        if withheld(n):
            masked.add(b)
        totals[b] += number(n) or 0.0
    for b in masked:
        totals[b] = totals[b] or None
    charts = [spec("sizes", "Relay: sessions by size", "bar",
                   "session size (bytes, both directions)", "sessions",
                   list(totals), [{"name": "sessions",
                                   "values": list(totals.values())}],
                   withheld=count_withheld(s["n"]) if len(s) else 0)]
    v = published["versions"]
    counts = {}
    for impl, ver, n in zip(v["impl"], v["version"], v["sides"], strict=False) \
            if len(v) else ():
        key = f"{impl} {ver}"
        counts[key] = counts.get(key, 0.0) + (number(n) or 0.0)
    # a version whose every cell is suppressed gets no (empty) bar
    top = sorted(((k, n) for k, n in counts.items() if n),
                 key=lambda kv: -kv[1])[:15]
    charts.append(spec(
        "versions", "Clients by implementation and version (top 15)", "barh",
        "sides (deduplicated per day and server)",
        "implementation and version", [k for k, _ in reversed(top)],
        [{"name": "sides", "values": [n for _, n in reversed(top)]}],
        withheld=count_withheld(v["sides"]) if len(v) else 0))
    return charts


def per_server_specs(published, min_cell):
    """Small multiples: one panel per server, mailboxes (or relay
    sessions) per day, the sum of its published per-app cells."""
    d = published["daily"]
    if not len(d):
        return []
    per = d[(d["server"] != A.ALL) & (d["kind"].isin(["mailbox", "relay"]))]
    days = sorted(set(d["day"]))
    panels = []
    for server in sorted(set(per["server"])):
        rows = per[per["server"] == server]
        series = []
        masked = count_withheld(rows["n"])
        for kind in ("mailbox", "relay"):
            k = rows[rows["kind"] == kind]
            if not len(k):
                continue
            by_day = {}
            for day, n in zip(k["day"], k["n"], strict=False):
                if number(n) is not None:
                    by_day[day] = by_day.get(day, 0.0) + number(n)
            series.append({"name": f"{kind} sessions",
                           "values": [by_day.get(day) for day in days]})
        panels.append(spec(
            f"server-{server}", server, "line", "day (UTC)",
            "sessions per day", days, series,
            note=suppression_note(min_cell, "cells below {n} are left out"),
            withheld=masked))
    return panels


def draw(chart, width=9.0, height=3.2):
    """The chart as an ``<img>`` (PNG data URI), or None without data."""
    if not has_data(chart):
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_title(chart["title"], fontsize=11)
    ax.set_xlabel(chart["x"]["title"], fontsize=9)
    ax.set_ylabel(chart["y"]["title"], fontsize=9)
    cats = chart["categories"]
    series = chart["series"]
    if chart["kind"] == "barh":
        ax.barh(cats, [v or 0 for v in series[0]["values"]])
    elif chart["kind"] == "bar":
        ax.bar(cats, [v or 0 for v in series[0]["values"]])
    else:
        for s in series:
            ax.plot(cats, [math.nan if v is None else v for v in s["values"]],
                    marker="o", label=s["name"])
    if chart["y"]["log"]:
        ax.set_yscale("symlog")
    elif chart["kind"] != "barh":
        formatter = ScalarFormatter(useOffset=False)
        formatter.set_scientific(False)
        ax.yaxis.set_major_formatter(formatter)
        # counts and times start at 0: panels compare by height
        ax.set_ylim(bottom=0)
    if chart["y"]["percent"]:
        ax.set_ylim(0, 100)
    if chart["kind"] == "line" and len(series) > 1:
        # outside the plot, so it never hides a point
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1),
                  frameon=False)
    if chart["kind"] != "barh":
        ax.tick_params(axis="x", labelrotation=45, labelsize=7)
    ax.tick_params(axis="y", labelsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (f'<img alt="{chart["title"]}" '
            f'src="data:image/png;base64,{data}">')
