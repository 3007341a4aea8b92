"""The event parser of ``ingest`` (wormhole.analytics._ingest): every
line ends in ``events`` or in the quarantine with its reason, none is
dropped and none crashes the job (issue 6 "explicit schemas, unknown moods
and malformed lines counted into a quarantine table")."""

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole import _usage_events as ue
from wormhole.analytics import _ingest

from ._spark import spark

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
        path = os.path.join(self.mktemp() + ".jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in lines)
        rows = _ingest.checked_events(spark(), [path]).select(
            "_reason", "_raw", "server", "result").collect()
        return rows

    @settings(max_examples=12, deadline=None,
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
        for r, (line, why) in zip(rows, items):
            if why is None:
                self.assertIsNone(r["_raw"])
            else:
                self.assertIsNotNone(r["_raw"])

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
