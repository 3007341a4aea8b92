"""Timelines from ``--dump-timing`` bundles (``misc/dump-timing.py``).

``load_bundle(path)`` reads one client's bundle; ``merge([...])`` orders the
clients (sender, then receiver); ``render_html(clients)`` draws them as one
self-contained HTML page (inline SVG, no scripts, no external files).
See docs/timing.md.
"""
from ._bundle import (
                      PHASES,
                      ClientTimeline,
                      Message,
                      TimingError,
                      format_duration,
                      format_size,
                      load_bundle,
                      merge,
                      phase_label,
)
from ._render import render_html

__all__ = ["PHASES", "ClientTimeline", "Message", "TimingError", "format_duration",
           "format_size", "load_bundle", "merge", "phase_label", "render_html"]
