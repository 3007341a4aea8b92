"""Summarise a py-spy `--format raw` profile: where did the server's time go?

    python bench/pyspy_summary.py PROFILE.raw [--top 25] [--filter TEXT]

Prints the share of samples per thread (when recorded with `--threads`),
per package of the leaf frame (autobahn, twisted, automat, json, our
modules file by file), the frames with the most self time (the leaf of each
sample) and the most inclusive time (anywhere in the stack), as percentages
of all samples. py-spy's raw format is one collapsed stack per line:
`f1;f2;...;fn COUNT`.
"""

import argparse
import collections
import re
import sys

_FRAME = re.compile(r"^(?P<func>.*) \((?P<path>[^():]*)(:\d+)?\)$")


def load(path):
    stacks = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            stacks.append((stack.split(";"), int(count)))
    return stacks


def package(frame):
    """`twisted`, `autobahn`, ... or, for our own code, the module's file."""
    m = _FRAME.match(frame)
    if not m:
        return frame
    path = m.group("path")
    parts = path.split("/")
    if parts[0] == "wormhole":
        return path
    if len(parts) == 1:  # the stdlib's top-level modules: json/, ssl.py
        return parts[0]
    return parts[0]


def summarise(stacks, top, needle=None):
    total = sum(c for _, c in stacks) or 1
    own = collections.Counter()
    incl = collections.Counter()
    threads = collections.Counter()
    packages = collections.Counter()
    for frames, count in stacks:
        if needle and not any(needle in fr for fr in frames):
            continue
        if frames[0].startswith("thread ("):
            threads[frames[0]] += count
            frames = frames[1:] or frames
        own[frames[-1]] += count
        packages[package(frames[-1])] += count
        for fr in set(frames):
            incl[fr] += count
    out = ["samples: {}".format(total)]
    if threads:
        out += ["", "threads:"]
        for th, c in threads.most_common():
            out.append("  {:5.1f}%  {}".format(100.0 * c / total, th))
    out += ["", "self time by package of the leaf frame:"]
    for pkg, c in packages.most_common(top):
        out.append("  {:5.1f}%  {}".format(100.0 * c / total, pkg))
    out += ["", "self time:"]
    for fr, c in own.most_common(top):
        out.append("  {:5.1f}%  {}".format(100.0 * c / total, fr))
    out += ["", "inclusive time:"]
    for fr, c in incl.most_common(top):
        out.append("  {:5.1f}%  {}".format(100.0 * c / total, fr))
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("profile")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--filter", help="only stacks with a frame containing this")
    a = p.parse_args(argv)
    print(summarise(load(a.profile), a.top, a.filter))
    return 0


if __name__ == "__main__":
    sys.exit(main())
