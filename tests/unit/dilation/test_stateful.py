"""A search over Dilation's machines together (Manager, Connector,
DilatedConnectionProtocol, Inbound, Outbound, SubChannel): two Dilators,
Leader and Follower, on one ``task.Clock``, their L2 connections over the
in-memory network of ``wormhole.testing``, their DILATE messages in
queues the search delivers whenever it likes. Rules open, write and close
subchannels, cut the L3 at any moment, let time pass, inject out-of-order
DILATE messages and stray peer records, and stop either side
(docs/testing.md, "Searching the machines").

What must always hold: no rule raises (no ``NoTransition``), nothing is
logged as an error, every subchannel sees its peer's bytes in order and
never twice (Dilation protocol, "L4 protocol"); after an honest run is
drained every byte written on a subchannel neither side closed has
arrived across any number of reconnections; after both sides stop, every
``connect()`` Deferred has fired and every subchannel protocol has been
told its connection is lost."""

import json

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole._dilation._dilator import Dilator
from wormhole._dilation._records import Ack, Close, Data, Open, Ping, Pong
from wormhole._eventual import EventualQueue
from wormhole.testing import MemoryNetwork, _NetworkReactor

from .._machine_search import LogWatch, search_settings

SIDES = ("f" * 16, "0" * 16)  # the first one leads (larger side)
SUBPROTOCOL = "search"


class Peer(Protocol):
    """A subchannel's application protocol: writes numbered tokens
    ``label.n;`` and checks that its peer's arrive in order, once."""

    def __init__(self, search, side, label):
        self.search, self.side, self.label = search, side, label
        self.sent = 0
        self.heard = None  # the peer's label, from its first token
        self.received = []
        self.buffer = b""
        self.made = self.lost = self.closing = False

    def connectionMade(self):  # noqa: N802 (Twisted's name)
        self.made = True
        self.search.protocols.append(self)

    def dataReceived(self, data):  # noqa: N802
        assert not self.lost, f"{self.label}: data after connectionLost"
        if self.search.hostile:
            # stray records take sequence numbers and carry any bytes:
            # only the machines' robustness is checked then
            return
        self.buffer += data
        *tokens, self.buffer = self.buffer.split(b";")
        for token in tokens:
            label, n = token.decode().split(".")
            if self.heard is None:
                self.heard = label
            assert label == self.heard, f"{self.label} heard {label} after {self.heard}"
            assert int(n) == len(self.received), (
                f"{self.label} got {label}.{n} after {len(self.received)} tokens")
            self.received.append(int(n))

    def connectionLost(self, reason):  # noqa: N802
        assert not self.lost, f"{self.label}: connectionLost twice"
        self.lost = True

    def write(self):
        self.transport.write(f"{self.label}.{self.sent};".encode())
        self.sent += 1


class PeerFactory(Factory):
    def __init__(self, search, side):
        self.search, self.side = search, side

    def buildProtocol(self, addr):  # noqa: N802
        return Peer(self.search, self.side, self.search.new_label(self.side))


class RecordingNetwork(MemoryNetwork):
    """The memory network, keeping every L2 connection's client end so
    that a rule can cut one."""

    def __init__(self, reactor):
        super().__init__(reactor)
        self.ends = []

    def connectTCP(self, host, port, factory, timeout=30, bindAddress=None):  # noqa: N802
        build = factory.buildProtocol

        def recording(addr):
            protocol = build(addr)
            if protocol is not None:
                self.ends.append(protocol)
            return protocol
        factory.buildProtocol = recording
        return super().connectTCP(host, port, factory, timeout, bindAddress)

    def live(self):
        return [p for p in self.ends
                if p.transport is not None and not p.transport.disconnecting]


