"""Run our Transit relay inside a test's reactor.

    r = yield start_transit_relay(reactor)
    r.hint           # "tcp:127.0.0.1:PORT", for a Transit relay hint
    r.port           # pass port=r.port later to restart on the same port
    r.websocket_url  # "ws://127.0.0.1:WSPORT/" if websocket_port=0, else None
    r.usage()        # one dict per finished pair / unpaired connection
    yield r.when_usage(2)          # fires once there are 2 records
    yield r.when_mood("happy")     # fires once a record has this mood
    yield r.stop()

Everything listens on 127.0.0.1 only. Extra keyword arguments are limits
(``wormhole_relay._limits.Limits``), e.g. ``pairing_timeout=5``.
``splice=False`` keeps TCP pairs on the plain copying path (they splice on
Linux otherwise, as the twistd plugin does).
"""

from twisted.internet.defer import Deferred, inlineCallbacks, returnValue, succeed
from zope.interface import implementer

from wormhole_ops.usage import IUsageWriter

from ._limits import Limits
from .server import build_relay, make_tcp_factory, make_websocket_factory

__all__ = ["start_transit_relay", "RunningTransitRelay"]


@implementer(IUsageWriter)
class _Waiters:
    """Fires the Deferreds of when_usage/when_mood as records come."""

    def __init__(self):
        self.records = []
        self._waiting = []  # (predicate, Deferred)

    def wait(self, predicate):
        d = Deferred()
        self._waiting.append((predicate, d))
        self._check()
        return d

    def _check(self):
        waiting, self._waiting = self._waiting, []
        for predicate, d in waiting:
            if predicate(self.records):
                d.callback(list(self.records))
            else:
                self._waiting.append((predicate, d))

    def write_record(self, record):
        self.records.append(record)
        self._check()

    def write_current(self, rebooted, updated, connected, waiting,
                      incomplete_bytes):
        pass

    def close(self):
        return succeed(None)


class RunningTransitRelay:
    """A Transit relay listening on 127.0.0.1 (``start_transit_relay``):
    ``hint`` is its ``tcp:`` hint, ``websocket_url`` its WebSocket address
    when it has one, ``relay`` the relay object."""
    def __init__(self, relay, listening, ws_listening, waiters):
        self.relay = relay
        self._waiters = waiters
        self._listening = listening
        self._ws_listening = ws_listening
        self.port = listening.getHost().port
        self.hint = f"tcp:127.0.0.1:{self.port}"
        self.websocket_port = None
        self.websocket_url = None
        if ws_listening is not None:
            self.websocket_port = ws_listening.getHost().port
            self.websocket_url = f"ws://127.0.0.1:{self.websocket_port}/"

    def usage(self):
        """Every usage record so far, oldest first."""
        return self.relay.usage.records()

    def when_usage(self, count):
        """A Deferred that fires (with the records) once there are at
        least ``count`` records."""
        return self._waiters.wait(lambda records: len(records) >= count)

    def when_mood(self, mood):
        """A Deferred that fires once some record has ``mood``."""
        return self._waiters.wait(
            lambda records: any(r["mood"] == mood for r in records))

    @inlineCallbacks
    def stop(self):
        """Close the listening ports and every connection."""
        yield self._listening.stopListening()
        if self._ws_listening is not None:
            yield self._ws_listening.stopListening()
        yield self.relay.drop_all()
        yield self.relay.stop()


@inlineCallbacks
def start_transit_relay(reactor, port=0, websocket_port=None, usage_db=None,
                        log_file=None, blur_usage=None, splice=True,
                        **limits):
    """Start our Transit relay on 127.0.0.1 (``port=0``: a free port; a
    WebSocket port too when ``websocket_port`` is given) for a test;
    returns a Deferred firing with a ``RunningTransitRelay``. ``limits``
    are ``Limits`` fields (docs/relay.md)."""
    waiters = _Waiters()
    relay = build_relay(reactor, usage_db=usage_db, log_file=log_file,
                        blur_usage=blur_usage, limits=Limits(**limits),
                        extra_writers=[waiters])
    listening = yield reactor.listenTCP(
        port, make_tcp_factory(relay, reactor=reactor, splice=splice),
        interface="127.0.0.1")
    ws_listening = None
    if websocket_port is not None:
        # the URL's port only matters to autobahn's checks; read it back
        factory = make_websocket_factory(relay, "ws://127.0.0.1/",
                                         reactor=reactor)
        ws_listening = yield reactor.listenTCP(websocket_port, factory,
                                               interface="127.0.0.1")
        factory.setSessionParameters(
            url=f"ws://127.0.0.1:{ws_listening.getHost().port}/")
    relay.start()
    returnValue(RunningTransitRelay(relay, listening, ws_listening, waiters))
