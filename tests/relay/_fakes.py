"""Recording fakes for the relay's unit tests (docs/relay.md, "Tests"): each
appends what it was asked to do to a shared list."""

from twisted.internet.interfaces import IPushProducer
from zope.interface import implementer

from wormhole_relay._connection import RelayConnection
from wormhole_relay._interfaces import IRelayConnection, ITransportGlue, IUsageRecorder
from wormhole_relay._limits import Limits
from wormhole_relay._pairing import Pairing
from wormhole_relay._usage import UsageRecorder

TOKEN = "a" * 64
TOKEN2 = "b" * 64
SIDE1 = "1" * 16
SIDE2 = "2" * 16


def handshake(token=TOKEN, side=None):
    if side is None:
        return b"please relay %s\n" % token.encode()
    return b"please relay %s for side %s\n" % (token.encode(), side.encode())


@implementer(IPushProducer)
class FakeProducer:
    def __init__(self, name, events):
        self._name = name
        self._events = events

    def pauseProducing(self):
        self._events.append((self._name, "pause"))

    def resumeProducing(self):
        self._events.append((self._name, "resume"))

    def stopProducing(self):
        self._events.append((self._name, "stop"))


@implementer(ITransportGlue)
class FakeGlue:
    def __init__(self, name, events):
        self.name = name
        self.events = events
        self.producer = FakeProducer(name, events)
        self.written = b""
        self.streaming_from = None

    def write(self, data):
        self.written += data
        self.events.append((self.name, "write", data))

    def close(self):
        self.events.append((self.name, "close"))

    def abort(self):
        self.events.append((self.name, "abort"))

    def stream_with(self, other, pair):
        # a fake glue keeps feeding its machine: the machine's own
        # relaying transitions stay tested
        self.streaming_from = other
        self.events.append((self.name, "stream_with", other.name))

    def stop_streaming(self):
        self.streaming_from = None
        self.events.append((self.name, "stop_streaming"))


@implementer(IUsageRecorder)
class RecordingUsage:
    def __init__(self):
        self.got = []
        self.current = []

    def record(self, started, total_time, waiting_time, total_bytes, mood):
        self.got.append(dict(started=started, total_time=total_time,
                             waiting_time=waiting_time,
                             total_bytes=total_bytes, mood=mood))

    def update_current(self, connected, waiting, incomplete_bytes):
        self.current.append((connected, waiting, incomplete_bytes))

    def records(self):
        return list(self.got)

    def close(self):
        pass

    def moods(self):
        return [r["mood"] for r in self.got]


@implementer(IRelayConnection)
class FakeConnection:
    """Stands in for a RelayConnection in the pairing's tests."""

    def __init__(self, name, events, started=0.0):
        self.name = name
        self.events = events
        self.started = started
        self.glue = FakeGlue(name, events)

    def start(self):
        self.events.append((self.name, "start"))

    def data_received(self, data):
        self.events.append((self.name, "data_received", data))

    def connection_lost(self):
        self.events.append((self.name, "connection_lost"))

    def paired(self, pair, partner):
        self.pair = pair
        self.events.append((self.name, "paired", partner.name))

    def displaced(self):
        self.events.append((self.name, "displaced"))

    def crowded(self):
        self.events.append((self.name, "crowded"))

    def partner_lost(self):
        self.events.append((self.name, "partner_lost"))

    def timed_out(self):
        self.events.append((self.name, "timed_out"))

    def forward(self, data):
        self.events.append((self.name, "forward", data))


class World:
    """A Clock, a real Pairing, a recording usage, and connections made
    with FakeGlues that all log into one ``events`` list."""

    def __init__(self, clock, **limits):
        self.clock = clock
        self.events = []
        self.limits = Limits(**limits)
        self.usage = RecordingUsage()
        self.pairing = Pairing(clock, self.usage, self.limits)

    def connect(self, name):
        glue = FakeGlue(name, self.events)
        conn = RelayConnection(glue, self.pairing, self.usage, self.clock,
                               self.limits)
        conn.start()
        return conn, glue

    def lose(self, conn):
        conn.connection_lost()


__all__ = ["FakeGlue", "FakeConnection", "RecordingUsage", "World",
           "UsageRecorder", "handshake", "TOKEN", "TOKEN2", "SIDE1", "SIDE2"]
