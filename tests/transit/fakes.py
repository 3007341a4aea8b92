"""Recording fakes for the Transit machines' neighbours."""

from zope.interface import implementer

from wormhole._transit._interfaces import (
    IAttempts,
    IConnectionIO,
    IRecordSink,
    ISelection,
)


@implementer(IConnectionIO)
class FakeIO:
    def __init__(self, events):
        self.events = events

    def write(self, data):
        self.events.append(("io.write", data))

    def lose(self):
        self.events.append(("io.lose",))


@implementer(ISelection)
class FakeSelection:
    """Records reports; ``answer`` decides what connection_ready does."""

    def __init__(self, events, answer=None):
        self.events = events
        self.answer = answer

    def start(self, relay_delay):
        self.events.append(("selection.start", relay_delay))

    def connection_ready(self, connection):
        self.events.append(("selection.connection_ready", connection))
        if self.answer is not None:
            self.answer(connection)

    def connection_failed(self, connection):
        self.events.append(("selection.connection_failed", connection))

    def all_failed(self, reason):
        self.events.append(("selection.all_failed", reason))

    def cancel(self):
        self.events.append(("selection.cancel",))

    def when_connected(self):
        raise NotImplementedError


@implementer(IRecordSink)
class FakeSink:
    def __init__(self, events):
        self.events = events

    def records_received(self, records):
        self.events.append(("sink.records", list(records)))

    def connection_lost(self):
        self.events.append(("sink.lost",))

    def records_refused(self, why):
        self.events.append(("sink.refused", why))


@implementer(IAttempts)
class FakeAttempts:
    def __init__(self, events):
        self.events = events
        self.selection = None

    def launch_direct(self):
        self.events.append(("attempts.launch_direct",))

    def launch_relay(self):
        self.events.append(("attempts.launch_relay",))

    def stop_all_except(self, winner):
        self.events.append(("attempts.stop_all_except", winner))

    def connection_failed(self, connection):
        self.events.append(("attempts.connection_failed", connection))

    def make_pipe(self, connection):
        self.events.append(("attempts.make_pipe", connection))
        return ("pipe", connection)
