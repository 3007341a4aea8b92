"""The library API of ``wormhole.transfer`` (docs/transfer.md) between two
real wormholes on an in-memory Mailbox server (``wormhole.testing``),
with a ``task.Clock``: texts, the verifier, and offers the receiving
policy refuses before any Transit connection (so none is made: a
recording stand-in gives the hints). The bytes over Transit are tested
against the reference in tests/files/test_library_api.py."""
import os

from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.trial import unittest

from wormhole import _landing, transfer
from wormhole.testing import memory_server

APPID = "example.com/transfer-library"


class _NoTransit:
    """What ``send_file`` asks a Transit before the answer: no hints. It
    must never be asked to connect (the offer is refused first)."""

    def __init__(self):
        self.hints = []

    def get_connection_abilities(self):
        return [{"type": "direct-tcp-v1"}]

    def get_connection_hints(self):
        return defer.succeed([])

    def add_connection_hints(self, hints):
        self.hints.extend(hints)

    def set_nat_mapping(self, mapping_d):
        """(no punching in memory: the wormhole has no NAT observer)"""

    def set_transit_key(self, key):
        raise AssertionError("a refused offer must not reach Transit")


class API(unittest.TestCase):

    def setUp(self):
        self.clock = Clock()
        self.server = memory_server(self.clock)
        self.sender = self.server.create(APPID, self.server.url, self.clock)
        self.receiver = self.server.create(APPID, self.server.url, self.clock)
        self.sender.allocate_code()
        self.receiver.set_code(self.result(self.sender.get_code()))
        self.folder = os.path.abspath(self.mktemp())
        os.makedirs(self.folder)

    def tearDown(self):
        for w in (self.sender, self.receiver):
            d = w.close()
            self.server.flush()
            d.addErrback(lambda f: None)

    def result(self, d):
        self.server.flush()
        return self.successResultOf(d)

    def failure(self, d, *kinds):
        self.server.flush()
        return self.failureResultOf(d, *kinds).value

    def offer_file(self, name="report.pdf", size=1000, policy=None):
        """``send_file`` of an Outgoing named ``name`` (nothing is read: it
        is refused), and ``receive`` under ``policy``; both Deferreds."""
        path = self.mktemp()
        with open(path, "wb") as f:
            f.write(b"x" * size)
        outgoing = transfer.prepare(path)
        outgoing.offer["file"]["filename"] = name
        sending = transfer.send_file(self.clock, self.sender, APPID, outgoing,
                                     transit=_NoTransit())
        receiving = transfer.receive(self.clock, self.receiver, APPID,
                                     policy or transfer.ReceivePolicy(folder=self.folder))
        return sending, receiving

    def test_text(self):
        """``send_text`` fires once acknowledged; ``receive`` returns it."""
        sending = transfer.send_text(self.sender, "héllo ✓")
        got = self.result(transfer.receive(self.clock, self.receiver, APPID))
        self.assertIsNone(self.result(sending))
        self.assertEqual((got.kind, got.text, got.path), ("text", "héllo ✓", None))

    def test_verifier_rejected(self):
        """``verify`` answering False: nothing is offered, the sender fails
        with Declined and so does the receiver (exit status 3 in the CLI)."""
        seen = []

        def verify(verifier):
            seen.append(verifier)
            return defer.succeed(False)
        sending = transfer.send_text(self.sender, "secret", verify=verify)
        receiving = transfer.receive(self.clock, self.receiver, APPID)
        self.assertIsInstance(self.failure(sending, transfer.Declined), transfer.Declined)
        e = self.failure(receiving, transfer.Declined)
        self.assertIn("the sender declined", str(e))
        self.assertEqual(seen, [self.result(self.receiver.get_verifier())])

    def test_accept_sees_the_checked_offer(self):
        """``accept`` gets the Offer the rules passed; False refuses it:
        DeclinedOffer here, Declined ("transfer rejected") at the sender."""
        offers = []

        def accept(offer):
            offers.append(offer)
            return defer.succeed(False)
        sending, receiving = self.offer_file(
            policy=transfer.ReceivePolicy(folder=self.folder, accept=accept))
        e = self.failure(receiving, transfer.DeclinedOffer)
        self.assertEqual(str(e), "transfer rejected")
        self.assertIn("the receiver declined: transfer rejected",
                      str(self.failure(sending, transfer.Declined)))
        self.assertEqual(offers, [transfer.Offer("file", "report.pdf", 1000, 1000, 1,
                                                 os.path.join(self.folder, "report.pdf"))])

    def test_max_bytes(self):
        """An offer larger than ``max_bytes`` is refused before ``accept``."""
        policy = transfer.ReceivePolicy(folder=self.folder, max_bytes=999,
                                        accept=lambda offer: self.fail("asked"))
        sending, receiving = self.offer_file(size=1000, policy=policy)
        self.assertIn("more than the 999 accepted",
                      str(self.failure(receiving, transfer.DeclinedOffer)))
        self.failure(sending, transfer.Declined)

    def test_existing_target(self):
        """Nothing existing is replaced: a file of that name refuses it."""
        with open(os.path.join(self.folder, "report.pdf"), "wb") as f:
            f.write(b"mine")
        sending, receiving = self.offer_file()
        self.assertIn("refusing to overwrite existing 'report.pdf'",
                      str(self.failure(receiving, transfer.DeclinedOffer)))
        self.failure(sending, transfer.Declined)
        with open(os.path.join(self.folder, "report.pdf"), "rb") as f:
            self.assertEqual(f.read(), b"mine")

    def test_only_text(self):
        """``only_text`` refuses files, with its own words when a string."""
        policy = transfer.ReceivePolicy(folder=self.folder, only_text="texts only here")
        sending, receiving = self.offer_file(policy=policy)
        self.assertEqual(str(self.failure(receiving, transfer.DeclinedOffer)),
                         "the sender offered a file, and texts only here")
        self.failure(sending, transfer.Declined)

    def test_hostile_name_is_a_bad_offer(self):
        """A name the receiving rules refuse (a bidi override) is a
        BadOffer, a failure rather than a decision; the sender hears the
        same refusal; nothing is written."""
        sending, receiving = self.offer_file(name="invoice\u202egnp.exe")
        e = self.failure(receiving, _landing.BadOffer)
        self.assertNotIsInstance(e, transfer.DeclinedOffer)
        self.assertIn("control character", str(e))
        self.failure(sending, transfer.Declined)
        self.assertEqual(os.listdir(self.folder), [])
