"""``w.serialize()``, ``wormhole.from_serialized()`` and the journal's
discipline across the library (Client API, "Serialization", and Journalled mode), on the
in-memory Mailbox server of tests/client/fakes.py and a Clock."""

import io
import json

from twisted.internet.defer import Deferred
from twisted.internet.task import Clock
from twisted.trial import unittest

import wormhole
from wormhole import _interfaces
from wormhole._from_serialized import FORMAT, VERSION
from wormhole._rendezvous import RendezvousConnector
from wormhole._status import StatusTracker
from wormhole.errors import LonelyError, ServerError
from wormhole.journal import Journal
from wormhole.timing import DebugTiming

from ...client.common import make_fake
from ...client.fakes import FakeNetwork, FakeServer
from ..client._support import Delegate

APPID = "example.com/journal"
URL = "ws://127.0.0.1:1/v1"
CODE = "3-cosmic-kiwi"


class Recorder(Delegate):
    """A delegate that notes whether each event came inside a transaction
    (it queues an outbound call, which only works inside one)."""

    def __init__(self, journal=None):
        super().__init__()
        self.journal = journal

    def wormhole_got_message(self, msg):
        super().wormhole_got_message(msg)
        if self.journal is not None:
            self.journal.queue_outbound(self.events.append, ("released", msg))


