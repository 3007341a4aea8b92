"""The race behind one ``connect()`` (Transit protocol, "Handshake", "Relay").

Direct attempts start at once; relay attempts start after ``relay_delay`` (a
few seconds when there are direct hints, 0 when there are none: Transit
protocol, "Relay"). The first connection past negotiation wins: it is
selected, every other attempt is stopped, and later arrivals are rejected
(the Sender says ``nevermind``). If nothing wins within ``timeout`` seconds,
or every attempt failed and none can still arrive, ``connect()`` fails.
"""

from automat import MethodicalMachine
from twisted.internet import defer
from zope.interface import implementer

from .._automat_private import trace_hook
from ._interfaces import IAttempts, ISelection, ITransitConnection


class TransitError(Exception):
    """No Transit connection could be established."""


@implementer(ISelection)
class Selection:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, clock, timeout):
        self._clock = clock
        self._timeout = timeout
        self._timers = []
        self._result = defer.Deferred(lambda d: self.cancel())
        self._winner = None

    def wire(self, attempts):
        self._attempts = IAttempts(attempts)

    def when_connected(self):
        return self._result

    @m.state(initial=True)
    def S0_idle(self): pass

    @m.state()
    def S1_racing(self): pass

    @m.state()
    def S2_selected(self): pass

    @m.state()
    def S3_failed(self): pass

    @m.input()
    def start(self, relay_delay): pass

    @m.input()
    def connection_ready(self, connection): pass

    @m.input()
    def connection_failed(self, connection): pass

    @m.input()
    def all_failed(self, reason): pass

    @m.input()
    def relay_due(self): pass

    @m.input()
    def timed_out(self): pass

    @m.input()
    def cancel(self): pass

    @m.output()
    def _start_timers(self, relay_delay):
        self._timers = [self._clock.callLater(relay_delay, self.relay_due),
                        self._clock.callLater(self._timeout, self.timed_out)]

    @m.output()
    def _launch_direct(self, relay_delay):
        self._attempts.launch_direct()

    @m.output()
    def _launch_relay(self):
        self._attempts.launch_relay()

    @m.output()
    def _cancel_timers(self):
        timers, self._timers = self._timers, []
        for t in timers:
            if t.active():
                t.cancel()

    @m.output()
    def _choose(self, connection):
        self._winner = ITransitConnection(connection)
        self._pipe = self._attempts.make_pipe(connection)
        self._winner.select(self._pipe)

    @m.output()
    def _stop_others(self, connection):
        self._attempts.stop_all_except(connection)

    @m.output()
    def _stop_all(self):
        self._attempts.stop_all_except(None)

    @m.output()
    def _deliver(self, connection):
        self._result.callback(self._pipe)

    @m.output()
    def _reject(self, connection):
        connection.reject()

    @m.output()
    def _note_failure(self, connection):
        self._attempts.connection_failed(connection)

    @m.output()
    def _fail(self, reason):
        if not self._result.called:
            self._result.errback(TransitError(
                f"no transit connection could be established: {reason}"))

    @m.output()
    def _fail_timeout(self):
        self._result.errback(TransitError(
            f"no transit connection within {self._timeout} seconds: "
            "no direct hint or relay got past the handshake"))

    @m.output()
    def _fail_cancelled(self):
        if not self._result.called:
            self._result.errback(defer.CancelledError())

    S0_idle.upon(start, enter=S1_racing, outputs=[_start_timers, _launch_direct])
    S0_idle.upon(cancel, enter=S3_failed, outputs=[_fail_cancelled])
    S1_racing.upon(connection_ready, enter=S2_selected,
                   outputs=[_cancel_timers, _choose, _stop_others, _deliver])
    S1_racing.upon(connection_failed, enter=S1_racing, outputs=[_note_failure])
    S1_racing.upon(relay_due, enter=S1_racing, outputs=[_launch_relay])
    S1_racing.upon(all_failed, enter=S3_failed, outputs=[_cancel_timers, _stop_all, _fail])
    S1_racing.upon(timed_out, enter=S3_failed, outputs=[_cancel_timers, _stop_all, _fail_timeout])
    S1_racing.upon(cancel, enter=S3_failed, outputs=[_cancel_timers, _stop_all, _fail_cancelled])
    S2_selected.upon(connection_ready, enter=S2_selected, outputs=[_reject])
    S2_selected.upon(connection_failed, enter=S2_selected, outputs=[])
    S2_selected.upon(all_failed, enter=S2_selected, outputs=[])
    S2_selected.upon(cancel, enter=S2_selected, outputs=[])
    S3_failed.upon(connection_ready, enter=S3_failed, outputs=[_reject])
    S3_failed.upon(connection_failed, enter=S3_failed, outputs=[])
    S3_failed.upon(all_failed, enter=S3_failed, outputs=[])
    S3_failed.upon(cancel, enter=S3_failed, outputs=[])
