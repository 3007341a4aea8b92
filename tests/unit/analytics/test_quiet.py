"""The JVM's unconditional start-up notices kept off the operator's
terminal (``wormhole_analytics._quiet``), without holding back or
changing anything else."""

import os

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole_analytics._quiet import NOISE, FilteredStderr, NoiseFilter

PROGRESS = b"[Stage 2:>          (0 + 1) / 1]"


def run(chunks, noise_filter=None):
    f = noise_filter or NoiseFilter()
    return b"".join(f.feed(c) for c in chunks) + f.flush()


def cut(data, points):
    points = sorted(set(p for p in points if 0 < p < len(data)))
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:], strict=False)]


class Filter(unittest.TestCase):
    def test_noise_inside_a_progress_line(self):
        """Spark's progress bar has no newline: the notice that follows it
        on the same line goes, the bar stays."""
        stream = PROGRESS + NOISE[1] + b"[report 25.8s] aggregating sizes\n"
        self.assertEqual(run([stream]),
                         PROGRESS + b"[report 25.8s] aggregating sizes\n")

    def test_both_notices_byte_by_byte(self):
        stream = NOISE[0] + b"Error: real trouble\n" + NOISE[1]
        chunks = [stream[i:i + 1] for i in range(len(stream))]
        self.assertEqual(run(chunks), b"Error: real trouble\n")

    def test_passes_at_once(self):
        """What cannot begin a notice is written at once (a progress bar
        must not wait for a newline)."""
        f = NoiseFilter()
        self.assertEqual(f.feed(PROGRESS), PROGRESS)
        # "W" may begin a notice: held, then released when it does not
        self.assertEqual(f.feed(b"abc W"), b"abc ")
        self.assertEqual(f.feed(b"ork\n"), b"Work\n")

    def test_a_prefix_at_the_end_is_not_lost(self):
        self.assertEqual(run([b"x", NOISE[0][:20]]), b"x" + NOISE[0][:20])

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.sampled_from(
        [b"a", b"\n", b"WARN", b"Warning: Java", PROGRESS, *NOISE]),
        max_size=12), st.lists(st.integers(0, 2000), max_size=8))
    def test_any_cut_gives_the_stream_minus_the_notices(self, parts, points):
        stream = b"".join(parts)
        expected = stream
        for n in NOISE:
            expected = expected.replace(n, b"")
        self.assertEqual(run(cut(stream, points)), run([stream]))
        if not any(n in expected for n in NOISE):
            self.assertEqual(run([stream]), expected)


class Descriptor(unittest.TestCase):
    def test_filters_what_is_written_on_the_descriptor(self):
        """Whatever writes on the descriptor (a child such as the JVM
        inherits it) goes through the filter to the original file."""
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, read_end)
        target = os.dup(write_end)
        os.close(write_end)
        quiet = FilteredStderr(fd=target).start()
        os.write(target, b"one " + NOISE[0] + b"two\n")
        quiet.stop()
        os.close(target)
        got = b""
        while True:
            data = os.read(read_end, 4096)
            if not data:
                break
            got += data
        self.assertEqual(got, b"one two\n")
