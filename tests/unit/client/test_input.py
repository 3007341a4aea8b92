"""Unit tests for the Input machine and the code-entry helper (Client API, "Code Management")."""

from twisted.internet.task import Clock
from twisted.trial import unittest
from zope.interface.verify import verifyObject

from wormhole import _interfaces, errors
from wormhole._eventual import EventualQueue
from wormhole._input import Input
from wormhole._wordlist import PGPWordList
from wormhole.timing import DebugTiming

from ...client.common import make_fake


class InputTests(unittest.TestCase):
    def build(self):
        events = []
        self.eq = EventualQueue(Clock())
        i = Input(DebugTiming(), self.eq)
        i.wire(make_fake(_interfaces.ICode, "c", events),
               make_fake(_interfaces.ILister, "l", events))
        helper = i.start()
        return i, helper, events

    def test_provides_interfaces(self):
        """Input provides IInput and its helper IInputHelper."""
        i, helper, _ = self.build()
        verifyObject(_interfaces.IInput, i)
        verifyObject(_interfaces.IInputHelper, helper)

    def test_flow(self):
        """Start lists nameplates; nameplate completion uses the list;
        choosing the nameplate claims it; words complete from the word
        list; choosing the words finishes the code."""
        i, h, events = self.build()
        self.assertEqual(events, [("l.refresh",)])
        i.got_nameplates(["1", "12", "13", "24", "170"])
        self.assertEqual(h.get_nameplate_completions("1"), {"1-", "12-", "13-", "170-"})
        h.refresh_nameplates()
        self.assertEqual(events[1:], [("l.refresh",)])
        del events[:]
        h.choose_nameplate("12")
        self.assertEqual(events, [("c.got_nameplate", "12")])
        self.assertEqual(h.get_word_completions("pr"), set())  # no word list yet
        d = h.when_wordlist_is_available()
        self.assertNoResult(d)
        i.got_wordlist(PGPWordList())
        self.eq.flush_sync()
        self.assertIsNone(self.successResultOf(d))
        comps = h.get_word_completions("opulent-pr")
        self.assertTrue(comps)
        self.assertTrue(all(c.startswith("opulent-pr") for c in comps))
        del events[:]
        h.choose_words("opulent-printer")
        self.assertEqual(events, [("c.finished_input", "12-opulent-printer")])

    def test_out_of_turn(self):
        """Each call out of turn raises the error Client API, "Code Management" names."""
        i, h, events = self.build()
        self.assertRaises(errors.MustChooseNameplateFirstError, h.get_word_completions, "a")
        self.assertRaises(errors.MustChooseNameplateFirstError, h.choose_words, "a-b")
        h.choose_nameplate("1")
        self.assertRaises(errors.AlreadyChoseNameplateError, h.choose_nameplate, "2")
        self.assertRaises(errors.AlreadyChoseNameplateError, h.refresh_nameplates)
        self.assertRaises(errors.AlreadyChoseNameplateError, h.get_nameplate_completions, "")
        h.choose_words("a-b")
        self.assertRaises(errors.AlreadyChoseWordsError, h.choose_words, "a-b")
        self.assertRaises(errors.AlreadyChoseWordsError, h.get_word_completions, "a")

    def test_bad_nameplate(self):
        """A nameplate that is not digits raises KeyFormatError, and the
        helper still accepts a good one afterwards."""
        i, h, events = self.build()
        self.assertRaises(errors.KeyFormatError, h.choose_nameplate, " 1")
        self.assertRaises(errors.KeyFormatError, h.choose_nameplate, "purple")
        h.choose_nameplate("1")
        self.assertEqual(events[-1], ("c.got_nameplate", "1"))
        self.assertRaises(errors.KeyFormatError, h.choose_words, "")
        self.assertRaises(errors.KeyFormatError, h.choose_words, " a-b")
        h.choose_words("a-b")
        self.assertEqual(events[-1], ("c.finished_input", "1-a-b"))

    def test_wordlist_before_asking(self):
        """when_wordlist_is_available after the fact fires too."""
        i, h, events = self.build()
        h.choose_nameplate("1")
        i.got_wordlist(PGPWordList())
        d = h.when_wordlist_is_available()
        self.eq.flush_sync()
        self.assertIsNone(self.successResultOf(d))
