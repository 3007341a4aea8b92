"""The event parser of ``ingest`` (wormhole_analytics._arrow_parse, run
in the Spark Python workers by _split_task): every line ends in
``events`` or in the quarantine with its reason, none is dropped and none
crashes the job (docs/analytics.md, "What ingest does": explicit schemas,
unknown moods and malformed lines counted into a quarantine table); and
the byte-range splits of a
file give every line to exactly one task."""

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole_analytics import _arrow_parse, _split_task
from wormhole_analytics._ingest import ingest, splits
from wormhole_ops import events as ue

from ._spark import QuietProgress, spark

DAY1 = 1767225600

_valid_mailbox = st.builds(
    lambda kind, started, total, wait, mood, app, side: ue.build_event(
        "srv", kind, started, total, wait, mood, app_id=app,
        clients=[(side, ["python", "0.24"])]),
    st.sampled_from(["nameplate", "mailbox"]),
    st.floats(DAY1, DAY1 + 10 * 86400),
    st.floats(0, 1e6), st.one_of(st.none(), st.floats(0, 1e6)),
    st.sampled_from(ue.MAILBOX_RESULTS), st.text(max_size=20),
    st.text(min_size=1, max_size=16))
_valid_relay = st.builds(
    lambda started, total, wait, mood, nbytes: ue.build_event(
        "srv", "relay", started, total, wait, mood, total_bytes=nbytes),
    st.floats(DAY1, DAY1 + 10 * 86400), st.floats(0, 1e6),
    st.one_of(st.none(), st.floats(0, 1e6)),
    st.sampled_from(ue.RELAY_RESULTS), st.integers(0, 2 ** 62))
_valid_bind = st.builds(
    lambda started, side, impl: ue.build_event(
        "srv", "bind", started, None, None, None, app_id="a",
        clients=[(side, [impl, "1"])]),
    st.floats(DAY1, DAY1 + 86400), st.text(min_size=1, max_size=8),
    st.text(max_size=8))
valid = st.one_of(_valid_mailbox, _valid_relay, _valid_bind)


def _mutate(event, how):
    """A broken copy of ``event`` and the reason ingest must give."""
    e = dict(event)
    if how == "drop-server":
        del e["server"]
        return json.dumps(e), "missing-field"
    if how == "drop-started":
        e["started"] = None
        return json.dumps(e), "missing-field"
    if how == "mood":
        if e["kind"] == "bind":
            e["kind"] = "mailbox"
        e["result"] = "grumpy"
        e["total_time"] = 1.0
        return json.dumps(e), "unknown-mood"
    if how == "kind":
        e["kind"] = "teleport"
        return json.dumps(e), "unknown-kind"
    if how == "version":
        e["v"] = 2
        return json.dumps(e), "bad-version"
    if how == "negative":
        e["total_time"] = -1.0
        if e["kind"] == "bind":
            e["kind"], e["result"] = "relay", "happy"
        return json.dumps(e), "negative"
    if how == "type":
        e["started"] = "yesterday"
        return json.dumps(e), "malformed"
    if how == "truncate":
        line = json.dumps(e)
        return line[: len(line) // 2], "malformed"
    raise AssertionError(how)


MUTATIONS = ["drop-server", "drop-started", "mood", "kind", "version",
             "negative", "type", "truncate"]
broken = st.tuples(valid, st.sampled_from(MUTATIONS)).map(
    lambda t: _mutate(*t))
# text that is no JSON object at all (not blank: blank lines are not
# events, and the reader skips them)
garbage = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Zl", "Zp", "Cc")),
    min_size=1, max_size=40).filter(
    lambda s: s.strip() and not s.lstrip().startswith(("{", "[")))


