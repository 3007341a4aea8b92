"""What the transfer-v2 CLI says, piece by piece, with a Clock: the path
line from Dilation's status (in classic Transit's words), the summary,
the one line for a peer gone mid-offer, and the session's outcome (exit
3 only when every failure was a decline)."""
import io

from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole import transfer_v2 as T
from wormhole._status import ConnectedPeer, ConnectingPeer, DilationStatus
from wormhole.cli._config import Config
from wormhole.cli._receiving import Receiving
from wormhole.cli.ui.connection_path import ConnectionPath
from wormhole.cli.ui.progress import OfferProgress as _Meter
from wormhole.cli.ui.progress import file_label
from wormhole.errors import TransferError
from wormhole.session import outcome
from wormhole.transfer import Declined

from ..cli._fake_terminal import FakeTerminal
from ._incoming import FakeIncoming


def status(peer):
    return DilationStatus(mailbox=None, generation=1, peer_connection=peer)


class Path(unittest.TestCase):

    def setUp(self):
        self.cfg = Config(stderr=io.StringIO(), hide_progress=True)
        self.path = ConnectionPath(self.cfg)

    def connected(self, hint, peer_address=None):
        self.path.status_update(status(ConnectedPeer(0.0, None, hint, peer_address)))
        return self.path.description

    def test_classic_words(self):
        """Direct and WebSocket relay descriptions pass as they are; a TCP
        relay gains classic's "tcp:"; a connection the peer opened is
        "<-tcp:HOST:PORT" with the address Dilation's status gives, "<-tcp"
        without it."""
        self.assertEqual(self.connected("->tcp:192.0.2.7:4000"), "->tcp:192.0.2.7:4000")
        self.assertEqual(self.connected("->relay:127.0.0.1:4001"),
                         "->relay:tcp:127.0.0.1:4001")
        self.assertEqual(self.connected("->relay:tcp:127.0.0.1:4001"),
                         "->relay:tcp:127.0.0.1:4001")
        self.assertEqual(self.connected("->relay:wss://relay.example/t"),
                         "->relay:wss://relay.example/t")
        self.assertEqual(self.connected("inbound"), "<-tcp")
        self.assertEqual(self.connected("inbound", "192.0.2.8:51515"), "<-tcp:192.0.2.8:51515")

    def test_peer_text_escaped(self):
        """The host name came from the peer's hints: escaped."""
        self.assertEqual(self.connected("->tcp:evil\x1b[2J:1"), "->tcp:evil\\x1b[2J:1")

    def test_reconnection_said(self):
        """The first connection is silent (the path line says it); after a
        lost one, a new connection is announced once."""
        self.path.status_update(status(ConnectingPeer(0.0)))
        self.connected("->tcp:192.0.2.7:4000")
        self.assertEqual(self.cfg.stderr.getvalue(), "")
        self.path.status_update(status(ConnectingPeer(1.0)))
        self.connected("->relay:127.0.0.1:4001")
        self.assertEqual(self.cfg.stderr.getvalue(),
                         "Reconnected to the peer (->relay:tcp:127.0.0.1:4001)\n")


