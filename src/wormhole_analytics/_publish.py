"""Small-cell suppression for the published tables (docs/analytics.md,
"What report does": small cells are suppressed in published tables).

A count below ``min_cell`` could point at one person's transfer; it is
published as ``<min_cell``, and every figure derived from so few events
(rates, percentiles, shares, bytes) is left blank. The Parquet aggregates
in the output folder keep the exact numbers for the operator.

A row's total ``n`` minus its published results would give back a single
suppressed result, so where exactly one result of a row is suppressed the
next smallest one is hidden too (complementary suppression, shown as
``HIDDEN``)."""

import os

from . import _aggregate as A

_DERIVED_DAILY = ["success_rate", "crowded_rate", "scary_rate", "bytes"] + [
    f"{w}_p{int(p * 100)}" for w in ("waiting", "total")
    for p in A.PERCENTILES]


HIDDEN = "hidden"


def _complement(df, cols, min_cell):
    """Hide a second result wherever a row has exactly one suppressed
    result and a published total; its rate goes blank with it."""
    marker = f"<{min_cell}"
    for i in df.index:
        if df.at[i, "n"] == marker:
            continue
        cells = [(c, df.at[i, c]) for c in cols if c in df.columns]
        small = [c for c, v in cells if v == marker]
        if len(small) != 1:
            continue
        others = [(v, c) for c, v in cells
                  if not isinstance(v, str) and v is not None and v > 0]
        if others:
            _, c = min(others)
            df.at[i, c] = HIDDEN
            rate = _RATE_OF.get(c)
            if rate is not None:
                df.at[i, rate] = None
    return df


_RATE_OF = {"happy": "success_rate", "crowded": "crowded_rate",
            "scary": "scary_rate"}


def _mask_counts(df, cols, min_cell):
    for col in cols:
        if col in df.columns:
            small = df[col].notna() & (df[col] > 0) & (df[col] < min_cell)
            df[col] = df[col].astype(object)
            df.loc[small, col] = f"<{min_cell}"
    return df


def suppress(tables, min_cell):
    out = {}
    d = tables["daily"].copy()
    if len(d):
        few = d["n"] < min_cell
        for col in _DERIVED_DAILY:
            d[col] = d[col].astype(object)
            d.loc[few, col] = None
        # a rate of a suppressed count would give the count back
        for rate, count in (("success_rate", "happy"),
                            ("crowded_rate", "crowded"),
                            ("scary_rate", "scary")):
            small = (d[count] > 0) & (d[count] < min_cell)
            d.loc[small, rate] = None
        d = _mask_counts(d, ["n"] + A.RESULTS, min_cell)
        d = _complement(d, A.RESULTS, min_cell)
    out["daily"] = d
    s = tables["sizes"].copy()
    if len(s):
        s["bucket"] = s["bucket"].map(lambda i: A.SIZE_BUCKETS[int(i)])
        s["bytes"] = s["bytes"].astype(object)
        s.loc[s["n"] < min_cell, "bytes"] = None
        s = _mask_counts(s, ["n"], min_cell)
    out["sizes"] = s
    v = tables["versions"].copy()
    if len(v):
        v["share"] = v["share"].astype(object)
        v.loc[v["sides"] < min_cell, "share"] = None
        v = _mask_counts(v, ["sides"], min_cell)
    out["versions"] = v
    out["quarantine"] = tables["quarantine"].copy()  # counts of bad lines
    return out


def publish_csv(published, folder):
    os.makedirs(folder, exist_ok=True)
    for name, df in published.items():
        df.to_csv(os.path.join(folder, f"{name}.csv"), index=False)
