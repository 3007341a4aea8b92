"""A search over transfer-v2's offer machines (OfferSender, OfferReceiver)
back to back: real files, the real Streamer and sinks, a ``task.Clock``,
and an in-memory offer subchannel whose records the search delivers when
it likes (in order, as a subchannel does). Rules decide the offer, cancel
either side, cut the subchannel, change the source under the Streamer,
let time pass, and (in hostile runs) slip any record or bad bytes to
either machine at any moment (docs/testing.md, "Searching the machines").

What must always hold: no rule raises (no ``NoTransition``), nothing is
logged as an error, each side reports its end at most once, and once the
subchannel is gone exactly once; an honest run that was accepted and
left alone ends in ``Received`` and an ``OfferResult``, with the bytes on
disk equal to the source's (Dilated File Transfer, "Making an Offer")."""

import os
import shutil
import tempfile

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from twisted.internet import task
from twisted.trial import unittest

from wormhole._landing import Refused
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2 import _sink
from wormhole.transfer_v2 import _source as S
from wormhole.transfer_v2._hashing import never
from wormhole.transfer_v2._receiving import OfferAlreadyAnswered, Received
from wormhole.transfer_v2._sending import OfferResult

from .._machine_search import LogWatch, search_settings
from . import _machines as machines

DIGEST = b"\x11" * 32
RECORDS = st.sampled_from([
    M.FileOffer("f", 0, 3), M.FileOffer("a", 0, 1, offset=0),
    M.DirectoryOffer("d", 3, [["a"], ["b"]]),
    M.OfferAccept(), M.OfferAccept(resume_offset=1, resume_hash=DIGEST),
    M.OfferReject("no"), M.FileData(b"xyz"), M.FileAcknowledge(3, DIGEST),
    M.FileAcknowledge(0, DIGEST),
]).map(M.encode_record) | st.binary(max_size=6)
TREES = st.sampled_from([
    {"one": bytes(range(256)) * 20},
    {"tree/a": b"A" * 3000, "tree/sub/b": b"B", "tree/c": b""},
    {"tree/x": b"X" * 200},
])


def plenty(path):
    return 10 ** 12


class _Transport:
    """The Streamer's end: each write is one record for the receiver."""

    def __init__(self, search):
        self._search = search

    def write(self, data):
        self._search.to_receiver.append(bytes(data))

    def registerProducer(self, producer, streaming):  # noqa: N802 (Twisted's name)
        pass

    def unregisterProducer(self):  # noqa: N802
        pass