class Meter(unittest.TestCase):

    def setUp(self):
        self.clock = Clock()
        self.cfg = Config(stderr=io.StringIO(), hide_progress=True)
        self.path = ConnectionPath(self.cfg)
        self.path.status_update(status(ConnectedPeer(0.0, None, "->tcp:192.0.2.7:4000")))

    def test_path_line_then_summary(self):
        """The path line comes with the first bytes, once; the summary
        counts the bytes from then on."""
        meter = _Meter(self.clock, self.cfg, self.path, ("Sending", "Sent"), 4_000_000, "offer")
        self.assertEqual(self.cfg.stderr.getvalue(), "")
        self.clock.advance(5)  # waiting for the peer's decision is not counted
        meter.update(1_000_000)
        self.clock.advance(2)
        meter.update(3_000_000)
        meter.close()
        self.assertEqual(self.cfg.stderr.getvalue(), "Sending (->tcp:192.0.2.7:4000)..\n")
        self.assertEqual(meter.summary(),
                         "Sent 4.0 MB in 2.00 s (2.0 MB/s) via ->tcp:192.0.2.7:4000")

    def test_a_terminal_without_a_width(self):
        """A terminal that reports 0 columns (``script`` without a size)
        gets no bar, as a log does, and one narrower than the bar's name
        a bar cut to its width: neither raises."""
        for columns, drawn in ((0, False), (3, True)):
            cfg = Config(stderr=FakeTerminal(self, columns=columns))
            meter = _Meter(self.clock, cfg, self.path, ("Sending", "Sent"), 1000, "offer")
            meter.update(1000)
            meter.close()
            # a drawn bar begins its line with a carriage return
            self.assertEqual("\r" in cfg.stderr.getvalue(), drawn,
                             (columns, cfg.stderr.getvalue()))

    def test_no_bar_without_a_terminal(self):
        """stderr a log or a pipe: no bar (its carriage returns and cursor
        moves would fill the log), the lines only; on a terminal the bar
        is drawn."""
        logged = Config(stderr=FakeTerminal(self, tty=False))
        meter = _Meter(self.clock, logged, self.path, ("Sending", "Sent"), 4_000_000, "offer")
        meter.update(1_000_000)
        self.clock.advance(1)
        meter.update(3_000_000)
        meter.close()
        self.assertEqual(logged.stderr.getvalue(), "Sending (->tcp:192.0.2.7:4000)..\n")
        shown = Config(stderr=FakeTerminal(self))
        meter = _Meter(self.clock, shown, self.path, ("Sending", "Sent"), 4_000_000, "offer")
        meter.update(4_000_000)
        meter.close()
        self.assertIn("offer: 100%", shown.stderr.getvalue())

    def test_peer_gone(self):
        """An offer lost after bytes moved says how far it got, and why;
        before any byte, or for another error, the error is kept."""
        meter = _Meter(self.clock, self.cfg, self.path, ("Receiving", "Received"),
                       16_000_000, "receive", initial=2_000_000)
        lost = T.ReceiveFailed("cancelled: the peer has been unreachable for 60 s")
        self.assertIs(meter.lost("sender", lost), lost)
        meter.update(6_000_000)
        self.assertEqual(str(meter.lost("sender", lost)),
                         "the sender went away after 8.0 MB of 16.0 MB arrived "
                         "(cancelled: the peer has been unreachable for 60 s)")
        mismatch = T.HashMismatch("the hash differs")
        self.assertIs(meter.lost("sender", mismatch), mismatch)


class SessionLine(unittest.TestCase):

    def test_several_offers(self):
        """The receiver cannot know the session's total in advance (offers
        come one at a time): with more than one offer, it ends with one
        line counting the offers and files received, their bytes, the time
        from the first byte to the last offer's end, and the rate."""
        clock = Clock()
        cfg = Config(stderr=io.StringIO(), hide_progress=True, accept_file=True,
                     cwd=self.mktemp(), peer_timeout=None)
        path = ConnectionPath(cfg)
        path.status_update(status(ConnectedPeer(0.0, None, "->tcp:192.0.2.7:4000")))
        receiving = Receiving(clock, cfg, ask=None, path=path)
        one, two, three = (FakeIncoming(n, 2_000_000) for n in ("one", "two", "three"))
        receiving.on_offer(one)
        clock.advance(3)  # before the first byte: not counted
        one.progress(2_000_000)
        clock.advance(1)
        one.finish(T.Received(one.offer, "/x/one", 1, 2_000_000))
        receiving.on_offer(two)
        two.progress(1_000_000)
        two.finish(T.ReceiveFailed("the sender went away"))
        receiving.on_offer(three)
        three.progress(2_000_000)
        clock.advance(1)
        three.finish(T.Received(three.offer, "/x/three", 1, 2_000_000))
        failed = self.failureResultOf(receiving.finished(), TransferError)
        self.assertEqual(str(failed.value), "1 of 3 offers did not complete")
        lines = cfg.stderr.getvalue().splitlines()
        self.assertIn("Session: 2 of 3 offers received (2 files); received 4.0 MB in "
                      "2.00 s (2.0 MB/s) via ->tcp:192.0.2.7:4000", lines)

    def test_one_offer(self):
        """One offer: its own summary says it all, no session line."""
        clock = Clock()
        cfg = Config(stderr=io.StringIO(), hide_progress=True, accept_file=True,
                     cwd=self.mktemp(), peer_timeout=None)
        receiving = Receiving(clock, cfg, ask=None)
        one = FakeIncoming("one", 10)
        receiving.on_offer(one)
        one.progress(10)
        one.finish(T.Received(one.offer, "/x/one", 1, 10))
        self.successResultOf(receiving.finished())
        self.assertNotIn("Session:", cfg.stderr.getvalue())


