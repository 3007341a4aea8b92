"""Unit tests for the Mailbox machine (Mailbox server protocol, "Mailboxes" and "Persistence")."""

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces, errors
from wormhole._mailbox import MAX_PROCESSED, Mailbox

from ...client.common import make_fake


class MailboxTests(unittest.TestCase):
    def build(self, **kwargs):
        events = []
        m = Mailbox("side1", **kwargs)
        n = make_fake(_interfaces.INameplate, "n", events)
        rc = make_fake(_interfaces.IRendezvousConnector, "rc", events)
        o = make_fake(_interfaces.IOrder, "o", events)
        t = make_fake(_interfaces.ITerminator, "t", events)
        b = make_fake(_interfaces.IBoss, "b", events)
        m.wire(n, rc, o, t, b)
        return m, events

    def test_provides_interface(self):
        """The Mailbox machine provides IMailbox."""
        m, _ = self.build()
        verifyObject(_interfaces.IMailbox, m)

    def test_queue_then_open(self):
        """Messages added before the mailbox is known go out after open."""
        m, events = self.build()
        m.add_message("pake", b"p")
        m.connected()
        self.assertEqual(events, [])
        m.got_mailbox("mb1")
        self.assertEqual(events, [("rc.tx_open", "mb1"), ("rc.tx_add", "pake", b"p")])

    def test_mailbox_before_connection(self):
        """A mailbox learned while disconnected is opened on connection."""
        m, events = self.build()
        m.got_mailbox("mb1")
        m.add_message("pake", b"p")
        self.assertEqual(events, [])
        m.connected()
        self.assertEqual(events, [("rc.tx_open", "mb1"), ("rc.tx_add", "pake", b"p")])

    def test_echo_and_peer_messages(self):
        """Our echo dequeues; the peer's first message releases the
        nameplate and is delivered; repeats are dropped."""
        m, events = self.build()
        m.connected()
        m.got_mailbox("mb1")
        m.add_message("pake", b"p")
        del events[:]
        m.rx_message("side1", "pake", b"p")
        self.assertEqual(events, [])
        m.rx_message("side2", "pake", b"q")
        self.assertEqual(events, [("n.release",), ("o.got_message", "side2", "pake", b"q")])
        del events[:]
        m.rx_message("side2", "pake", b"q")
        self.assertEqual(events, [])
        m.rx_message("side2", "version", b"v")
        self.assertEqual(events, [("n.release",), ("o.got_message", "side2", "version", b"v")])

    def test_reconnect_resends_unechoed(self):
        """After reconnection, open is re-sent and every message not yet
        echoed is added again, but not the echoed ones."""
        m, events = self.build()
        m.connected()
        m.got_mailbox("mb1")
        m.add_message("pake", b"p")
        m.add_message("version", b"v")
        m.rx_message("side1", "pake", b"p")
        m.lost()
        m.add_message("0", b"zero")
        del events[:]
        m.connected()
        self.assertEqual(events, [("rc.tx_open", "mb1"),
                                  ("rc.tx_add", "version", b"v"),
                                  ("rc.tx_add", "0", b"zero")])

    def test_close(self):
        """close(mood) sends close with the mood; closed reports done."""
        m, events = self.build()
        m.connected()
        m.got_mailbox("mb1")
        del events[:]
        m.close("happy")
        self.assertEqual(events, [("rc.tx_close", "mb1", "happy")])
        del events[:]
        m.rx_message("side2", "0", b"late")
        m.add_message("1", b"late")
        self.assertEqual(events, [])
        m.rx_closed()
        self.assertEqual(events, [("t.mailbox_done",)])

    def test_close_while_disconnected(self):
        """close() while the open mailbox is disconnected is sent with the
        same mood on reconnection."""
        m, events = self.build()
        m.connected()
        m.got_mailbox("mb1")
        m.lost()
        del events[:]
        m.close("scary")
        self.assertEqual(events, [])
        m.connected()
        self.assertEqual(events, [("rc.tx_close", "mb1", "scary")])
        m.lost()
        m.connected()
        self.assertEqual(events[-1], ("rc.tx_close", "mb1", "scary"))
        m.rx_closed()
        self.assertEqual(events[-1], ("t.mailbox_done",))

    def test_close_reconnecting_readds_unechoed(self):
        """A message added just before close() and not yet echoed when the
        connection dropped is added again (after open) before the close."""
        m, events = self.build()
        m.connected()
        m.got_mailbox("mb1")
        m.add_message("0", b"last")
        m.close("happy")
        m.lost()
        del events[:]
        m.connected()
        self.assertEqual(events, [("rc.tx_open", "mb1"), ("rc.tx_add", "0", b"last"),
                                  ("rc.tx_close", "mb1", "happy")])
        m.rx_message("side1", "0", b"last")  # the echo
        m.lost()
        del events[:]
        m.connected()
        self.assertEqual(events, [("rc.tx_close", "mb1", "happy")])

    def test_close_without_mailbox(self):
        """close() with no mailbox is done immediately."""
        m, events = self.build()
        m.close("lonely")
        self.assertEqual(events, [("t.mailbox_done",)])
        m2, events2 = self.build()
        m2.got_mailbox("mb1")
        m2.close("lonely")
        self.assertEqual(events2, [("t.mailbox_done",)])

    def test_phases_remembered_bounded(self):
        """docs/security.md, "Mailbox client": the record of the peer's
        phases (kept to drop repeats) holds at most ``max_processed``
        entries; one new phase more tells the Boss PhaseOverflow (the exact
        text) and is not delivered. The Boss then closes us; what comes
        after is dropped."""
        self.assertEqual(MAX_PROCESSED, 100_000)
        m, events = self.build(max_processed=3)
        m.connected()
        m.got_mailbox("mb1")
        for phase in ["pake", "version", "0"]:
            m.rx_message("side2", phase, b"x")
        del events[:]
        m.rx_message("side2", "0", b"x")  # a repeat is still only dropped
        self.assertEqual(events, [])
        m.rx_message("side2", "dilate-7" + "\x1b" * 100, b"x")
        [(name, err)] = events
        self.assertEqual(name, "b.error")
        self.assertIsInstance(err, errors.PhaseOverflow)
        self.assertIsInstance(err, errors.ProtocolError)
        self.assertEqual(str(err), (
            "the peer sent more than 3 distinct phases (the last was "
            "'dilate-7\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b"
            "\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b"
            "\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b'); the limit is 3 (docs/security.md)"))
        self.assertEqual(len(m._processed), 3)
        m.close("errory")  # what the Boss does
        del events[:]
        m.rx_message("side2", "9", b"x")
        self.assertEqual(events, [])
        self.assertEqual(len(m._processed), 3)
