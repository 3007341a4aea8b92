"""Draw merged client timelines as one self-contained HTML page.

The picture (docs/timing.md): time runs left to right in the server's
clock; the sender's row is on top, the Mailbox server in the middle, the
receiver below.  Each message is an arrow between a client and the server
(the server's own echo of a client's ``add`` back to that client is drawn
faint); each phase is a bar on the client's outer side, labelled with its
duration.  Idle stretches longer than ``GAP`` seconds (a human typing the
code, the other side starting up) are cut out and marked, so a transfer
of a few milliseconds and a wait of seconds both fit one screen.
"""
import bisect
import os
import re
from html import escape as _html_escape

from ._bundle import PHASES, format_duration, phase_label

GAP = 0.25          # seconds of nothing that are drawn as a cut
GAP_WIDTH = 64      # pixels an idle cut takes
WORK_WIDTH = 190    # pixels a cut takes while data moves (it is the point)
WORKING = ("transit connect", "dilation connect", "transfer")
LEFT = 170          # room for the row titles
RIGHT = 60
TARGET = 1500       # pixels the busy time should take, roughly
CHAR = 6.4          # estimated width of a character of the 11px font
LANE = 16           # height of a message-label lane
BAR = 22            # height of a phase lane
ARROW_SPAN = 150    # vertical distance between a client and the server

COLORS = {
    "connect": "#9ecae1", "allocate/claim": "#c6dbef", "PAKE": "#fdae6b",
    "version": "#fdd0a2", "transit connect": "#a1d99b",
    "dilation connect": "#c7e9c0", "transfer": "#74c476", "close": "#d9d9d9",
}

_CSS = """
body { font-family: sans-serif; margin: 16px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
p.meta { color: #555; margin: 0 0 12px 0; font-size: 13px; }
table.phases { border-collapse: collapse; font-size: 13px; margin-bottom: 14px; }
table.phases th, table.phases td { border: 1px solid #ccc; padding: 3px 10px; }
table.phases td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.phases td.swatch { width: 14px; }
div.scroll { overflow-x: auto; border: 1px solid #ccc; background: #fff; }
svg text { font-family: sans-serif; font-size: 11px; }
svg .title { font-size: 13px; font-weight: bold; }
svg .sub { fill: #666; }
svg .tick { fill: #666; }
svg .grid { stroke: #eee; }
svg .row { stroke: #333; stroke-width: 2; }
svg .out { stroke: #1f5fbf; fill: none; }
svg .in { stroke: #2a8a3a; fill: none; }
svg .echo { stroke: #c8c8c8; fill: none; }
svg .lbl-out { fill: #1f5fbf; }
svg .lbl-in { fill: #2a8a3a; }
svg .cut { fill: #f2f2f2; }
svg .cuttext { fill: #777; text-anchor: middle; }
svg .cutlabel { fill: #333; text-anchor: middle; font-weight: bold; }
svg .phase { stroke: #666; stroke-width: 0.5; }
ul.legend { font-size: 13px; color: #444; }
"""

# XML 1.0 forbids most C0 controls, lone surrogates and U+FFFE/FFFF even as
# character references, and a bundle's strings may hold anything: replace
# them so the page's SVG always parses (tests/unit/timing/test_fuzz.py)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(text):
    return _html_escape(_NOT_XML.sub("\ufffd", text))



