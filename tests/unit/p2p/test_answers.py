"""Our answers to the peer's requests, in arrival order (P2P-D5.2):
p2pmesh._answers, with no link."""

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase

from p2pmesh._answers import OrderedAnswers
from p2pmesh._config import ACK, CUSTOM, NACK, PING, STORE


class Answers(SynchronousTestCase):
    def setUp(self):
        self.sent, self.overflows = [], []
        self.answers = OrderedAnswers(lambda op, value: self.sent.append((op, value)),
                                      2, self.overflows.append)

    def test_a_late_answer_holds_back_the_later_ones(self):
        """An answer ready before an earlier one waits for it; then both go,
        in the order the requests came."""
        slow = defer.Deferred()
        self.answers.answer_later(slow)
        self.answers.answer_later((ACK, [STORE]))
        self.assertEqual(self.sent, [])
        slow.callback((ACK, [PING]))
        self.assertEqual(self.sent, [(ACK, [PING]), (ACK, [STORE])])

    def test_a_failing_handler_answers_nack(self):
        """A Deferred that fails becomes NACK [CUSTOM, "failed"] (the error
        is logged)."""
        d = defer.Deferred()
        self.answers.answer_later(d)
        d.errback(RuntimeError("handler broke"))
        self.assertEqual(self.sent, [(NACK, [CUSTOM, "failed"])])
        self.assertEqual(len(self.flushLoggedErrors(RuntimeError)), 1)

    def test_too_many_waiting_is_an_overflow(self):
        """With max_pending slots all waiting, one more request is an
        overflow (the connection closes the link)."""
        self.answers.slot()
        self.answers.slot()
        self.assertEqual(self.overflows, [])
        self.answers.slot()
        self.assertEqual(self.overflows, ["too many requests awaiting their answer"])