class Parser(unittest.TestCase):
    def _classify(self, lines):
        """(reason, raw, server, result) of every event line, in order."""
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        parsed = _arrow_parse.parse(data)
        reasons = _arrow_parse.reason_names(parsed.reason)
        raws = parsed.raw(range(parsed.table.num_rows))
        return [{"_reason": why, "_raw": raw if why else None,
                 "server": server, "result": result}
                for why, raw, server, result in zip(
                    reasons, raws, parsed.table["server"].to_pylist(),
                    parsed.table["result"].to_pylist(), strict=False)]

    @settings(max_examples=40, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.one_of(
        valid.map(lambda e: (json.dumps(e), None)),
        broken,
        garbage.map(lambda g: (g, "malformed"))), min_size=1, max_size=40))
    def test_every_line_classified(self, items):
        """Each line is either a valid event (no reason) or quarantined
        with the reason an independent oracle expects; order and count are
        kept, so nothing is dropped."""
        rows = self._classify([line for line, _ in items])
        self.assertEqual([r["_reason"] for r in rows],
                         [why for _, why in items])
        for r, (line, why) in zip(rows, items, strict=False):
            if why is None:
                self.assertIsNone(r["_raw"])
            else:
                self.assertEqual(r["_raw"], line)

    def test_unknown_mood_kept_raw(self):
        """An unknown mood is quarantined with the event as JSON, so an
        operator can see what the server wrote."""
        e = ue.build_event("s", "mailbox", DAY1, 1, 1, "grumpy", app_id="a")
        [row] = self._classify([json.dumps(e)])
        self.assertEqual(row["_reason"], "unknown-mood")
        self.assertEqual(json.loads(row["_raw"])["result"], "grumpy")

    def test_nan_and_out_of_range(self):
        """NaN, infinite and absurd start times are quarantined as
        bad-number rather than breaking the day computation."""
        base = ue.build_event("s", "relay", DAY1, 1, 1, "happy",
                              total_bytes=1)
        lines = []
        for started in ("NaN", "Infinity", "1e300", "5"):
            e = dict(base, started="@")
            lines.append(json.dumps(e).replace('"@"', started))
        rows = self._classify(lines)
        self.assertEqual([r["_reason"] for r in rows], ["bad-number"] * 4)

    def test_odd_json_never_crashes(self):
        """Lines Python's json reads in odd ways (an integer too big for a
        float, nesting deeper than its recursion limit, a lone surrogate)
        are classified, not raised."""
        base = json.dumps(ue.build_event("s", "relay", DAY1, 1, 1, "happy",
                                         total_bytes=1))
        huge = base.replace('"total_time": 1', '"total_time": 1' + "0" * 400)
        deep = '{"v": ' + "[" * 100000 + "]" * 100000 + "}"
        surrogate = base.replace('"s"', '"\\ud800"')
        rows = self._classify([huge, deep, surrogate, "{"])
        self.assertEqual([r["_reason"] for r in rows],
                         ["bad-number", "malformed", "malformed",
                          "malformed"])

    def test_blank_lines_are_not_events(self):
        """Blank and whitespace-only lines are skipped, and the raw text of
        a quarantined line is still its own line after them."""
        good = json.dumps(ue.build_event("s", "relay", DAY1, 1, 1, "happy",
                                         total_bytes=1))
        rows = self._classify(["", good, "  ", "\t", "nope", good])
        self.assertEqual([r["_reason"] for r in rows],
                         [None, "malformed", None])
        self.assertEqual(rows[1]["_raw"], "nope")

    def test_one_bad_line_in_a_big_block(self):
        """A block Arrow rejects is re-parsed in chunks: the bad line is
        quarantined, every other line of the block is still valid and in
        order."""
        n = 3 * _arrow_parse.CHUNK_LINES
        lines = [json.dumps(ue.build_event(
            f"s{i}", "relay", DAY1 + i, 1, 1, "happy", total_bytes=i))
            for i in range(n)]
        lines[n // 2] = lines[n // 2].replace('"started": ', '"started": "')
        rows = self._classify(lines)
        self.assertEqual(len(rows), n)
        self.assertEqual([i for i, r in enumerate(rows) if r["_reason"]],
                         [n // 2])
        self.assertEqual(rows[n // 2]["_reason"], "malformed")
        self.assertEqual(rows[n // 2 + 1]["server"], f"s{n // 2 + 1}")

    def test_days(self):
        """Each row's UTC day is that of its start; an unreadable start
        gives ``unknown``."""
        lines = [json.dumps(ue.build_event("s", "relay", t, 1, 1, "happy",
                                           total_bytes=1))
                 for t in (DAY1, DAY1 + 86399.999, DAY1 + 86400)]
        lines.append("{")
        parsed = _arrow_parse.parse("\n".join(lines).encode())
        names = [parsed.day_names[d] for d in parsed.day]
        self.assertEqual(names, [ue.day_of(DAY1), ue.day_of(DAY1),
                                 ue.day_of(DAY1 + 86400), "unknown"])


class Splits(unittest.TestCase):
    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.text(alphabet="ab\n{}", max_size=12), max_size=30),
           st.integers(1, 40), st.booleans())
    def test_every_line_read_once(self, lines, size, final_newline):
        """Cutting a file into byte ranges of any size, the lines the
        splits read (each line that begins inside a split) are the file's
        lines, each exactly once, in order."""
        text = "\n".join(line.replace("\n", "") for line in lines)
        if final_newline and text:
            text += "\n"
        path = self.mktemp()
        with open(path, "wb") as f:
            f.write(text.encode())
        got = b"".join([bytes(_split_task.read_split(
            path, s, min(s + size, len(text))))
            for s in range(0, len(text), size)])
        self.assertEqual(got, text.encode())

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 10 ** 6)),
                    max_size=6),
           st.integers(1, 10 ** 5))
    def test_plan_covers_every_byte_once_largest_first(self, ranges,
                                                       split_bytes):
        """The split plan cuts each byte range into the fewest equal
        parts of at most ``split_bytes`` that cover it exactly, and lists
        all splits largest first (the longest tasks start first)."""
        ranges = [(f"f{i}", min(a, b), max(a, b))
                  for i, (a, b) in enumerate(ranges)]
        plan = splits(ranges, split_bytes)
        self.assertEqual([hi - lo for _p, lo, hi in plan],
                         sorted((hi - lo for _p, lo, hi in plan),
                                reverse=True))
        for path, start, end in ranges:
            mine = sorted((lo, hi) for p, lo, hi in plan if p == path)
            want = -(-(end - start) // split_bytes)
            self.assertEqual(len(mine), want)
            if not mine:
                continue
            self.assertEqual((mine[0][0], mine[-1][1]), (start, end))
            for (_lo, hi), (lo2, _hi2) in zip(mine, mine[1:], strict=False):
                self.assertEqual(hi, lo2)
            sizes = [hi - lo for lo, hi in mine]
            self.assertLessEqual(max(sizes), split_bytes)
            self.assertLessEqual(max(sizes) - min(sizes), 1)

    def test_gzipped_file_is_one_split(self):
        plan = splits([("a.jsonl.gz", 0, 500), ("b.jsonl", 0, 250)], 100)
        self.assertEqual(plan[0], ("a.jsonl.gz", 0, 500))
        self.assertEqual(plan[1:], [("b.jsonl", 166, 250), ("b.jsonl", 0, 83),
                                    ("b.jsonl", 83, 166)])

    @given(st.binary(max_size=3 * 2 ** 20 + 5).map(
        lambda b: b.replace(b"x", b"\n")), st.booleans())
    @settings(max_examples=30, deadline=None)
    def test_line_count(self, data, as_view):
        """The line count that tells whether Arrow skipped a line (blank
        lines) is the number of newlines, plus one for an unterminated
        last line, for bytes and for a view of the reused buffer."""
        want = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        arg = memoryview(bytearray(data + b"junk"))[:len(data)] \
            if as_view else data
        self.assertEqual(_arrow_parse._newlines(arg), want)

    def test_long_line_across_the_end(self):
        """A line that begins in a split and runs on far past its end is
        read whole by that split and by no other; a split in which no
        line begins is empty."""
        long = b"x" * (5 * 2 ** 16 + 7)
        text = b"a\n" + long + b"\nb\n"
        path = self.mktemp()
        with open(path, "wb") as f:
            f.write(text)
        first = bytes(_split_task.read_split(path, 0, 4))
        inside = bytes(_split_task.read_split(path, 4, 1000))
        second = bytes(_split_task.read_split(path, 1000, len(text)))
        self.assertEqual(first, b"a\n" + long + b"\n")
        self.assertEqual(inside, b"")
        self.assertEqual(second, b"b\n")

    def test_unterminated_last_line_and_empty_file(self):
        path = self.mktemp()
        with open(path, "wb") as f:
            f.write(b"a\nbc")
        self.assertEqual(bytes(_split_task.read_split(path, 0, 1)), b"a\n")
        self.assertEqual(bytes(_split_task.read_split(path, 1, 4)), b"bc")
        with open(path, "wb"):
            pass
        self.assertEqual(bytes(_split_task.read_split(path, 0, 10)), b"")


class Quarantine(unittest.TestCase):
    def test_store_keeps_reason_raw_and_source(self):
        """ingest writes a quarantined line to ``quarantine/day=D`` with its
        reason, its raw text and its file, and the valid ones to
        ``events/day=D``."""
        base = os.path.abspath(self.mktemp())
        os.makedirs(base)
        path = os.path.join(base, "usage-events-2026-01-01.jsonl")
        good = ue.build_event("s", "relay", DAY1, 1, 1, "happy",
                              total_bytes=1)
        grumpy = ue.build_event("s", "mailbox", DAY1, 1, 1, "grumpy",
                                app_id="a")
        with open(path, "w") as f:
            f.writelines(json.dumps(e) + "\n" for e in (good, grumpy, good))
            f.write("not json\n")
        store = os.path.join(base, "store")
        got = ingest(spark(), [path], store, progress=QuietProgress())
        self.assertEqual((got["events"], got["quarantined"]), (2, 2))
        self.assertEqual(got["reasons"], {"malformed": 1, "unknown-mood": 1})
        q = {r["_reason"]: r for r in spark().read.parquet(
            os.path.join(store, "quarantine")).collect()}
        self.assertEqual(q["unknown-mood"]["day"], "2026-01-01")
        self.assertEqual(json.loads(q["unknown-mood"]["_raw"]), grumpy)
        self.assertEqual(q["malformed"]["_raw"], "not json")
        self.assertEqual(q["malformed"]["day"], "unknown")
        self.assertEqual(q["malformed"]["_source"], path)
        self.assertEqual(spark().read.parquet(
            os.path.join(store, "events", "day=2026-01-01")).count(), 2)