class _Axis:
    """Maps a (server-clock) time to x, cutting long quiet stretches.

    ``working`` are (start, end, phase) spans during which data moves
    without any Mailbox message (a Transit transfer): a cut inside one is
    named after it and drawn wider, so a long transfer does not look like
    nothing happened."""

    def __init__(self, times, working=()):
        ts = sorted(set(times)) or [0.0]
        self.origin = ts[0]
        busy = sum(b - a for a, b in zip(ts, ts[1:], strict=False) if b - a <= GAP)
        self.scale = min(max(TARGET / busy if busy > 0 else 1000.0, 200.0), 200000.0)
        self.segments = []  # (t0, t1, x0, x1, cut): cut is None, "" (idle) or a phase
        x = LEFT
        for a, b in zip(ts, ts[1:], strict=False):
            if b - a <= GAP:
                cut, w = None, (b - a) * self.scale
            else:
                mid = (a + b) / 2
                cut = next((name for start, end, name in working
                            if start <= mid <= end), "")
                w = WORK_WIDTH if cut else GAP_WIDTH
            self.segments.append((a, b, x, x + w, cut))
            x += w
        self._starts = [s[0] for s in self.segments]
        self.end = x
        self.width = x + RIGHT

    def x(self, t):
        if not self.segments or t <= self.segments[0][0]:
            return LEFT
        i = max(0, bisect.bisect_right(self._starts, t) - 1)
        t0, t1, x0, x1, _ = self.segments[i]
        if t >= t1:
            return x1
        return x0 + (t - t0) / (t1 - t0) * (x1 - x0)

    def runs(self):
        """Uncut stretches as (t0, t1), and the cuts as (t0, t1, x0, x1,
        phase or "")."""
        runs, cuts, start = [], [], None
        for t0, t1, x0, x1, cut in self.segments:
            if cut is not None:
                if start is not None:
                    runs.append((start, t0))
                start = None
                cuts.append((t0, t1, x0, x1, cut))
            elif start is None:
                start = t0
        if start is not None:
            runs.append((start, self.segments[-1][1]))
        if not self.segments:
            runs.append((self.origin, self.origin))
        return runs, cuts


def _nice_step(seconds):
    step = 1e-6
    while True:
        for m in (1, 2, 5):
            if step * m >= seconds:
                return step * m
        step *= 10


def _rel(t):
    return f"{t * 1000:.0f} ms" if abs(t) < 10 else f"{t:.1f} s"


def _lanes(items, gap=6):
    """Give each (x0, x1, payload) the first lane it fits in."""
    ends, out = [], []
    for x0, x1, payload in sorted(items, key=lambda i: i[0]):
        for lane, end in enumerate(ends):
            if end + gap <= x0:
                ends[lane] = x1
                break
        else:
            ends.append(x1)
            lane = len(ends) - 1
        out.append((lane, x0, x1, payload))
    return out, len(ends)


def _arrows(client, axis):
    """(x_client, x_server, message) of every message worth drawing."""
    out = []
    for m in client.messages:
        if m.type == "ack" or not isinstance(m.server, (int, float)):
            # acks only time the commands (Mailbox server protocol,
            # "WebSocket Transport")
            continue
        out.append((axis.x(m.local + client.offset), axis.x(m.server), m))
    return out


def _is_echo(client, m):
    return (not m.outbound and m.type == "message"
            and m.msg.get("side") == client.side)


def _tooltip(client, m):
    direction = "client -> server" if m.outbound else "server -> client"
    body = {k: v for k, v in m.msg.items() if k != "body"}
    return (f"{client.role} {direction}: {body}\nlocal time {m.local:.6f}"
            f"\nserver time {m.server:.6f}")


def render_html(clients, title="Magic Wormhole timing"):
    """One page: a table of phase durations, then the timeline."""
    times = []
    for c in clients:
        for m in c.messages:
            times.append(m.local + c.offset)
            if isinstance(m.server, (int, float)):
                times.append(m.server)
        for _, start, end in c.phases:
            times += [start + c.offset, end + c.offset]
    working = [(start + c.offset, end + c.offset, name)
               for c in clients for name, start, end in c.phases if name in WORKING]
    axis = _Axis(times, working)
    svg = _svg(clients, axis)
    return "".join([
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">",
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>\n",
        f"<h1>{escape(title)}</h1>\n",
        f"<p class=\"meta\">{escape(_meta(clients))}</p>\n",
        _table(clients, axis),
        "<div class=\"scroll\">", svg, "</div>\n",
        _legend(), "</body></html>\n"])


def _meta(clients):
    parts = []
    for c in clients:
        parts.append(f"{c.role}: side {c.side or '?'}, clock offset "
                     f"{c.offset * 1000:+.1f} ms ({os.path.basename(c.name)})")
    return "; ".join(parts)


