"""wormhole._wordlist: the PGP word list and code completion (Client API, "Code Management")."""

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole._wordlist import PGP_WORDS, PGPWordList

SETTINGS = settings(max_examples=300, deadline=None)
EVEN = [PGP_WORDS[i][0] for i in range(256)]
ODD = [PGP_WORDS[i][1] for i in range(256)]


def fixed_bytes(data):
    """A randbytes stand-in that returns ``data`` (checking the length asked)."""

    def randbytes(n):
        assert n == len(data), (n, data)
        return bytes(data)

    return randbytes


class Table(unittest.TestCase):
    def test_256_distinct_pairs(self):
        """Every byte 0..255 has a pair, and all 512 words are distinct."""
        self.assertEqual(sorted(PGP_WORDS), list(range(256)))
        self.assertEqual(len(set(PGP_WORDS.values())), 256)
        self.assertEqual(len(set(EVEN) | set(ODD)), 512)

    def test_first_and_last(self):
        """0x00 is aardvark/adroitness and 0xFF is zulu/yucatan."""
        self.assertEqual(PGP_WORDS[0x00], ("aardvark", "adroitness"))
        self.assertEqual(PGP_WORDS[0xFF], ("zulu", "yucatan"))

    def test_known_entries(self):
        """Entries used by the examples of Client API, "Code Management": 0x69
        guitarist, 0xA9 revenge, 0x9F opulent."""
        self.assertEqual(PGP_WORDS[0x69], ("gazelle", "guitarist"))
        self.assertEqual(PGP_WORDS[0xA9], ("revenge", "passenger"))
        self.assertEqual(PGP_WORDS[0x9F], ("quota", "opulent"))

    def test_words_are_lower_case_letters(self):
        """Words are lower-case ASCII letters: no hyphen can split one."""
        for word in EVEN + ODD:
            self.assertTrue(word.isascii() and word.isalpha() and word.islower(), word)


class ChooseWords(unittest.TestCase):
    def test_alternation(self):
        """Codes start with an odd-list word and alternate: 0x69,0xA9 -> guitarist-revenge."""
        wl = PGPWordList(randbytes=fixed_bytes([0x69, 0xA9]))
        self.assertEqual(wl.choose_words(2), "guitarist-revenge")
        wl = PGPWordList(randbytes=fixed_bytes([0x00, 0x00, 0x00, 0xFF]))
        self.assertEqual(wl.choose_words(4), "adroitness-aardvark-adroitness-zulu")

    @SETTINGS
    @given(st.integers(1, 8))
    def test_random_words_from_the_right_list(self, length):
        """choose_words(n) gives n words; even positions odd-list, odd positions even-list."""
        words = PGPWordList().choose_words(length).split("-")
        self.assertEqual(len(words), length)
        for i, word in enumerate(words):
            self.assertIn(word, ODD if i % 2 == 0 else EVEN)

    def test_at_least_one_word(self):
        """choose_words(0) is an error, not an empty code."""
        self.assertRaises(ValueError, PGPWordList().choose_words, 0)


# a prefix: some complete words (any text without hyphens) and hyphens, then
# part of a word
_partials = st.sampled_from(EVEN + ODD).flatmap(
    lambda w: st.integers(0, len(w)).map(lambda n: w[:n]))
_word_prefixes = st.builds(
    lambda words, partial, upper: (("-".join(words + [partial])).upper() if upper
                                   else "-".join(words + [partial])),
    st.lists(st.sampled_from(EVEN + ODD), max_size=3),
    _partials,
    st.booleans(),
)
prefixes = _word_prefixes | st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCPRS-", max_size=25)


class Completions(unittest.TestCase):
    def test_spec_examples(self):
        """The examples of Client API, "Code Management" ("pr", "opulent-pr", "su")."""
        wl = PGPWordList()
        self.assertEqual(wl.get_completions("pr"), {"processor-", "provincial-", "proximate-"})
        self.assertEqual(
            wl.get_completions("opulent-pr"),
            {"opulent-preclude", "opulent-prefer", "opulent-preshrunk", "opulent-printer",
             "opulent-prowler"},
        )
        self.assertEqual(wl.get_completions("su"), {"supportive-", "surrender-", "suspicious-"})

    def test_whole_word(self):
        """A complete word completes to itself, plus "-" if another word follows."""
        wl = PGPWordList()
        self.assertEqual(wl.get_completions("guitarist"), {"guitarist-"})
        self.assertEqual(wl.get_completions("guitarist-revenge"), {"guitarist-revenge"})
        self.assertEqual(wl.get_completions("guitarist", num_words=1), {"guitarist"})

    def test_empty_prefix(self):
        """An empty prefix offers all 256 odd-list words, each with a hyphen."""
        self.assertEqual(PGPWordList().get_completions(""), {w + "-" for w in ODD})

    def test_case_insensitive(self):
        """Matching ignores case and keeps what was typed: "PR" -> "PRocessor-"..."""
        got = PGPWordList().get_completions("PR")
        self.assertEqual(got, {"PRocessor-", "PRovincial-", "PRoximate-"})

    def test_no_more_words(self):
        """Once the code has num_words words, nothing more is offered."""
        self.assertEqual(PGPWordList().get_completions("guitarist-revenge-"), set())
        self.assertEqual(PGPWordList().get_completions("a-b-c", num_words=2), set())

    def test_wrong_list_offers_nothing(self):
        """An even-list word in the first position has no completion."""
        self.assertEqual(PGPWordList().get_completions("aardv"), set())

    @SETTINGS
    @given(prefixes, st.integers(1, 4))
    def test_completion_properties(self, prefix, num_words):
        """Every completion starts with the prefix, extends only the last word
        to a word of the right list, and ends in "-" exactly when more words follow."""
        index = prefix.count("-")
        for c in PGPWordList().get_completions(prefix, num_words):
            self.assertTrue(c.startswith(prefix), (prefix, c))
            more = index + 1 < num_words
            self.assertEqual(c.endswith("-"), more, (prefix, c))
            word = (c[:-1] if more else c).split("-")[-1].lower()
            self.assertIn(word, ODD if index % 2 == 0 else EVEN)

    @SETTINGS
    @given(st.binary(min_size=1, max_size=4), st.data())
    def test_every_code_reachable(self, raw, data):
        """For every prefix of a real code, the code's current word is offered."""
        num_words = len(raw)
        code = PGPWordList(randbytes=fixed_bytes(raw)).choose_words(num_words)
        cut = data.draw(st.integers(0, len(code)))
        prefix = code[:cut]
        index = prefix.count("-")
        word_end = code.find("-", cut)
        expected = code if word_end == -1 else code[: word_end + 1]
        if index < num_words:
            self.assertIn(expected, PGPWordList().get_completions(prefix, num_words))
