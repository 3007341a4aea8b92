"""The self-contained HTML report: headline figures, matplotlib charts
inlined as PNG data URIs, and the published (suppressed) tables. Charts
are drawn from the published numbers, so a suppressed cell is not
revealed by a bar's height."""

import base64
import html
import io
import math

from . import _aggregate as A

_CSS = """
body{font-family:sans-serif;margin:2em;max-width:70em;color:#222}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f0f0f0} .big{display:inline-block;margin:0 2em 1em 0}
.big b{display:block;font-size:1.8em} .note{color:#666;font-size:.85em}
"""


def _num(v):
    """A published cell as a float, or None (suppressed or missing)."""
    if v is None or isinstance(v, str):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _png(fig):
    import matplotlib.pyplot as plt
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="chart" src="data:image/png;base64,{data}">'


def _fig(title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 3.2))
    ax.set_title(title)
    return fig, ax


def _overall(published, kind):
    d = published["daily"]
    if not len(d):
        return d
    return d[(d["kind"] == kind) & (d["server"] == A.ALL)].sort_values("day")


def _charts(published):
    out = []
    mb = _overall(published, "mailbox")
    if len(mb):
        days = list(mb["day"])
        fig, ax = _fig("Wormholes (mailboxes) per day, by result")
        bottom = [0.0] * len(days)
        for r in ("happy", "lonely", "scary", "errory", "pruney", "crowded",
                  "quiet"):
            vals = [_num(v) or 0.0 for v in mb[r]]
            if any(vals):
                ax.bar(days, vals, bottom=bottom, label=r)
                bottom = [b + v for b, v in zip(bottom, vals)]
        if any(bottom):
            ax.legend(fontsize=7, ncol=7, loc="lower center",
                      bbox_to_anchor=(0.5, 1.08), frameon=False)
        ax.tick_params(axis="x", labelrotation=45, labelsize=7)
        out.append(_png(fig))
        fig, ax = _fig("Success, crowded and scary rates")
        for col in ("success_rate", "crowded_rate", "scary_rate"):
            ax.plot(days, [_num(v) for v in mb[col]], marker="o", label=col)
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7)
        ax.tick_params(axis="x", labelrotation=45, labelsize=7)
        out.append(_png(fig))
        fig, ax = _fig("Waiting for the peer (seconds), median and p90")
        for col in ("waiting_p50", "waiting_p90"):
            ax.plot(days, [_num(v) for v in mb[col]], marker="o", label=col)
        ax.set_yscale("symlog")
        ax.legend(fontsize=7)
        ax.tick_params(axis="x", labelrotation=45, labelsize=7)
        out.append(_png(fig))
    rl = _overall(published, "relay")
    if len(rl):
        fig, ax = _fig("Relay: bytes carried per day")
        ax.bar(list(rl["day"]), [_num(v) or 0.0 for v in rl["bytes"]])
        ax.tick_params(axis="x", labelrotation=45, labelsize=7)
        out.append(_png(fig))
    s = published["sizes"]
    if len(s):
        totals = {b: 0.0 for b in A.SIZE_BUCKETS}
        for b, n in zip(s["bucket"], s["n"]):
            totals[b] += _num(n) or 0.0
        fig, ax = _fig("Relay: sessions by size")
        ax.bar(list(totals), list(totals.values()))
        ax.tick_params(axis="x", labelrotation=30, labelsize=7)
        out.append(_png(fig))
    v = published["versions"]
    if len(v):
        totals = {}
        for impl, ver, n in zip(v["impl"], v["version"], v["sides"]):
            key = f"{impl} {ver}"
            totals[key] = totals.get(key, 0.0) + (_num(n) or 0.0)
        top = sorted(totals.items(), key=lambda kv: -kv[1])[:15]
        fig, ax = _fig("Clients (sides, deduplicated) by implementation "
                       "and version")
        ax.barh([k for k, _ in reversed(top)], [n for _, n in reversed(top)])
        out.append(_png(fig))
    return out