def _table(clients, axis):
    rows = ["<table class=\"phases\"><tr><th></th><th>phase</th>"]
    for c in clients:
        rows.append(f"<th>{escape(c.role)}: starts at</th><th>{escape(c.role)}: lasts</th>")
    rows.append("</tr>\n")
    for name in PHASES:
        spans = [{p[0]: p for p in c.phases}.get(name) for c in clients]
        if not any(spans):
            continue
        rows.append(f"<tr><td class=\"swatch\" style=\"background:{COLORS[name]}\"></td>"
                    f"<td>{escape(name)}</td>")
        for c, span in zip(clients, spans, strict=False):
            if span is None:
                rows.append("<td class=\"num\">-</td><td class=\"num\">-</td>")
            else:
                start = span[1] + c.offset - axis.origin
                rows.append(f"<td class=\"num\">{_rel(start)}</td>"
                            f"<td class=\"num\">{format_duration(span[2] - span[1])}</td>")
        rows.append("</tr>\n")
    rows.append("<tr><td></td><th>first to last</th>")
    for c in clients:
        if c.phases:
            first = min(p[1] for p in c.phases)
            last = max(p[2] for p in c.phases)
            rows.append(f"<td class=\"num\">{_rel(first + c.offset - axis.origin)}</td>"
                        f"<th class=\"num\">{format_duration(last - first)}</th>")
        else:
            rows.append("<td></td><td></td>")
    rows.append("</tr>\n</table>\n")
    return "".join(rows)


def _legend():
    return ("<ul class=\"legend\">"
            "<li>Time runs left to right (the server's clock; each client's clock "
            "is shifted by the offset above). Long quiet stretches are cut out of "
            "the picture and drawn as narrow bands marked with their length: grey "
            "when nothing happens (a client not started yet, a human typing), in "
            "a phase's colour when data is moving without Mailbox messages (the "
            "file going over Transit).</li>"
            "<li>Blue arrows: client to server; green: server to client; grey: the "
            "server echoing a client's own message back to it. Acks are not "
            "drawn. Hover an arrow for the whole message.</li>"
            "<li>Bars: the phases of each client, with their durations.</li></ul>\n")


def _svg(clients, axis):
    layouts = []
    for c in clients:
        labels, nl = _lanes([(xc, xc + CHAR * len(m.label()) + 4, (xc, xs, m))
                             for xc, xs, m in _arrows(c, axis) if not _is_echo(c, m)])
        bars = []
        for name, start, end in c.phases:
            x0, x1 = axis.x(start + c.offset), axis.x(end + c.offset)
            text = phase_label(c, name, start, end)
            bars.append((x0, max(x1, x0 + CHAR * len(text) + 8), (name, x1, text)))
        bars, nb = _lanes(bars)
        layouts.append((labels, max(nl, 1), bars, max(nb, 1)))

    # vertical layout: clients[0] above the server, the others below
    y = 34
    top = layouts[0] if layouts else ([], 1, [], 1)
    ys = []
    y += top[3] * BAR + top[1] * LANE + 14
    ys.append(y)
    server_y = y + ARROW_SPAN
    y = server_y
    for lay in layouts[1:]:
        y += ARROW_SPAN
        ys.append(y)
        y += lay[1] * LANE + lay[3] * BAR + 14
    height = y + 34
    if len(clients) <= 1:
        height = max(height, server_y + 40)

    out = [f"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{axis.width:.0f}\" "
           f"height=\"{height:.0f}\" viewBox=\"0 0 {axis.width:.0f} {height:.0f}\">",
           "<defs>"]
    for cls, color in (("out", "#1f5fbf"), ("in", "#2a8a3a"), ("echo", "#c8c8c8")):
        out.append(f"<marker id=\"head-{cls}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
                   f"markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
                   f"<path d=\"M0,0 L10,5 L0,10 z\" fill=\"{color}\"/></marker>")
    out.append("</defs>")
    out += _grid(axis, height, server_y)
    out.append(f"<line class=\"row\" x1=\"{LEFT}\" y1=\"{server_y}\" x2=\"{axis.end}\" "
               f"y2=\"{server_y}\"/>")
    out.append(f"<text class=\"title\" x=\"8\" y=\"{server_y + 4}\">Mailbox server</text>")
    for i, (c, y, lay) in enumerate(zip(clients, ys, layouts, strict=False)):
        out += _client(c, y, server_y, lay, above=(i == 0), axis=axis)
    out.append("</svg>")
    return "\n".join(out)


