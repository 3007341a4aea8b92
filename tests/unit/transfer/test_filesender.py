"""The file/directory sender machine (File-transfer protocol, "Sender"),
driven with recording callables."""
import json

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole.errors import TransferError
from wormhole.transfer import IOfferSender, file_sender

TRANSIT = {"abilities-v1": [{"type": "relay-v1"}], "hints-v1": []}
OFFER = {"file": {"filename": "a", "filesize": 3}}


def j(d):
    return json.dumps(d).encode("utf-8")


class FileSenderMachine(unittest.TestCase):

    def setUp(self):
        self.events = []
        self.s = file_sender(lambda body: self.events.append(("send", json.loads(body))),
                            lambda hints: self.events.append(("hints", hints)),
                            lambda error: self.events.append(("finished", error)))

    def test_interface(self):
        """The file sender provides IOfferSender."""
        verifyObject(IOfferSender, self.s)

    def test_transit_then_offer_then_ack(self):
        """transit first, then the offer; the peer's hints are passed on;
        file_ack finishes without an error."""
        self.s.send_offer(OFFER, TRANSIT)
        self.s.got_message(j({"transit": {"hints-v1": [{"type": "x"}]}}))
        self.s.got_message(j({"answer": {"file_ack": "ok"}}))
        self.assertEqual(self.events, [("send", {"transit": TRANSIT}),
                                       ("send", {"offer": OFFER}),
                                       ("hints", [{"type": "x"}]),
                                       ("finished", None)])

    def test_transit_and_ack_together(self):
        """Keys may come in one message: the hints first, then the ack."""
        self.s.send_offer(OFFER, TRANSIT)
        self.s.got_message(j({"transit": {"hints-v1": []}, "answer": {"file_ack": "ok"}}))
        self.assertEqual(self.events[2:], [("hints", []), ("finished", None)])

    def test_error_wins(self):
        """error ends it badly, before any other key of the message."""
        self.s.send_offer(OFFER, TRANSIT)
        self.s.got_message(j({"error": "transfer rejected", "answer": {"file_ack": "ok"}}))
        [(kind, error)] = self.events[2:]
        self.assertIsInstance(error, TransferError)
        self.assertIn("transfer rejected", str(error))

    def test_message_ack_is_not_file_ack(self):
        """A text ack to a file offer is a refusal, not success."""
        self.s.send_offer(OFFER, TRANSIT)
        self.s.got_message(j({"answer": {"message_ack": "ok"}}))
        self.assertIsInstance(self.events[-1][1], TransferError)

    def test_garbage_and_ignored(self):
        """Unknown keys are ignored; a non-JSON message ends it badly."""
        self.s.send_offer(OFFER, TRANSIT)
        self.s.got_message(j({"foo": 1}))
        self.assertEqual(len(self.events), 2)
        self.s.got_message(b"\xff")
        self.assertIsInstance(self.events[-1][1], TransferError)

    def test_reject_verification(self):
        """A rejected verifier sends an error and no transit or offer."""
        self.s.reject_verification()
        self.assertEqual(list(self.events[0][1]), ["error"])
        self.assertIsInstance(self.events[1][1], TransferError)

    def test_nothing_after_done(self):
        """After the ack, later messages change nothing."""
        self.s.send_offer(OFFER, TRANSIT)
        self.s.got_message(j({"answer": {"file_ack": "ok"}}))
        n = len(self.events)
        self.s.got_message(j({"error": "late"}))
        self.s.got_message(j({"transit": {"hints-v1": []}}))
        self.assertEqual(len(self.events), n)
