"""Any bundle that load_bundle accepts renders: hypothesis makes event
lists from the names and fields the tool looks at, in any order, with
missing, odd or contradictory values (a crashed debug tool helps nobody
debug)."""
import json
import os
import re
from xml.etree import ElementTree

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole._timeline import TimingError, load_bundle, merge, render_html

times = st.floats(min_value=0.0, max_value=20.0, allow_nan=False)
odd = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.integers(-5, 5),
                st.just(float("nan")), st.lists(st.integers(), max_size=2))
stamp = st.one_of(times, odd)
sides = st.sampled_from(["aa", "bb", None, 7])
mtypes = st.sampled_from(["welcome", "bind", "allocate", "allocated", "claim", "claimed",
                          "open", "add", "message", "ack", "release", "released",
                          "close", "closed", "error", None, 3])
phases = st.one_of(st.sampled_from(["pake", "version", "0", "1", "dilate-1"]), odd)
ids = st.one_of(st.sampled_from(["0001", "0002", "0003"]), odd)

message = st.fixed_dictionaries(
    {"type": mtypes},
    optional={"id": ids, "phase": phases, "side": sides, "server_tx": stamp,
              "server_rx": stamp, "body": st.just("00")})

details = st.one_of(
    st.fixed_dictionaries({}, optional={"role": st.one_of(
        st.sampled_from(["sender", "receiver"]), odd), "side": sides,
        "which": st.sampled_from(["cmd_send", "cmd_receive", "top"]),
        "bytes": st.one_of(st.integers(0, 10**9), odd)}),
    message.map(lambda m: dict(m, _side="aa")),
    message.map(lambda m: {"_side": "bb", "message": m}))

event = st.fixed_dictionaries({
    "name": st.sampled_from(["ws_send", "ws_receive", "wormhole", "command", "pake1",
                             "pake2", "got version", "transit connect", "transfer",
                             "import", "command dispatch", "other"]),
    "start": times,
    "stop": st.one_of(st.none(), times),
    "details": details})


class AnyBundle(unittest.TestCase):

    @settings(max_examples=150, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(st.lists(st.lists(event, max_size=25), min_size=1, max_size=3))
    def test_renders(self, bundles):
        """Every accepted bundle renders a page whose SVG parses; every
        phase has its name and start/end times in order of the tuple."""
        d = self.mktemp()
        os.makedirs(d)
        clients = []
        for i, events in enumerate(bundles):
            fn = os.path.join(d, f"b{i}.json")
            with open(fn, "w") as f:
                json.dump(events, f)
            try:
                clients.append(load_bundle(fn))
            except TimingError:
                continue
        if not clients:
            return
        html = render_html(merge(clients))
        svg = re.search(r"<svg.*</svg>", html, re.S).group(0)
        ElementTree.fromstring(svg)
        for c in clients:
            for name, start, end in c.phases:
                self.assertIsInstance(name, str)
                self.assertIsInstance(start + end, float)


class ControlCharacters(unittest.TestCase):

    def test_strings_xml_forbids_still_render(self):
        """A bundle whose strings hold characters XML 1.0 forbids even as
        references (NUL, vertical tab, a lone surrogate, U+FFFF) still
        renders an SVG that parses (hypothesis found "\\x0b" in a role)."""
        d = self.mktemp()
        os.makedirs(d)
        fn = os.path.join(d, "b.json")
        events = [{"name": "command", "start": 1.0, "stop": None,
                   "details": {"role": "s\x00\x0b\ud800\uffff"}},
                  {"name": "ws_send", "start": 1.5, "stop": None,
                   "details": {"_side": "aa", "type": "bind", "id": "\x01"}}]
        with open(fn, "w") as f:
            json.dump(events, f)
        html = render_html(merge([load_bundle(fn)]))
        svg = re.search(r"<svg.*</svg>", html, re.S).group(0)
        ElementTree.fromstring(svg)
        self.assertIn("\ufffd", svg)