class ResumeAnswer(unittest.TestCase):

    def test_bar_follows_the_answer(self):
        """We asked to resume at 3 MB of 4 MB; the sender's answer keeps
        only 1 MB (IncomingOffer.held changes after accept): the
        bar starts from 1 MB, ends at exactly 4 MB (100%), and why the
        kept bytes went is said at the end."""
        clock = Clock()
        cfg = Config(stderr=FakeTerminal(self), accept_file=True, cwd=self.mktemp(),
                     peer_timeout=None)
        receiving = Receiving(clock, cfg, ask=None)
        incoming = FakeIncoming("big", 4_000_000)
        incoming.resumed_from = incoming.held = 3_000_000
        receiving.on_offer(incoming)
        incoming.held = 1_000_000  # the answer
        incoming.discarded = "the start kept is not the sender's: received again"
        for _ in range(3):
            clock.advance(1)
            incoming.progress(1_000_000)
        incoming.finish(T.Received(incoming.offer, "/x/big", 1, 4_000_000))
        self.successResultOf(receiving.finished())
        shown = cfg.stderr.getvalue()
        last_bar = [seg for seg in shown.replace("\n", "\r").split("\r") if "receive:" in seg][-1]
        self.assertIn("100%", last_bar)
        self.assertIn("4.00M/4.00M", last_bar)
        self.assertNotIn("6.00M", shown)
        self.assertIn("Resuming at byte 3000000 of 4000000", shown)
        self.assertIn("the start kept is not the sender's: received again", shown)
        self.assertIn("Received 3.0 MB in", shown)


class FileLabel(unittest.TestCase):

    def test_short_names_whole(self):
        """A path that fits a third of the terminal is shown whole, its
        segments joined by "/"."""
        self.assertEqual(file_label(("sub", "a.txt"), 100), "sub/a.txt")

    def test_escaped(self):
        """The peer's names are escaped: a control sequence cannot move
        the cursor or write over another bar."""
        self.assertEqual(file_label(("a\x1b[2Jb",), 100), "a\\x1b[2Jb")

    def test_cut_from_the_left(self):
        """A long path keeps its end (the file's name) after "...", within
        a third of the columns; wide characters count two columns."""
        self.assertEqual(file_label(("x" * 50, "name.bin"), 60), "...xxxxxxxx/name.bin")
        wide = file_label(("\u6587" * 40,), 60)
        self.assertEqual(wide, "..." + "\u6587" * 8)
        # never less than 8 columns, however narrow the terminal
        self.assertEqual(file_label(("abcdefghijklmnop",), 12), "...lmnop")


class Outcome(unittest.TestCase):

    def test_outcomes(self):
        """No failure: None; one offer: its own error; several: a count,
        declined (exit 3) only when every failure was a decline."""
        no = Declined("the receiver declined: transfer rejected")
        broken = TransferError("the sender went away")
        self.assertIsNone(outcome([], 3, "offers"))
        self.assertIs(outcome([broken], 1, "offers"), broken)
        both = outcome([no, no], 3, "offers")
        self.assertIsInstance(both, Declined)
        self.assertEqual(str(both), "2 of 3 offers did not complete")
        mixed = outcome([no, broken], 2, "offers we made")
        self.assertNotIsInstance(mixed, Declined)
        self.assertEqual(str(mixed), "2 of 2 offers we made did not complete")
