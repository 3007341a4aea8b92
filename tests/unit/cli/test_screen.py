"""The progress bars while a human is asked (docs/cli.md "The terminal",
``cli/ui/screen.py`` and its bars in ``cli/ui/progress.py``), and the figures
the bars and the summaries show (docs/cli.md "Progress and summary"), on a
fake clock: no bar draws while a question is open, the lines said
meanwhile wait for the answer, the time the human took counts in no rate
or ETA, and the bytes a resume keeps count as done from the start, never
as transfer."""
import io
import types

from twisted.internet import defer, task
from twisted.trial import unittest

from wormhole import transfer_v2 as T
from wormhole.cli._config import Config
from wormhole.cli._receiving import Receiving
from wormhole.cli.ui.connection_path import ConnectionPath
from wormhole.cli.ui.progress import OfferProgress, SessionTotal, progress_bar
from wormhole.cli.ui.prompt import Lines, ask
from wormhole.cli.ui.screen import end_questions, say

from ..transfer_v2._incoming import FakeIncoming
from ._fake_terminal import FakeTerminal


def config(stream):
    return Config(relay_url="ws://example/v1", stdin=io.StringIO(), stdout=stream,
                  stderr=stream, peer_timeout=None)


class Asked:
    """A question through ``ui.prompt.ask`` whose answer the test gives."""

    def __init__(self, cfg, clock):
        self.pending = []
        cfg.read_line = self.read_line
        self.cfg = cfg
        self.clock = clock

    def read_line(self, reactor, prompt):
        self.cfg.stdout.write(prompt)
        d = defer.Deferred()
        self.pending.append(d)
        return d

    def ask(self):
        return ask(self.clock, self.cfg, "ok? (Y/n): ")


class Quiet(unittest.TestCase):
    """Nothing is drawn over a question."""

    def setUp(self):
        self.clock = task.Clock()
        self.out = FakeTerminal(self)
        self.cfg = config(self.out)
        self.asked = Asked(self.cfg, self.clock)
        self.bar = progress_bar(self.cfg, 1000, "offer", clock=self.clock.seconds)
        self.addCleanup(self.bar.close)

    def test_nothing_drawn_while_asking(self):
        """A bar that moves (``share``: our own offer goes on) and a line
        said while the question is open write nothing after it; after
        the answer the line comes, then the bar, at its new count."""
        self.bar.update(100)
        self.bar.refresh()
        answer = self.asked.ask()
        mark = self.out.getvalue().index("ok? (Y/n): ") + len("ok? (Y/n): ")
        # the bar was cleared first: the question starts the line
        self.assertTrue(self.out.getvalue()[:mark - len("ok? (Y/n): ")].endswith("\r"))
        for _ in range(5):
            self.clock.advance(1)
            self.bar.update(100)
        self.bar.refresh()
        say(self.cfg, "Sent file 'x' (1 kB): 1 file(s) confirmed")
        self.assertEqual(self.out.getvalue()[mark:], "")
        self.asked.pending.pop().callback("y")
        self.assertEqual(self.successResultOf(answer), "y")
        after = self.out.getvalue()[mark:]
        self.assertIn("Sent file 'x' (1 kB): 1 file(s) confirmed\n", after)
        self.assertIn("600/1.00k", after.split("confirmed\n")[1])

    def test_bar_ending_while_asking(self):
        """A bar that ends while the question is open shows its last
        state after the answer, as a line."""
        other = progress_bar(self.cfg, 10, "offer", clock=self.clock.seconds)
        self.asked.ask()
        mark = self.out.tell()
        other.update(10)
        other.close()
        self.assertEqual(self.out.getvalue()[mark:], "")
        self.asked.pending.pop().callback("y")
        self.assertRegex(self.out.getvalue()[mark:], r"offer: 100%.*10\.0/10\.0")

    def test_questions_in_turn(self):
        """Bars draw again once the last open question is answered."""
        self.asked.ask()
        self.asked.ask()
        self.asked.pending.pop().callback("y")
        mark = self.out.tell()
        self.bar.update(1)
        self.bar.refresh()
        self.assertEqual(self.out.getvalue()[mark:], "")
        self.asked.pending.pop().callback("y")
        self.bar.update(1)
        self.bar.refresh()
        self.assertIn("2.00/1.00k", self.out.getvalue()[mark:])

    def test_other_commands_draw(self):
        """The question is this command's: another command's bars (its
        own Config, as in these tests) still draw."""
        self.asked.ask()
        out = FakeTerminal(self)
        other = progress_bar(config(out), 10, "offer")
        other.update(5)
        other.refresh()
        other.close()
        self.assertIn("5.00/10.0", out.getvalue())


