"""The text part of the classic protocol (File-transfer protocol,
"Sender"; File-transfer protocol, "Recipient") as machines, driven with
recording callables."""
import json

from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole.errors import TransferError
from wormhole.transfer import IOfferSender, IReceiver, text_sender
from wormhole.transfer import Receiver as ReceiverMachine


def j(d):
    return json.dumps(d).encode("utf-8")


class Sender(unittest.TestCase):

    def setUp(self):
        self.events = []
        self.s = text_sender(
            lambda body: self.events.append(("send", json.loads(body))),
            lambda error: self.events.append(("finished", error)))

    def finished(self):
        return [e for e in self.events if e[0] == "finished"]

    def test_interface(self):
        """The text sender provides IOfferSender."""
        verifyObject(IOfferSender, self.s)

    def test_offer_then_ack(self):
        """The offer is {"offer": {"message": TEXT}}; message_ack "ok"
        finishes without an error."""
        self.s.send_offer({"message": "hi\nthere"})
        self.s.got_message(j({"answer": {"message_ack": "ok"}}))
        self.assertEqual(self.events, [("send", {"offer": {"message": "hi\nthere"}}),
                                       ("finished", None)])

    def test_ignores_unknown_keys_and_transit(self):
        """Messages without error/answer are ignored (File-transfer
        protocol, "Sender")."""
        self.s.send_offer({"message": "x"})
        self.s.got_message(j({"transit": {"abilities-v1": []}}))
        self.s.got_message(j({"something": 1}))
        self.assertEqual(self.finished(), [])
        self.s.got_message(j({"answer": {"message_ack": "ok"}}))
        self.assertEqual(self.finished(), [("finished", None)])

    def test_remote_error(self):
        """An error from the receiver ends the transfer with a
        TransferError naming it."""
        self.s.send_offer({"message": "x"})
        self.s.got_message(j({"error": "nope"}))
        [(_, error)] = self.finished()
        self.assertIsInstance(error, TransferError)
        self.assertIn("nope", str(error))

    def test_error_wins_over_answer(self):
        """A message with both error and answer is an error."""
        self.s.send_offer({"message": "x"})
        self.s.got_message(j({"error": "bad", "answer": {"message_ack": "ok"}}))
        [(_, error)] = self.finished()
        self.assertIsInstance(error, TransferError)

    def test_bad_answer(self):
        """An answer that is not message_ack ok is a failure."""
        self.s.send_offer({"message": "x"})
        self.s.got_message(j({"answer": {"message_ack": "not ok"}}))
        [(_, error)] = self.finished()
        self.assertIsInstance(error, TransferError)
        self.assertIn("not ok", str(error))

    def test_garbage(self):
        """A peer message that is not a JSON object fails the transfer."""
        self.s.send_offer({"message": "x"})
        self.s.got_message(b"[1, 2]")
        [(_, error)] = self.finished()
        self.assertIsInstance(error, TransferError)

    def test_messages_after_the_end_are_ignored(self):
        """The ack is the last message the sender acts on."""
        self.s.send_offer({"message": "x"})
        self.s.got_message(j({"answer": {"message_ack": "ok"}}))
        self.s.got_message(j({"error": "late"}))
        self.s.got_message(b"garbage")
        self.assertEqual(self.finished(), [("finished", None)])

    def test_reject_verification(self):
        """Rejecting the verifier tells the peer with an error message and
        fails; no offer is sent."""
        self.s.reject_verification()
        [send, (_, error)] = self.events
        self.assertEqual(list(send[1]), ["error"])
        self.assertIsInstance(error, TransferError)


