"""A recording fake of the public wormhole API (Client API) for the CLI's
unit tests, and a Clock that also keeps shutdown triggers.

``test_fakes`` checks ``fake_create``'s signature against the real
``wormhole.create`` so the fake cannot drift from the API it stands for.
"""
import sys

from twisted.internet import defer, task
from twisted.internet.error import ConnectionClosed
from twisted.internet.interfaces import IConsumer
from zope.interface import implementer

from wormhole._interfaces import IDeferredWormhole, IInputHelper
from wormhole._status import ConsumedCode, WormholeStatus
from wormhole.errors import KeyFormatError
from wormhole.transit import IRecordPipe


class FakeReactor(task.Clock):
    """Clock plus the system-event trigger calls the commands make."""

    def __init__(self):
        super().__init__()
        self.triggers = {}
        self._next = 0

    def addSystemEventTrigger(self, phase, event, f, *args, **kwargs):
        self._next += 1
        self.triggers[self._next] = (phase, event, f, args, kwargs)
        return self._next

    def removeSystemEventTrigger(self, handle):
        del self.triggers[handle]

    def shut_down(self):
        """Run the "before shutdown" triggers, as a Ctrl-C would."""
        ds = [f(*a, **kw) for (phase, event, f, a, kw) in list(self.triggers.values())
              if (phase, event) == ("before", "shutdown")]
        self.triggers.clear()
        return defer.DeferredList([d for d in ds if isinstance(d, defer.Deferred)])


@implementer(IInputHelper)
class FakeHelper:
    """The code-entry helper (Client API, "Code Management"), recording
    what it is told."""

    def __init__(self, log, nameplates=("1", "12", "13", "24", "170"), words=None):
        self.log = log
        self.nameplates = nameplates
        self.words = words or ["purple-", "pumpkin-", "sausages"]
        self.wordlist_d = defer.succeed(None)

    def refresh_nameplates(self):
        self.log.append(("h.refresh_nameplates",))

    def get_nameplate_completions(self, prefix):
        self.log.append(("h.get_nameplate_completions", prefix))
        return {n + "-" for n in self.nameplates if n.startswith(prefix)}

    def choose_nameplate(self, nameplate):
        self.log.append(("h.choose_nameplate", nameplate))

    def when_wordlist_is_available(self):
        self.log.append(("h.when_wordlist_is_available",))
        return self.wordlist_d

    def get_word_completions(self, prefix):
        self.log.append(("h.get_word_completions", prefix))
        return {w for w in self.words if w.startswith(prefix)}

    def choose_words(self, words):
        self.log.append(("h.choose_words", words))


@implementer(IDeferredWormhole)
class FakeWormhole:
    """Records every call in ``log``; the test fires events with
    ``got_key``, ``got_verifier``, ``deliver``, ``fail``."""

    def __init__(self, log, appid, relay_url, reactor, on_status_update,
                 allocated="4-purple-sausages"):
        self.log = log
        self.appid = appid
        self.relay_url = relay_url
        self.on_status_update = on_status_update
        self._allocated = allocated
        self._code = None
        self._code_ds = []
        self._key_ds = []
        self._verifier_ds = []
        self._message_ds = []
        self._inbound = []
        self._error = None
        self.close_result = "happy"
        self.helper = FakeHelper(log)

    # -- helpers for tests ---------------------------------------------------
    def _fire(self, ds, value):
        while ds:
            ds.pop(0).callback(value)

    def got_key(self):
        self._key = b"k" * 32
        self._fire(self._key_ds, self._key)
        if self.on_status_update:
            self.on_status_update(WormholeStatus(code=ConsumedCode()))

    def got_verifier(self, verifier=b"\x01\xab" * 16):
        self._verifier = verifier
        self._fire(self._verifier_ds, verifier)

    def deliver(self, body):
        if self._message_ds:
            self._message_ds.pop(0).callback(body)
        else:
            self._inbound.append(body)

    def fail(self, exc):
        """Every pending and future get_* errbacks (the wormhole broke)."""
        self._error = exc
        for ds in (self._code_ds, self._key_ds, self._verifier_ds, self._message_ds):
            while ds:
                ds.pop(0).errback(exc)

    def _when(self, ds, attr):
        if self._error is not None:
            return defer.fail(self._error)
        if getattr(self, attr, None) is not None:
            return defer.succeed(getattr(self, attr))
        d = defer.Deferred()
        ds.append(d)
        return d

    # -- IDeferredWormhole ----------------------------------------------------
    def get_welcome(self):
        return defer.succeed({})

    def allocate_code(self, code_length=2, length=None):
        self.log.append(("w.allocate_code", code_length))
        self._set(self._allocated)

    def set_code(self, code):
        self.log.append(("w.set_code", code))
        if not code.partition("-")[0].isdigit():
            # as the real set_code does (Client API, "Code Management"),
            # synchronously
            raise KeyFormatError(f"Code '{code}' needs a numeric nameplate")
        self._set(code)

    def _set(self, code):
        self._code = code
        self._fire(self._code_ds, code)

    def input_code(self):
        self.log.append(("w.input_code",))
        return self.helper

    def get_code(self):
        return self._when(self._code_ds, "_code")

    def get_unverified_key(self):
        return self._when(self._key_ds, "_key")

    def get_verifier(self):
        return self._when(self._verifier_ds, "_verifier")

    def get_versions(self):
        return defer.succeed({})

    def derive_key(self, purpose, length):
        return b"\x00" * length

    def _nat_mapping(self):
        return defer.succeed(None)  # no NAT observer: nothing to punch

    def send_message(self, msg):
        self.log.append(("w.send_message", msg))

    def get_message(self):
        if self._inbound:
            return defer.succeed(self._inbound.pop(0))
        if self._error is not None:
            return defer.fail(self._error)
        d = defer.Deferred()
        self._message_ds.append(d)
        return d

    def close(self):
        self.log.append(("w.close",))
        if isinstance(self.close_result, Exception):
            return defer.fail(self.close_result)
        return defer.succeed(self.close_result)

    def debug_set_trace(self, client_name, which="B N M S O K R RC L C I A T",
                        file=sys.stderr):
        self.log.append(("w.debug_set_trace", client_name, which, file))

    def dilate(self, *args, **kwargs):
        raise NotImplementedError