class Abandoned(unittest.TestCase):
    """A question the command leaves open: what follows starts a line."""

    def held_line_after(self, end, tty):
        out = FakeTerminal(self, tty)
        cfg = config(out)
        asked = Asked(cfg, task.Clock())
        answer = asked.ask()
        say(cfg, "Failed: the offer ended before we answered")
        if end == "eof":
            asked.pending.pop().errback(EOFError())
            self.failureResultOf(answer, EOFError)
        elif end == "given up":
            answer.cancel()
            self.failureResultOf(answer, defer.CancelledError)
        else:
            with cfg.screen.command(out):
                end_questions(cfg)
                out.write("ERROR: gone\n")
            # the answer that comes after changes nothing on the screen
            asked.pending.pop().callback("y")
        return out.getvalue()

    def test_error_after_an_open_question(self):
        """On a terminal: the question's line ends, the waiting line is
        said, the ERROR line (written after ``end_questions``) has a line
        of its own; neither the command's end nor a late answer adds
        anything."""
        self.assertEqual(self.held_line_after("error", True),
                         "ok? (Y/n): \nFailed: the offer ended before we answered\n"
                         "ERROR: gone\n")

    def test_not_a_terminal(self):
        """In a log or a pipe no line is added."""
        self.assertEqual(self.held_line_after("error", False),
                         "ok? (Y/n): Failed: the offer ended before we answered\n"
                         "ERROR: gone\n")

    def test_end_of_input(self):
        """Ctrl-D as the answer: the terminal does not end the line, we do."""
        self.assertEqual(self.held_line_after("eof", True),
                         "ok? (Y/n): \nFailed: the offer ended before we answered\n")

    def test_given_up(self):
        """A question given up (its offer ended before the answer) ends
        its line as Ctrl-D does, and what waited is said."""
        self.assertEqual(self.held_line_after("given up", True),
                         "ok? (Y/n): \nFailed: the offer ended before we answered\n")

    def test_interrupted(self):
        """Ctrl-C or SIGTERM with the question open: the command's end
        (``Screen.command``, around the whole run) ends its line and
        says what waited (the kept-bytes line)."""
        out = FakeTerminal(self)
        cfg = config(out)
        asked = Asked(cfg, task.Clock())
        with cfg.screen.command(out):
            asked.ask()
            say(cfg, "Kept 1.0 MB of file 'x'")
        self.assertEqual(out.getvalue(), "ok? (Y/n): \nKept 1.0 MB of file 'x'\n")