class Base(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.server = FakeServer(self.clock)

    def options(self):
        return dict(stderr=io.StringIO(), _endpoint_factory=self.server.endpoint_factory,
                    _eventual_queue=None)

    def create(self, **kwargs):
        return wormhole.create(APPID, URL, self.clock, **dict(self.options(), **kwargs))

    def restore(self, data, delegate, **kwargs):
        return wormhole.from_serialized(json.loads(json.dumps(data)), self.clock, delegate,
                                        **dict(self.options(), **kwargs))

    def pump(self, rounds=20):
        for _ in range(rounds):
            self.server.pump()
            self.clock.advance(0.1)


class RefusalTests(Base):
    def test_deferred_mode_refused(self):
        """A Deferred-mode wormhole cannot be serialized; the error says
        which mode can."""
        w = self.create()
        e = self.assertRaises(wormhole.SerializationError, w.serialize)
        self.assertIn("delegate", str(e))

    def test_dilated_refused(self):
        """A wormhole created with dilation=True cannot be serialized."""
        w = self.create(delegate=Delegate(), dilation=True)
        e = self.assertRaises(wormhole.SerializationError, w.serialize)
        self.assertIn("dilation", str(e))

    def test_unknown_version_refused(self):
        """Data of another format version is refused, naming both."""
        data = self.create(delegate=Delegate()).serialize()
        data["version"] = VERSION + 1
        e = self.assertRaises(wormhole.SerializationError, self.restore, data, Delegate())
        self.assertIn(f"version {VERSION + 1}", str(e))
        self.assertIn(f"version {VERSION} only", str(e))

    def test_not_a_wormhole_refused(self):
        """Something that is not a serialized wormhole is refused."""
        for data in ({}, {"format": "other", "version": 1}, [], "text"):
            self.assertRaises(wormhole.SerializationError, self.restore, data, Delegate())

    def test_malformed_machine_refused(self):
        """A machine record with an unknown state is refused, naming it."""
        data = self.create(delegate=Delegate()).serialize()
        data["machines"]["mailbox"]["state"] = "S9Z"
        e = self.assertRaises(wormhole.SerializationError, self.restore, data, Delegate())
        self.assertIn("mailbox", str(e))
        del data["machines"]["order"]
        e = self.assertRaises(wormhole.SerializationError, self.restore, data, Delegate())
        self.assertIn("order", str(e))

    def test_journal_with_dilation_refused(self):
        """create() refuses a journal for a dilated wormhole at once
        (no checkpoint could hold it)."""
        e = self.assertRaises(ValueError, self.create, delegate=Delegate(),
                              journal=Journal(lambda: None), dilation=True)
        self.assertIn("non-dilated", str(e))

    def test_needs_delegate(self):
        """from_serialized() without a delegate is refused."""
        data = self.create(delegate=Delegate()).serialize()
        self.assertRaises(wormhole.SerializationError, self.restore, data, None)

    def test_input_code_refused_when_journalled(self):
        """input_code() cannot be journalled: refused at once, saying to
        use set_code()."""
        j = Journal(lambda: None)
        w = self.create(delegate=Delegate(), journal=j)
        e = self.assertRaises(wormhole.SerializationError, w.input_code)
        self.assertIn("set_code()", str(e))

    def test_send_outside_transaction_refused(self):
        """In journalled mode, a call that sends outside journal.process()
        raises a RuntimeError that says what to do."""
        j = Journal(lambda: None)
        w = self.create(delegate=Delegate(), journal=j)
        self.pump()  # connected: set_code() sends a claim at once
        e = self.assertRaises(RuntimeError, w.set_code, CODE)
        self.assertIn("journal.process()", str(e))


class RoundTripTests(Base):
    def pair(self, journal_b=None):
        self.da, self.db = Delegate(), Recorder(journal_b)
        wa = self.create(delegate=self.da)
        wb = self.create(delegate=self.db, journal=journal_b)
        return wa, wb

    def test_format(self):
        """The envelope: format, version, relay URL, every machine's
        record; all of it JSON."""
        w = self.create(delegate=Delegate())
        data = w.serialize()
        self.assertEqual(json.loads(json.dumps(data)), data)
        self.assertEqual((data["format"], data["version"], data["relay_url"]),
                         (FORMAT, VERSION, URL))
        self.assertEqual(sorted(data["machines"]), sorted([
            "boss", "nameplate", "mailbox", "order", "key", "receive", "send", "code",
            "allocator", "input", "lister", "terminator", "rendezvous"]))
        self.assertEqual(data["machines"]["rendezvous"], {"want": "connect"})

    def test_restore_at_every_step(self):
        """Serialized after each turn of an exchange, restored while the
        original is dropped: the restored wormhole finishes the exchange,
        every message delivered once, and serializes as the original did."""
        for cut in range(1, 14):
            self.setUp()
            wa, wb = self.pair()
            wa.set_code(CODE)
            wb.set_code(CODE)
            wa.send_message(b"a0")
            wb.send_message(b"b0")
            self.pump(cut)
            data = wb.serialize()
            before = [e for e in self.db.events if e[0] == "message"]
            # the original process dies: its connection drops, it never
            # reconnects, and its delegate hears nothing more
            wb._boss._RC._endpoint_factory = lambda *a: _Nowhere()
            self.server.drop_all()
            self.db.events = []
            d2 = Delegate()
            wb2 = self.restore(data, d2)
            self.assertEqual(json.loads(json.dumps(wb2.serialize())), data)
            self.pump()
            got = before + [e for e in d2.events if e[0] == "message"]
            self.assertEqual(got, [("message", b"a0")], cut)
            wb2.send_message(b"b1")
            self.pump()
            self.assertEqual([e for e in self.da.events if e[0] == "message"],
                             [("message", b"b0"), ("message", b"b1")], cut)
            wa.close()
            wb2.close()
            self.pump()
            self.assertEqual(d2.events[-1], ("closed", "happy"))

    def test_restore_while_closing(self):
        """Serialized while closing (close sent, not answered): the
        restored wormhole sends close again and tells the delegate."""
        wa, wb = self.pair()
        wa.set_code(CODE)
        wb.set_code(CODE)
        self.pump()
        self.server.up = False
        self.server.drop_all()
        wb.close()
        data = wb.serialize()
        self.assertEqual(data["machines"]["boss"]["result"], "happy")
        wb._boss._RC._endpoint_factory = lambda *a: _Nowhere()
        self.server.up = True
        d2 = Delegate()
        self.restore(data, d2)
        self.pump(40)
        self.assertEqual(d2.events, [("closed", "happy")])

    def test_close_before_resuming(self):
        """Closed before its first turn (before it reconnects), a restored
        wormhole closes without connecting."""
        wa, wb = self.pair()
        wb.set_code(CODE)
        self.pump()
        data = wb.serialize()
        wb._boss._RC._endpoint_factory = lambda *a: _Nowhere()
        self.server.drop_all()
        d2 = Delegate()
        wb2 = self.restore(data, d2)
        wb2.close()
        self.pump()
        [(event, result)] = d2.events
        self.assertEqual(event, "closed")
        self.assertIsInstance(result, LonelyError)
        self.assertEqual(len(self.server.conns), 1)  # wa's: the restored one never connected

    def test_errors_survive(self):
        """The error a wormhole is closing with comes back as itself."""
        from wormhole._serialization import decode_result, encode_result
        for error in (LonelyError(), ServerError("crowded", {"type": "claim"})):
            back = decode_result(json.loads(json.dumps(encode_result(error))))
            self.assertEqual((type(back), str(back)), (type(error), str(error)))


class _Nowhere:
    def connect(self, factory):
        return Deferred()


class JournalDisciplineTests(Base):
    def test_events_inside_the_transaction(self):
        """With a journal, the delegate hears of a message inside the
        transaction of the server message that carried it: what it queues
        is released after that transaction's checkpoint."""
        order = []
        j = Journal(lambda: order.append("checkpoint"))
        da, db = Delegate(), Recorder(j)
        wa = self.create(delegate=da)
        wb = self.create(delegate=db, journal=j)
        wa.set_code(CODE)
        with j.process():
            wb.set_code(CODE)
            # synchronous in journalled mode (Journalled mode, "Wormhole Support")
            self.assertIn(("code", CODE), db.events)
        self.pump()
        order.clear()
        db.events = []
        db.events = order  # one list: see where the checkpoint falls
        wa.send_message(b"hello")
        self.pump()
        i = order.index(("message", b"hello"))
        self.assertEqual(order[i + 1:i + 3], ["checkpoint", ("released", b"hello")])

    def test_stamp_minted_off_the_reactor(self):
        """The hashcash stamp arrives outside any server message: its
        submit-permissions, bind and re-sends are a transaction of their
        own, released only after the checkpoint."""
        order = []
        j = Journal(lambda: order.append("checkpoint"))
        pending = []

        def mint_f(resource, bits):
            d = Deferred()
            pending.append(d)
            return d
        net = FakeNetwork()
        rc = RendezvousConnector(URL, APPID, "side1", self.clock, j, None, DebugTiming(),
                                 ("python", "0"), StatusTracker(None, None),
                                 endpoint_factory=net.endpoint_factory, mint_f=mint_f)
        events = []
        rc.wire(*(make_fake(iface, p, events) for iface, p in (
            (_interfaces.IBoss, "b"), (_interfaces.INameplate, "n"),
            (_interfaces.IMailbox, "m"), (_interfaces.IAllocator, "a"),
            (_interfaces.ILister, "l"), (_interfaces.ITerminator, "t"))))
        rc.start()
        ws = net.accept(rc, welcome={"permission-required": {
            "hashcash": {"bits": 1, "resource": "r"}}})
        real_send = ws.sendMessage
        ws.sendMessage = lambda payload, binary=False: (order.append("sent"),
                                                        real_send(payload, binary))
        order.clear()
        pending.pop().callback("STAMP")  # no RuntimeError: it is journalled
        self.assertEqual(order, ["checkpoint", "sent", "sent"])
        self.assertEqual(ws.types(), ["submit-permissions", "bind"])

    def test_nested_process_joins(self):
        """A process() inside another joins it: one checkpoint, after
        the outer one, then everything both queued."""
        order = []
        j = Journal(lambda: order.append("checkpoint"))
        with j.process():
            j.queue_outbound(order.append, "outer")
            with j.process():
                j.queue_outbound(order.append, "inner")
            order.append("inner done")
        self.assertEqual(order, ["inner done", "checkpoint", "outer", "inner"])

    def test_failed_transaction_releases_nothing(self):
        """A transaction that raises (or whose checkpoint fails) releases
        nothing it queued, and the next one starts clean."""
        order = []
        j = Journal(lambda: order.append("checkpoint"))
        with self.assertRaises(ValueError):
            with j.process():
                j.queue_outbound(order.append, "lost")
                raise ValueError("app failed")
        with j.process():
            j.queue_outbound(order.append, "sent")
        self.assertEqual(order, ["checkpoint", "sent"])