RECORDS = st.one_of(
    st.builds(Open, st.integers(0, 8), st.integers(0, 8), st.sampled_from([SUBPROTOCOL, "x"])),
    st.builds(Data, st.integers(0, 8), st.integers(0, 8), st.binary(max_size=8)),
    st.builds(Close, st.integers(0, 8), st.integers(0, 8)),
    st.builds(Ack, st.integers(0, 8)),
    st.builds(Ping, st.binary(min_size=4, max_size=4)),
    st.builds(Pong, st.binary(min_size=4, max_size=4)),
)
L1_MESSAGES = st.one_of(
    st.sampled_from([{"type": "reconnect"}, {"type": "reconnecting"},
                     {"type": "please", "side": "1" * 16, "use-version": "ged"},
                     {"type": "please", "side": "e" * 16, "use-version": "ged"},
                     {"type": "connection-hints", "hints": [{"type": "direct-tcp-v1"}]},
                     {"type": "connection-hints", "hints": "no"}, {"type": "nonsense"},
                     {}]),
)


class DilationSearch(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.watch = LogWatch()
        self.clock = Clock()
        self.network = RecordingNetwork(self.clock)
        reactor = _NetworkReactor(self.clock, self.network)
        eq = EventualQueue(self.clock)
        self.queues = ([], [])  # DILATE messages on their way to side 0, 1
        self.dilators = [
            Dilator(reactor, eq, lambda phase, plaintext, n=n: self.queues[1 - n].append(plaintext),
                    side=SIDES[n])
            for n in (0, 1)]
        self.protocols = []
        self.waits = []  # every listen() and connect() Deferred's outcome
        self.labels = 0
        self.tainted = False  # a stray message or record: no completeness promise
        self.stopped = [False, False]
        self.wormholes = [d.dilate(listen_addresses=["127.0.0.1"]) for d in self.dilators]
        for n in (0, 1):
            outcome = []
            listening = self.wormholes[n].listener_for(SUBPROTOCOL).listen(PeerFactory(self, n))
            listening.addBoth(outcome.append)
            self.waits.append(outcome)

    def new_label(self, side):
        self.labels += 1
        return f"{side}-{self.labels}"

    # -- the wormhole's part: key and versions, in either order ---------------

    @initialize(key_first=st.booleans(), connected=st.booleans(), hostile=st.booleans())
    def start(self, key_first, connected, hostile):
        """``connected``: the first L3 is up before the other rules run
        (else they race it); ``hostile``: the stray message rules are on."""
        self.hostile = hostile
        for d in self.dilators:
            if key_first:
                d.got_key(b"\x03" * 32)
                d.got_wormhole_versions({"can-dilate": ["ged"]})
            else:
                d.got_wormhole_versions({"can-dilate": ["ged"]})
                d.got_key(b"\x03" * 32)
        if connected:
            self._settle(4)

    # -- the world --------------------------------------------------------------

    @rule(side=st.sampled_from([0, 1]), count=st.integers(1, 3))
    def deliver_dilate(self, side, count):
        """The next DILATE messages, in order (the Boss delivers phases
        in order and once: Client-to-client protocol)."""
        queue = self.queues[side]
        for _ in range(min(count, len(queue))):
            self.dilators[side].received_dilate(queue.pop(0))

    @rule(turns=st.integers(1, 5))
    def turn(self, turns):
        for _ in range(turns):
            self.clock.advance(0)

    @rule(seconds=st.sampled_from([0.01, 0.1, 1, 5, 31, 61]))
    def time_passes(self, seconds):
        self.clock.advance(seconds)

    @rule(which=st.integers(0, 7))
    def cut_l2(self, which):
        """A TCP connection (the L3, or one still racing) is lost."""
        live = self.network.live()
        if live:
            live[which % len(live)].transport.loseConnection()

    @rule(rounds=st.integers(1, 10))
    def settle(self, rounds):
        """Every DILATE message is delivered, time passes (0.5 s a round)."""
        self._settle(rounds)

    @precondition(lambda self: self.hostile)
    @rule(side=st.sampled_from([0, 1]), message=L1_MESSAGES)
    def stray_dilate(self, side, message):
        """A DILATE message out of order, or malformed (a peer's bug)."""
        self.tainted = True
        self.dilators[side].received_dilate(json.dumps(message).encode())

    @precondition(lambda self: self.hostile)
    @rule(side=st.sampled_from([0, 1]), record=RECORDS)
    def stray_record(self, side, record):
        """A record the peer's L4 should not have sent now."""
        manager = self.dilators[side]._manager
        if manager is not None and manager._connection is not None:
            self.tainted = True
            manager.got_record(manager._connection, record)

    # -- the application ----------------------------------------------------------

    @rule(side=st.sampled_from([0, 1]))
    def connect(self, side):
        if len(self.waits) >= 8:
            return
        outcome = []
        d = self.wormholes[side].connector_for(SUBPROTOCOL).connect(PeerFactory(self, side))
        d.addBoth(outcome.append)
        self.waits.append(outcome)

    @rule(which=st.integers(0, 20), count=st.integers(1, 3))
    def write(self, which, count):
        open_ = [p for p in self.protocols if not (p.lost or p.closing)]
        if open_:
            for _ in range(count):
                open_[which % len(open_)].write()

    @rule(which=st.integers(0, 20))
    def close(self, which):
        open_ = [p for p in self.protocols if not (p.lost or p.closing)]
        if open_:
            p = open_[which % len(open_)]
            p.closing = True
            p.transport.loseConnection()

    @precondition(lambda self: not all(self.stopped))
    @rule(side=st.sampled_from([0, 1]), now=st.integers(0, 3))
    def stop(self, side, now):
        """The wormhole closes on one side (in one draw of four, so that
        most runs go on long enough to reconnect)."""
        if now:
            return
        self.stopped[side] = True
        self.dilators[side].stop()

    # -- what always holds ----------------------------------------------------------

    @invariant()
    def nothing_logged(self):
        assert not self.watch.errors, self.watch.describe()

    def teardown(self):
        try:
            self._check_the_end()
        finally:
            self.watch.stop()

    def _settle(self, rounds):
        for _ in range(rounds):
            for side in (0, 1):
                while self.queues[side]:
                    self.dilators[side].received_dilate(self.queues[side].pop(0))
            self.clock.advance(0.5)

    def _check_the_end(self):
        if not (self.tainted or any(self.stopped)):
            # an honest run, drained: whatever was lost is sent again
            self._settle(300)
            by_label = {p.label: p for p in self.protocols}
            for p in self.protocols:
                if p.heard is None or p.closing or p.lost:
                    continue
                writer = by_label[p.heard]
                if not (writer.closing or writer.lost):
                    assert len(p.received) == writer.sent, (
                        f"{p.label} got {len(p.received)} of {writer.sent} tokens "
                        f"from {writer.label}")
        for n in (0, 1):
            if not self.stopped[n]:
                self.dilators[n].stop()
        self._settle(30)
        unfired = sum(1 for outcome in self.waits if not outcome)
        assert unfired == 0, f"{unfired} listen()/connect() Deferreds never fired after stop()"
        alive = [p.label for p in self.protocols if not p.lost]
        assert not alive, f"subchannels never told of their end: {alive}"
        assert not self.watch.errors, self.watch.describe()


class DilationSearchTests(unittest.TestCase):
    def test_search(self):
        """The search above, at the example count of
        tests/unit/_machine_search.py."""
        run_state_machine_as_test(DilationSearch,
                                  settings=search_settings(examples=400, steps=50))

    def test_stop_while_a_dial_is_pending(self):
        """Found by the search: stopping while the Connector still dials
        cancels the dial's Deferred, and the memory network had never
        told the endpoint's factory its connector (``startedConnecting``):
        an AttributeError out of ``stop()``, and three connect()/listen()
        Deferreds that never fired."""
        state = DilationSearch()
        try:
            state.start(key_first=True, connected=False, hostile=True)
            state.cut_l2(which=1)
            state.close(which=15)
            state.deliver_dilate(count=2, side=1)
            state.turn(turns=5)
            state.write(count=2, which=10)
            state.deliver_dilate(count=1, side=0)
            state.turn(turns=1)
            state.stray_record(record=Ack(1), side=0)
            state.deliver_dilate(count=2, side=0)
            state.connect(side=0)
            state.connect(side=0)
            state.stop(side=0, now=0)
            state.nothing_logged()
        finally:
            state.teardown()