class Receiver(unittest.TestCase):

    def setUp(self):
        self.events = []
        self.r = ReceiverMachine(
            lambda body: self.events.append(("send", json.loads(body))),
            lambda text: self.events.append(("display", text)),
            lambda hints: self.events.append(("hints", hints)),
            lambda kind, offer: self.events.append(("offered", kind, offer)),
            lambda error: self.events.append(("finished", error)))

    def test_interface(self):
        """The receiver provides IReceiver."""
        verifyObject(IReceiver, self.r)

    def test_text_offer(self):
        """A message offer is displayed, acknowledged with
        {"answer": {"message_ack": "ok"}}, and finishes the transfer."""
        self.r.got_message(j({"offer": {"message": "hello"}}))
        self.assertEqual(self.events, [("display", "hello"),
                                       ("send", {"answer": {"message_ack": "ok"}}),
                                       ("finished", None)])

    def test_error_before_offer_in_same_message(self):
        """error is processed before any other key (File-transfer
        protocol, "Recipient")."""
        self.r.got_message(j({"error": "boom", "offer": {"message": "x"}}))
        [(kind, error)] = self.events
        self.assertEqual(kind, "finished")
        self.assertIsInstance(error, TransferError)
        self.assertIn("boom", str(error))

    def test_ignores_other_messages(self):
        """Unknown keys are ignored until the offer; transit hints are
        passed on (a malformed transit value gives no hints)."""
        self.r.got_message(j({"transit": {"hints-v1": [{"type": "x"}]}}))
        self.r.got_message(j({"transit": 7}))
        self.r.got_message(j({"foo": 1}))
        self.assertEqual(self.events, [("hints", [{"type": "x"}]), ("hints", [])])
        self.r.got_message(j({"offer": {"message": "yo"}}))
        self.assertEqual(self.events[2], ("display", "yo"))

    def test_file_offer_accepted(self):
        """A file offer is handed over for a decision; accept() answers
        file_ack and ends the mailbox part; later messages change nothing."""
        offer = {"filename": "a", "filesize": 1}
        self.r.got_message(j({"offer": {"file": offer}}))
        self.assertEqual(self.events, [("offered", "file", offer)])
        self.r.got_message(j({"error": "late"}))
        self.r.accept()
        self.assertEqual(self.events[1:], [("send", {"answer": {"file_ack": "ok"}}),
                                           ("finished", None)])
        self.r.got_message(j({"offer": {"file": offer}}))
        self.assertEqual(len(self.events), 3)

    def test_directory_offer_declined(self):
        """A zipfile/deflated directory offer is handed over; decline()
        sends {"error": "transfer rejected"} and fails with the reason."""
        offer = {"mode": "zipfile/deflated", "dirname": "d", "zipsize": 1,
                 "numbytes": 1, "numfiles": 1}
        self.r.got_message(j({"transit": {"hints-v1": []}, "offer": {"directory": offer}}))
        self.assertEqual(self.events, [("hints", []), ("offered", "directory", offer)])
        self.r.decline(TransferError("no room"))
        self.assertEqual(self.events[2], ("send", {"error": "transfer rejected"}))
        self.assertEqual(str(self.events[3][1]), "no room")

    def test_directory_other_mode(self):
        """A directory in another mode than zipfile/deflated is unknown."""
        self.r.got_message(j({"offer": {"directory": {"mode": "tar"}}}))
        self.assertEqual(self.events[0], ("send", {"error": "unknown offer type"}))

    def test_unknown_offer(self):
        """An offer of an unknown kind gets "unknown offer type"."""
        self.r.got_message(j({"offer": {"blah": 1}}))
        self.assertEqual(self.events[0], ("send", {"error": "unknown offer type"}))
        self.assertIsInstance(self.events[1][1], TransferError)

    def test_offer_message_not_a_string(self):
        """An offer whose message is not a string is an unknown offer."""
        self.r.got_message(j({"offer": {"message": 7}}))
        self.assertEqual(self.events[0], ("send", {"error": "unknown offer type"}))

    def test_garbage(self):
        """Undecodable JSON fails the transfer without answering."""
        self.r.got_message(b"\xff\xfe")
        [(kind, error)] = self.events
        self.assertIsInstance(error, TransferError)

    def test_nothing_after_done(self):
        """After the offer, later messages change nothing."""
        self.r.got_message(j({"offer": {"message": "a"}}))
        n = len(self.events)
        self.r.got_message(j({"offer": {"message": "b"}}))
        self.r.got_message(j({"error": "x"}))
        self.assertEqual(len(self.events), n)


class PeerGaveUp(unittest.TestCase):
    def test_any_json_value(self):
        """A peer's ``{"error": ERROR}`` may carry any JSON value: a string
        of ours says "cancelled", words of a human's no are declined, and
        anything else is one escaped "gave up" line, never a crash."""
        from wormhole.errors import TransferError
        from wormhole.transfer import Declined, peer_gave_up
        self.assertEqual(str(peer_gave_up("sender", "transfer cancelled (Ctrl-C)")),
                         "the sender cancelled the transfer (Ctrl-C)")
        self.assertIsInstance(peer_gave_up("receiver", "transfer rejected"), Declined)
        for value in ({"a": 1}, [1, 2], 3, None, True):
            error = peer_gave_up("sender", value)
            self.assertIs(type(error), TransferError, value)
            self.assertTrue(str(error).startswith("the sender gave up: "), error)