def _grid(axis, height, server_y):
    out = []
    runs, cuts = axis.runs()
    for t0, t1, x0, x1, phase in cuts:
        # an idle cut is grey; one while data moves takes its phase's colour
        fill = f" style=\"fill:{COLORS.get(phase, '#ddd')};opacity:0.45\"" if phase else ""
        out.append(f"<rect class=\"cut\" x=\"{x0:.1f}\" y=\"22\" width=\"{x1 - x0:.1f}\" "
                   f"height=\"{height - 44}\"{fill}/>")
        mid = (x0 + x1) / 2
        for yy in (34, height - 18):
            out.append(f"<text class=\"cuttext\" x=\"{mid:.1f}\" y=\"{yy}\">"
                       f"&#8943; {format_duration(t1 - t0)}</text>")
        what = f"of {phase}" if phase else "idle"
        out.append(f"<text class=\"cutlabel\" x=\"{mid:.1f}\" y=\"{server_y - 8}\">"
                   f"{format_duration(t1 - t0)}</text>")
        out.append(f"<text class=\"cutlabel\" x=\"{mid:.1f}\" y=\"{server_y + 16}\">"
                   f"{escape(what)}</text>")
    step = _nice_step(90 / axis.scale)
    for t0, t1 in runs:
        # each stretch starts with its own label, then round multiples
        ticks = [t0]
        k = int((t0 - axis.origin) // step) + 1
        while axis.origin + k * step <= t1:
            ticks.append(axis.origin + k * step)
            k += 1
        last = None
        for t in ticks:
            x = axis.x(t)
            if last is not None and x - last < 70:
                continue
            last = x
            out.append(f"<line class=\"grid\" x1=\"{x:.1f}\" y1=\"22\" x2=\"{x:.1f}\" "
                       f"y2=\"{height - 22}\"/>")
            for yy in (16, height - 6):
                out.append(f"<text class=\"tick\" x=\"{x:.1f}\" y=\"{yy}\" "
                           f"text-anchor=\"middle\">{_rel(t - axis.origin)}</text>")
    return out


def _client(c, y, server_y, lay, above, axis):
    labels, nl, bars, nb = lay
    sign = -1 if above else 1
    out = [f"<line class=\"row\" x1=\"{LEFT}\" y1=\"{y}\" x2=\"{axis.end}\" y2=\"{y}\"/>",
           f"<text class=\"title\" x=\"8\" y=\"{y - 4}\">{escape(c.role)}</text>",
           f"<text class=\"sub\" x=\"8\" y=\"{y + 12}\">side {escape(str(c.side))}</text>"]
    for xc, xs, m in _arrows(c, axis):
        cls = "echo" if _is_echo(c, m) else ("out" if m.outbound else "in")
        (x1, y1, x2, y2) = (xc, y, xs, server_y) if m.outbound else (xs, server_y, xc, y)
        out.append(f"<line class=\"{cls}\" x1=\"{x1:.1f}\" y1=\"{y1}\" x2=\"{x2:.1f}\" "
                   f"y2=\"{y2}\" marker-end=\"url(#head-{cls})\">"
                   f"<title>{escape(_tooltip(c, m))}</title></line>")
    for lane, x0, _x1, (_xc, _xs, m) in labels:
        ly = y + sign * (6 + lane * LANE) + (0 if above else 10)
        cls = "lbl-out" if m.outbound else "lbl-in"
        out.append(f"<text class=\"{cls}\" x=\"{x0 + 2:.1f}\" y=\"{ly:.1f}\">"
                   f"{escape(m.label())}<title>{escape(_tooltip(c, m))}</title></text>")
    base = 8 + nl * LANE
    for lane, x0, _, (name, x1, text) in bars:
        off = base + lane * BAR
        by = y - off - 18 if above else y + off
        out.append(f"<rect class=\"phase\" x=\"{x0:.1f}\" y=\"{by:.1f}\" "
                   f"width=\"{max(x1 - x0, 1.5):.1f}\" height=\"18\" "
                   f"fill=\"{COLORS.get(name, '#ddd')}\"><title>{escape(text)}</title></rect>")
        out.append(f"<text x=\"{x0 + 3:.1f}\" y=\"{by + 13:.1f}\">{escape(text)}</text>")
    return out
