#!/usr/bin/env python
"""Render ``wormhole --dump-timing`` bundles as one timeline page.

    wormhole --dump-timing sender.json send ...
    wormhole --dump-timing receiver.json receive ...
    python misc/dump-timing.py sender.json receiver.json -o timeline.html

The page is self-contained HTML (an inline SVG, no scripts, no external
files): the sender on top, the Mailbox server in the middle, the receiver
below, messages as arrows and the protocol phases as bars with their
durations. See docs/timing.md.
"""
import argparse
import sys

from wormhole._timeline import TimingError, load_bundle, merge, render_html


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundles", nargs="+", metavar="FILE",
                        help="a JSON file written by wormhole --dump-timing")
    parser.add_argument("-o", "--output", default="timeline.html",
                        help="where to write the HTML page (default: %(default)s)")
    parser.add_argument("--title", default="Magic Wormhole timing")
    parser.add_argument("--summary", action="store_true",
                        help="also print each side's phases and durations")
    args = parser.parse_args(argv)
    try:
        clients = merge([load_bundle(fn) for fn in args.bundles])
    except TimingError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        return 1
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(render_html(clients, title=args.title))
    if args.summary:
        for c in clients:
            for name, start, end in c.phases:
                print(f"{c.role}\t{name}\t{start + c.offset:.6f}\t{end - start:.6f}")
    print(f"timeline written to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