class OfferSearch(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.watch = LogWatch()
        self.clock = task.Clock()
        self.top = tempfile.mkdtemp(prefix="offer-search-")
        self.src, self.dst = os.path.join(self.top, "src"), os.path.join(self.top, "dst")
        os.makedirs(self.src)
        os.makedirs(self.dst)
        self.to_receiver, self.to_sender = [], []
        self.closed = False   # a side closed the subchannel: it ends after the queues
        self.lost = False     # both sides were told it is gone
        self.tainted = False  # a stray record, a cancel, a cut: no success promised
        self.asked = self.decided = self.connected = False
        self.sender_ends, self.receiver_ends = [], []
        self.streamers = []

    @initialize(tree=TREES, resumable=st.booleans(), hostile=st.booleans(),
                opened=st.booleans())
    def start(self, tree, resumable, hostile, opened):
        """``opened``: the subchannel is up (and the offer sent) before
        the other rules run; ``hostile``: the stray record rule is on."""
        self.hostile = hostile
        for rel, data in tree.items():
            path = os.path.join(self.src, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        self.tree = tree
        self.outgoing = S.prepare(os.path.join(self.src, next(iter(tree)).split("/")[0]))
        self.resumable = resumable
        self.sender = machines.sender(
            self.outgoing.offer, self.to_receiver.append, self._close, self._stream,
            self._ended(self.sender_ends),
            (lambda accept: self._hashing(lambda cancelled: S.resume_point(
                self.outgoing, accept, cancelled))) if resumable else None)
        self.receiver = machines.receiver(
            self.to_sender.append, self._close, self._ask, lambda n: None,
            self._ended(self.receiver_ends), run_hashing=self._hashing)
        if opened:
            self.open_subchannel()

    # -- the neighbours ---------------------------------------------------------

    def _hashing(self, work):
        # on a later clock turn, as from a thread
        return task.deferLater(self.clock, 0, work, never)

    def _stream(self, resume=None):
        s = self.sender
        streamer = S.Streamer(self.clock, _Transport(self), self.outgoing, s.file_sent,
                              s.all_sent, s.source_failed, resume=resume)
        self.streamers.append(streamer)
        streamer.start()
        return streamer

    def _ended(self, ends):
        def ended(result):
            assert not ends, f"a second end {result!r} after {ends[0]!r}"
            ends.append(result)
        return ended

    def _close(self):
        self.closed = True

    def _ask(self, offer):
        assert not self.asked, "asked twice about one offer"
        self.asked = True

    # -- the world ----------------------------------------------------------------

    @precondition(lambda self: not self.connected)
    @rule()
    def open_subchannel(self):
        self.connected = True
        self.sender.connected()

    @rule(count=st.integers(1, 4))
    def deliver_to_receiver(self, count):
        self._deliver(self.to_receiver, self.receiver, count)

    @rule(count=st.integers(1, 4))
    def deliver_to_sender(self, count):
        self._deliver(self.to_sender, self.sender, count)

    def _deliver(self, queue, machine, count):
        if machine is self.sender and not self.connected:
            return  # the subchannel's bytes come after its connectionMade
        for _ in range(count):
            if self.lost or not queue:
                return
            machine.got_record(queue.pop(0))

    @rule(rounds=st.integers(1, 5))
    def settle(self, rounds):
        """Every record written so far arrives, a turn of the clock."""
        for _ in range(rounds):
            self._deliver(self.to_receiver, self.receiver, 100)
            self._deliver(self.to_sender, self.sender, 100)
            self.clock.advance(0)

    @rule(seconds=st.sampled_from([0, 0, 0.1, 1]))
    def time_passes(self, seconds):
        self.clock.advance(seconds)

    @rule()
    def subchannel_ends(self):
        """A closed subchannel ends once what was written before the
        close has arrived: both sides are told."""
        if self.closed and not self.lost and not (self.to_receiver or self.to_sender):
            self._lose()

    @rule(now=st.integers(0, 3))
    def cut(self, now):
        """The subchannel goes away now (Dilation stopped, the peer gone);
        in one draw of four, so that most runs get further."""
        if not (self.lost or now):
            self.tainted = True
            self.to_receiver.clear()
            self.to_sender.clear()
            self._lose()

    def _lose(self):
        self.lost = True
        self.sender.lost()
        self.receiver.lost()

    @rule(on_sender=st.booleans(), now=st.integers(0, 3))
    def cancel(self, on_sender, now):
        if not (self.lost or now):
            self.tainted = True
            (self.sender if on_sender else self.receiver).cancel("the application said so")

    @precondition(lambda self: self.asked and not self.decided)
    @rule(accept=st.booleans())
    def decide(self, accept):
        self.decided = True
        if accept:
            self.receiver.accept(_sink.sink_for(self.receiver._offer, self.dst, plenty,
                                                resumable=self.resumable))
        else:
            self.tainted = True
            self.receiver.reject("no, thanks")

    @precondition(lambda self: self.decided)
    @rule(accept=st.booleans())
    def answer_again(self, accept):
        """The application answers an offer it answered already: a clear
        error while the offer is under way, nothing once it is over."""
        try:
            if accept:
                try:
                    sink = _sink.sink_for(self.receiver._offer, self.dst, plenty,
                                          resumable=self.resumable)
                except Refused:
                    return  # it has landed: the receiving rules refuse it first
                self.receiver.accept(sink)
            else:
                self.receiver.reject("changed my mind")
        except OfferAlreadyAnswered:
            assert not self.receiver_ends, "refused after the offer was over"
        else:
            # taken: the offer was over, or a reject came while an accept
            # still checked the kept bytes (its answer not out yet)
            assert self.receiver_ends, "a second answer taken while the offer goes on"
            self.tainted = True

    @rule(now=st.integers(0, 3))
    def change_source(self, now):
        """A file of the source grows while it is offered."""
        if not (self.lost or now):
            self.tainted = True
            rel = sorted(self.tree)[0]
            with open(os.path.join(self.src, *rel.split("/")), "ab") as f:
                f.write(b"more")

    @precondition(lambda self: self.hostile)
    @rule(to_sender=st.booleans(), raw=RECORDS, bad=st.booleans())
    def stray(self, to_sender, raw, bad):
        """A record (or bytes that make none) where the protocol has none."""
        if self.lost or (to_sender and not self.connected):
            return  # the subchannel's bytes come after its connectionMade
        self.tainted = True
        machine = self.sender if to_sender else self.receiver
        if bad:
            machine.bad_bytes(M.MessageError("bad framing"))
        else:
            machine.got_record(raw)

    # -- what always holds ----------------------------------------------------------

    @invariant()
    def nothing_logged(self):
        assert not self.watch.errors, self.watch.describe()

    def teardown(self):
        try:
            if hasattr(self, "sender"):
                self._check_the_end()
        finally:
            self.watch.stop()
            for streamer in self.streamers:
                streamer.stop()
            shutil.rmtree(self.top)

    def _check_the_end(self):
        # the world calms down: the application answers, every record
        # arrives, the subchannel ends
        if not self.connected:
            self.open_subchannel()
        for _ in range(500):
            if self.asked and not self.decided:
                self.decide(True)
            moved = bool(self.to_receiver or self.to_sender)
            self._deliver(self.to_receiver, self.receiver, 100)
            self._deliver(self.to_sender, self.sender, 100)
            self.clock.advance(0.1)
            if self.closed and not self.lost and not (self.to_receiver or self.to_sender):
                self._lose()
            if self.lost or not (moved or self.clock.getDelayedCalls()):
                break
        if not self.lost:
            self.tainted = True
            self._lose()
        self.clock.advance(1)
        assert len(self.sender_ends) == 1, f"sender ends: {self.sender_ends}"
        assert len(self.receiver_ends) == 1, f"receiver ends: {self.receiver_ends}"
        if not self.tainted:
            assert isinstance(self.sender_ends[0], OfferResult), self.sender_ends
            assert isinstance(self.receiver_ends[0], Received), self.receiver_ends
            for rel, data in self.tree.items():
                with open(os.path.join(self.dst, *rel.split("/")), "rb") as f:
                    assert f.read() == data, f"{rel} differs"
        assert not self.watch.errors, self.watch.describe()


class OfferSearchTests(unittest.TestCase):
    def test_search(self):
        """The search above, at the example count of
        tests/unit/_machine_search.py."""
        run_state_machine_as_test(OfferSearch, settings=search_settings(examples=300, steps=30))

    def test_a_second_answer_is_refused_clearly(self):
        """Found by the search: an offer accepted, then accepted or rejected
        again while its file arrives, raised Automat's NoTransition (for
        ``_accept_file``, ``reject`` in ``R3_receiving``) into the
        application; it is OfferAlreadyAnswered now, and the transfer goes
        on to the end."""
        for again in (True, False):
            state = OfferSearch()
            try:
                state.start(tree={"one": bytes(range(256)) * 20}, resumable=again,
                            hostile=False, opened=True)
                state.deliver_to_receiver(count=1)
                state.decide(accept=True)
                state.settle(rounds=2)
                state.answer_again(accept=again)
                state.nothing_logged()
            finally:
                state.teardown()
