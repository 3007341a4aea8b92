"""wormhole._timeline._render: the HTML page misc/dump-timing.py writes
(docs/timing.md "Reading the picture")."""
import json
import re
from xml.etree import ElementTree

from twisted.trial import unittest

from wormhole._timeline import format_duration, load_bundle, merge, render_html
from wormhole._timeline._render import GAP, GAP_WIDTH, WORK_WIDTH, _Axis, _lanes

from ._scripted import text_transfer


def _clients(testcase, **kw):
    out = []
    for c in text_transfer(**kw):
        fn = testcase.mktemp()
        with open(fn, "w") as f:
            json.dump(c.events, f)
        out.append(load_bundle(fn))
    return merge(out)


def _svg(html):
    m = re.search(r"<svg.*</svg>", html, re.S)
    return ElementTree.fromstring(m.group(0))


SVG = "{http://www.w3.org/2000/svg}"


class Page(unittest.TestCase):

    def setUp(self):
        self.clients = _clients(self)
        self.html = render_html(self.clients)

    def test_self_contained(self):
        """One page, nothing to fetch: no scripts, no links, no external
        stylesheets or images."""
        self.assertTrue(self.html.startswith("<!DOCTYPE html>"))
        self.assertNotIn("<script", self.html)
        self.assertNotRegex(self.html, r"(src|href)=")
        self.assertNotIn("<link", self.html)
        self.assertEqual(self.html.count("<svg"), 1)

    def test_svg_is_well_formed(self):
        """The inline SVG parses as XML (browsers are less forgiving with
        SVG than with HTML)."""
        _svg(self.html)

    def test_rows(self):
        """A row per client and one for the server, the sender above the
        server and the receiver below it."""
        svg = _svg(self.html)
        titles = {t.text: float(t.get("y")) for t in svg.iter(SVG + "text")
                  if t.get("class") == "title"}
        self.assertLess(titles["sender"], titles["Mailbox server"])
        self.assertLess(titles["Mailbox server"], titles["receiver"])

    def test_every_phase_labelled_with_its_duration(self):
        """Each phase of each client is a bar labelled 'name duration', and
        a row of the table."""
        svg = _svg(self.html)
        texts = [t.text for t in svg.iter(SVG + "text")]
        for c in self.clients:
            for name, start, end in c.phases:
                label = f"{name} {format_duration(end - start)}"
                self.assertIn(label, texts)
                self.assertIn(f"<td>{name}</td>", self.html)

    def test_arrows(self):
        """One arrow per message except acks; the server echoing a client's
        own message back to it is drawn faint."""
        svg = _svg(self.html)
        lines = [ln for ln in svg.iter(SVG + "line") if ln.get("marker-end")]
        want = sum(1 for c in self.clients for m in c.messages if m.type != "ack")
        self.assertEqual(len(lines), want)
        echoes = [ln for ln in lines if ln.get("class") == "echo"]
        # the script has one echo: the sender's own pake, sent back to it
        self.assertEqual(len(echoes), 1)
        self.assertIn("sender server -&gt; client", ElementTree.tostring(echoes[0]).decode())

    def test_idle_stretch_is_cut(self):
        """The two seconds the sender waits for the receiver are drawn as a
        cut band, labelled with its length."""
        svg = _svg(self.html)
        cuts = [r for r in svg.iter(SVG + "rect") if r.get("class") == "cut"]
        self.assertEqual(len(cuts), 1)
        self.assertEqual(float(cuts[0].get("width")), GAP_WIDTH)
        labels = [t.text for t in svg.iter(SVG + "text") if t.get("class") == "cuttext"]
        self.assertTrue(labels)
        self.assertTrue(all(label.endswith(" s") for label in labels))

    def test_quiet_transfer_is_not_idle(self):
        """A long Transit transfer sends no Mailbox message: its stretch is
        cut too, but drawn wider, in the transfer's colour, and labelled
        'of transfer' rather than 'idle' (File-transfer protocol, "Transit":
        the data is the point of the exercise)."""
        s, r = self.clients
        for c in (s, r):
            c.phases = [p for p in c.phases if p[0] != "transfer"] + [
                ("transit connect", 2.040, 2.041), ("transfer", 2.041, 3.5)]
            c.events.append({"name": "transit connect", "start": 2.040, "stop": 2.041,
                             "details": {}})
        svg = _svg(render_html(self.clients))
        cuts = [r for r in svg.iter(SVG + "rect") if r.get("class") == "cut"]
        self.assertEqual(sorted(float(c.get("width")) for c in cuts),
                         [GAP_WIDTH, WORK_WIDTH])
        labels = [t.text for t in svg.iter(SVG + "text") if t.get("class") == "cutlabel"]
        self.assertIn("idle", labels)
        self.assertIn("of transfer", labels)

    def test_escaping(self):
        """File names and roles are escaped, not interpreted as markup."""
        c = self.clients[0]
        c.name = "/tmp/<i>evil.json"
        c.role = "sender <script>"
        html = render_html(self.clients, title="a < b")
        self.assertNotIn("<i>evil", html)
        self.assertNotIn("<script", html)
        self.assertIn("(&lt;i&gt;evil.json)", html)
        self.assertIn("sender &lt;script&gt;", html)
        self.assertIn("<title>a &lt; b</title>", html)
        _svg(html)


class Axis(unittest.TestCase):

    def test_monotonic_and_cut(self):
        """Time maps to x without going backwards; a gap longer than GAP
        takes exactly GAP_WIDTH pixels, a short one its length at scale."""
        times = [0.0, 0.01, 0.02, 0.02 + GAP * 4, 0.03 + GAP * 4]
        axis = _Axis(times)
        xs = [axis.x(t) for t in times]
        self.assertEqual(xs, sorted(xs))
        self.assertAlmostEqual(xs[3] - xs[2], GAP_WIDTH)
        self.assertAlmostEqual(xs[1] - xs[0], 0.01 * axis.scale)
        self.assertAlmostEqual(axis.x(0.005), (xs[0] + xs[1]) / 2)
        runs, cuts = axis.runs()
        self.assertEqual(len(cuts), 1)
        self.assertEqual(cuts[0][4], "")  # idle
        self.assertEqual(len(runs), 2)

    def test_working_cut(self):
        """A cut inside a working span is named after it and WORK_WIDTH wide."""
        axis = _Axis([0.0, 0.01, 2.0, 2.01], working=[(0.01, 2.0, "transfer")])
        _, cuts = axis.runs()
        self.assertEqual([c[4] for c in cuts], ["transfer"])
        self.assertAlmostEqual(axis.x(2.0) - axis.x(0.01), WORK_WIDTH)

    def test_single_time(self):
        """One instant (or none) still draws."""
        self.assertEqual(_Axis([5.0]).x(5.0), _Axis([]).x(0.0))

    def test_lanes_never_overlap(self):
        """Labels that would overlap go to another lane."""
        placed, n = _lanes([(0, 50, "a"), (10, 40, "b"), (60, 90, "c"), (20, 30, "d")])
        self.assertEqual(n, 3)
        by_lane = {}
        for lane, x0, x1, _ in placed:
            by_lane.setdefault(lane, []).append((x0, x1))
        for spans in by_lane.values():
            spans.sort()
            for (_a0, a1), (b0, _b1) in zip(spans, spans[1:], strict=False):
                self.assertLessEqual(a1, b0)