class FakeFactory:
    """Stands in for ``wormhole.create``; keeps the wormholes it made."""

    def __init__(self, **fake_kwargs):
        self.log = []
        self.wormholes = []
        self.create_kwargs = []
        self._fake_kwargs = fake_kwargs

    def create(self, appid, relay_url, reactor,
               versions={},  # noqa: B006  wormhole.create's signature; never mutated
               delegate=None, journal=None,
               tor=None, timing=None, stderr=sys.stderr, dilation=False,
               on_status_update=None, *, welcome_handler=None, proxy=None):
        self.create_kwargs.append(dict(appid=appid, relay_url=relay_url, versions=versions,
                                       timing=timing, stderr=stderr))
        w = FakeWormhole(self.log, appid, relay_url, reactor, on_status_update,
                         **self._fake_kwargs)
        self.wormholes.append(w)
        return w


@implementer(IRecordPipe, IConsumer)
class FakePipe:
    """A Transit record pipe in memory: what we send is kept in ``sent``;
    ``feed(records)`` plays the peer."""

    def __init__(self, log):
        self.log = log
        self.sent = []
        self._inbound = []
        self._waiting = []
        self._consumer = None
        self.closed = False

    def describe(self):
        return "->tcp:fake:1"

    def send_record(self, record):
        self.sent.append(bytes(record))

    def send_records(self, records):
        for record in records:
            self.send_record(record)

    def write(self, data):
        self.send_record(data)

    def registerProducer(self, producer, streaming):
        # a pull producer (basic.FileSender): ask until it unregisters
        self._producer = producer
        while self._producer is not None:
            producer.resumeProducing()

    def unregisterProducer(self):
        self._producer = None

    def receive_record(self):
        if self._inbound:
            return defer.succeed(self._inbound.pop(0))
        d = defer.Deferred()
        self._waiting.append(d)
        return d

    def connectConsumer(self, consumer, expected=None):
        self._consumer = (consumer, expected, 0, defer.Deferred())
        return self._consumer[3]

    def feed(self, *records):
        for r in records:
            if self._consumer is not None:
                consumer, expected, got, d = self._consumer
                consumer.write(r)
                got += len(r)
                self._consumer = (consumer, expected, got, d)
                if got >= expected:
                    self._consumer = None
                    d.callback(consumer)
            elif self._waiting:
                self._waiting.pop(0).callback(r)
            else:
                self._inbound.append(r)

    def lose(self):
        """The connection broke."""
        if self._consumer is not None:
            consumer, expected, got, d = self._consumer
            self._consumer = None
            d.errback(ConnectionClosed(f"closed after {got} of {expected} bytes"))
        for d in self._waiting:
            d.errback(ConnectionClosed("closed"))
        self._waiting = []

    def close(self):
        self.log.append(("pipe.close",))
        self.closed = True
        return defer.succeed(None)


class FakeTransit:
    """TransitSender/TransitReceiver (Transit protocol, "API") in memory;
    records the calls in ``log``; ``connect()`` yields ``pipe``."""

    def __init__(self, log, relay, no_listen=False, reactor=None, timing=None):
        self.log = log
        self.log.append(("transit.new", relay, no_listen))
        self.pipe = FakePipe(log)
        self.connect_d = None

    def get_connection_abilities(self):
        return [{"type": "direct-tcp-v1"}, {"type": "relay-v1"}]

    def get_connection_hints(self):
        return defer.succeed([{"type": "direct-tcp-v1", "hostname": "127.0.0.1",
                               "port": 1234, "priority": 0.0}])

    def add_connection_hints(self, hints):
        self.log.append(("transit.add_connection_hints", hints))

    def set_transit_key(self, key):
        self.log.append(("transit.set_transit_key", key))

    def set_nat_mapping(self, mapping_d):
        pass  # the wormhole's mapping is None here: no punching to record

    def connect(self):
        self.log.append(("transit.connect",))
        return defer.succeed(self.pipe)


class FakeTransits:
    """Stands in for the Transit classes; keeps what it made."""

    def __init__(self, log):
        self.log = log
        self.made = []

    def __call__(self, relay, no_listen=False, reactor=None, timing=None):
        t = FakeTransit(self.log, relay, no_listen, reactor, timing)
        self.made.append(t)
        return t