def _table(df, columns=None, limit=400):
    if not len(df):
        return "<p class=note>none</p>"
    cols = columns or list(df.columns)
    rows = ["<tr>" + "".join(f"<th>{html.escape(str(c))}</th>"
                             for c in cols) + "</tr>"]
    for rec in df[cols].head(limit).itertuples(index=False):
        cells = []
        for v in rec:
            f = _num(v)
            if f is not None and not isinstance(v, (bool, str)) \
                    and f != int(f):
                text = f"{f:.3f}"
            elif f is not None:
                text = f"{int(f)}"
            else:
                text = "" if v is None or (isinstance(v, float)) else str(v)
            cells.append(f"<td>{html.escape(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = (f"<p class=note>first {limit} of {len(df)} rows; all in "
            "published/*.csv</p>" if len(df) > limit else "")
    return "<table>" + "".join(rows) + "</table>" + more


def _human(n):
    """Bytes with an SI unit, for the headline."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1000


def _headline(tables):
    d = tables["daily"]
    q = tables["quarantine"]
    figures = []
    if len(d):
        mb = d[(d["kind"] == "mailbox") & (d["server"] == A.ALL)]
        n = int(mb["n"].sum())
        if n:
            figures += [("wormholes", f"{n}"),
                        ("succeeded", f"{mb['happy'].sum() / n:.1%}"),
                        ("crowded", f"{mb['crowded'].sum() / n:.2%}"),
                        ("scary", f"{mb['scary'].sum() / n:.2%}")]
        rl = d[(d["kind"] == "relay") & (d["server"] == A.ALL)]
        if len(rl):
            figures += [("relay sessions", f"{int(rl['n'].sum())}"),
                        ("relay bytes",
                         _human(int(rl["bytes"].fillna(0).sum())))]
    figures.append(("quarantined lines",
                    f"{int(q['n'].sum()) if len(q) else 0}"))
    return "".join(f"<div class=big><b>{html.escape(v)}</b>"
                   f"{html.escape(k)}</div>" for k, v in figures)


def render(tables, published, min_cell, since=None, until=None,
           title=None):
    d = published["daily"]
    days = sorted(set(d["day"])) if len(d) else []
    span = f"{days[0]} to {days[-1]}" if days else "no data"
    title = title or "Magic Wormhole usage"
    cols = ["day", "kind", "server", "app_id", "n", "happy", "lonely",
            "scary", "errory", "pruney", "crowded", "quiet", "impatient",
            "redundant", "jilted", "success_rate", "crowded_rate",
            "scary_rate", "waiting_p50", "waiting_p90", "waiting_p99",
            "total_p50", "total_p90", "total_p99", "bytes"]
    overall = d[d["server"] == A.ALL] if len(d) else d
    per = d[d["server"] != A.ALL] if len(d) else d
    parts = [
        "<!DOCTYPE html><html><head><meta charset=utf-8>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style>",
        f"</head><body><h1>{html.escape(title)}</h1>",
        f"<p>{html.escape(span)}"
        + (f" (asked: {html.escape(since or '...')} to "
           f"{html.escape(until or '...')})" if since or until else "")
        + "</p>",
        _headline(tables),
        (f"<p class=note>Published tables and charts show counts below "
         f"{min_cell} as &lt;{min_cell} and leave figures derived from "
         "them blank. Times in seconds; days are UTC.</p>"),
        "<h2>Charts</h2>", *_charts(published),
        "<h2>All servers, per day</h2>",
        _table(overall, [c for c in cols if c in overall.columns]),
        "<h2>Per server and app id, per day</h2>",
        _table(per, [c for c in cols if c in per.columns]),
        "<h2>Client versions (sides, deduplicated)</h2>",
        _table(published["versions"]),
        "<h2>Relay sizes</h2>", _table(published["sizes"]),
        "<h2>Quarantined lines, by reason</h2>",
        _table(published["quarantine"]),
        "</body></html>",
    ]
    return "\n".join(parts)