class Figures(unittest.TestCase):
    """Rates, ETAs and counts on a fake clock."""

    def setUp(self):
        self.clock = task.Clock()
        self.out = FakeTerminal(self)
        self.cfg = config(self.out)
        self.path = ConnectionPath(self.cfg)

    def test_wait_for_the_human_not_counted(self):
        """A bar idle while the human decided (the receiver's session
        total) neither shows the hour as elapsed nor lets it lower its
        rate: 2000 bytes in 2 s is 1000 B/s, with an ETA of 8 s."""
        total = SessionTotal(self.cfg, 10000, clock=self.clock.seconds)
        self.addCleanup(total.close)
        bar = total.bar
        bar.update(1000)
        self.clock.advance(1)
        bar.update(1000)
        asked = Asked(self.cfg, self.clock)
        asked.ask()
        self.clock.advance(3600)
        asked.pending.pop().callback("y")
        self.clock.advance(1)
        bar.update(1000)
        figures = bar.format_dict
        self.assertLess(figures["elapsed"], 10)
        self.assertIn("00:0", str(bar))  # elapsed and ETA in seconds, not hours
        self.assertNotIn("1:00:", str(bar))

    def test_wait_for_the_peer_not_counted(self):
        """An offer's bars start their time with its first byte: the
        wait for the peer's human before it (the sender's side) is in
        neither the offer's nor the session's rate, nor in the summary."""
        total = SessionTotal(self.cfg, 2000, clock=self.clock.seconds)
        self.addCleanup(total.close)
        meter = OfferProgress(self.clock, self.cfg, self.path, ("Sending", "Sent"), 1000,
                              "offer", total=total.bar)
        self.addCleanup(meter.close)
        self.clock.advance(3600)  # the receiver's human decides
        meter.update(500)
        self.clock.advance(1)
        meter.update(500)
        for bar in (meter._bar, total.bar):
            self.assertLess(bar.format_dict["elapsed"], 2, str(bar))
        self.assertEqual(meter.seconds(), 1)
        self.assertRegex(meter.summary(), r"^Sent 1\.0 kB in 1\.00 s \(1\.0 kB/s\)")

    def test_resumed_sender_reaches_the_end(self):
        """The sender learns before its first byte that the receiver keeps
        700 of 1000 bytes (``follow``, the library's ``resumed``): both
        bars count them as done, the offer's ends at 100% when the other
        300 have gone, and only those 300 are transfer (rate, summary)."""
        total = SessionTotal(self.cfg, 3000, clock=self.clock.seconds)
        self.addCleanup(total.close)
        meter = OfferProgress(self.clock, self.cfg, self.path, ("Sending", "Sent"), 1000,
                              "offer", total=total.bar)
        self.addCleanup(meter.close)
        meter.follow(700)
        self.assertEqual((meter._bar.n, total.bar.n), (700, 700))
        meter.update(150)
        self.clock.advance(1)
        meter.update(150)
        self.assertEqual((meter._bar.n, total.bar.n), (1000, 1000))
        self.assertIn("100%", str(meter._bar))
        self.assertEqual(meter._bar.format_dict["n"] - meter._bar.format_dict["initial"], 300)
        self.assertRegex(meter.summary(), r"^Sent 300 Bytes in 1\.00 s")

    def test_resumed_receiver_total(self):
        """The receiver starts an offer at the bytes it kept: the
        session's bar counts them too, so it ends at the session's size."""
        total = SessionTotal(self.cfg, 2000, clock=self.clock.seconds)
        self.addCleanup(total.close)
        meter = OfferProgress(self.clock, self.cfg, self.path, ("Receiving", "Received"),
                              1000, "receive", total=total.bar, initial=400)
        meter.update(600)
        meter.close()
        second = OfferProgress(self.clock, self.cfg, self.path, ("Receiving", "Received"),
                               1000, "receive", total=total.bar)
        second.update(1000)
        second.close()
        self.assertEqual(total.bar.n, 2000)
        self.assertEqual(total.bar.format_dict["initial"], 400)

    def test_session_line_counts_transfer_time(self):
        """The receiver's session line: the offers' own times (first
        byte to end), not the time between them when the human was
        asked about the next."""
        receiving = Receiving(self.clock, self.cfg, ask=None, path=self.path)
        for _ in range(2):
            meter = OfferProgress(self.clock, self.cfg, self.path, ("Receiving", "Received"),
                                  1000, "receive")
            meter.update(500)
            self.clock.advance(1)
            meter.update(500)
            meter.close()
            receiving._count_received(types.SimpleNamespace(files=1), meter)
            self.clock.advance(600)  # the next question, unanswered for ten minutes
        receiving.offers = 2
        self.assertRegex(receiving.session_line(),
                         r"^Session: 2 of 2 offers received \(2 files\); received 2\.0 kB "
                         r"in 2\.00 s \(1\.0 kB/s\)")


class OfferEndedWhileAsked(unittest.TestCase):
    """``share`` (and ``receive`` with several offers): an offer that ends
    while the human is asked about it gives its question up, so the line
    typed next answers the next offer's question (it went to the stale
    question before, and the next question waited for another line)."""

    def test_next_line_answers_the_next_offer(self):
        out = FakeTerminal(self)
        cfg = config(out)
        cfg.cwd = self.mktemp()
        typed = []

        def read_line(reactor, prompt):
            d = defer.Deferred()
            typed.append(d)
            return d
        cfg.read_line = read_line
        lines = Lines(task.Clock(), cfg)
        receiving = Receiving(task.Clock(), cfg, lines.ask)
        first, second = FakeIncoming("first", 10), FakeIncoming("second", 10)
        receiving.on_offer(first)
        receiving.on_offer(second)
        first.finish(T.ReceiveFailed("the sender gave this offer up"))
        typed.pop().callback("n")  # the human answers the question shown
        self.assertEqual(second.rejected, "transfer rejected")
        self.assertIsNone(first.rejected)
        self.assertEqual(out.getvalue().count("ok? (Y/n): "), 2)
        self.assertIn("ok? (Y/n): \nFailed: the offer ended before we answered "
                      "(the sender gave this offer up)\n", out.getvalue())
