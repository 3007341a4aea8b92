"""How text and sizes are shown (settled against the reference 0.24)."""
from hypothesis import given
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole.cli.ui.wording import received_text
from wormhole.session import escape_text, naturalsize


class Escape(unittest.TestCase):

    def test_printable_unchanged(self):
        """Printable text, non-ASCII and quotes included, passes unchanged."""
        self.assertEqual(escape_text("Grüße ✓ 😀 it's \"x\""), "Grüße ✓ 😀 it's \"x\"")

    def test_control_characters_escaped(self):
        """Newline, tab, CR, ESC, DEL, NEL and bidi overrides are escaped,
        and the backslash is doubled, as the reference prints them."""
        self.assertEqual(escape_text("a\tb\\c\r\n"), "a\\tb\\\\c\\r\\n")
        self.assertEqual(escape_text("\x1b[31m\x7f\x85\u202e"),
                         "\\x1b[31m\\x7f\\x85\\u202e")

    def test_not_a_string(self):
        """A count or a list from a peer's JSON is shown by its str(),
        escaped too."""
        self.assertEqual(escape_text(12), "12")
        self.assertEqual(escape_text(["\x1b"]), "['\\\\x1b']")

    @given(st.text())
    def test_one_line_of_printable_characters(self, text):
        """Whatever arrives, the result is printable (no control, no
        newline) and tells different texts apart."""
        shown = escape_text(text)
        self.assertTrue(shown.isprintable(), shown)
        self.assertEqual(eval("'" + shown.replace("'", "\\'") + "'"), text)


class ReceivedText(unittest.TestCase):

    def test_both_quotes(self):
        """With both kinds of quote, the single quote is escaped (as the
        reference 0.24 printed `it\\'s "x"`)."""
        self.assertEqual(received_text("it's \"x\""), "it\\'s \"x\"")
        self.assertEqual(received_text("it's"), "it's")

    @given(st.text())
    def test_repr_without_quotes(self, text):
        """The receiver's stdout is byte for byte repr() without quotes,
        as the reference's."""
        self.assertEqual(received_text(text), repr(text)[1:-1])


class Sizes(unittest.TestCase):

    def test_sizes(self):
        """Bytes below 1000, then one decimal in kB/MB (powers of 1000)."""
        self.assertEqual(naturalsize(0), "0 Bytes")
        self.assertEqual(naturalsize(1), "1 Byte")
        self.assertEqual(naturalsize(35), "35 Bytes")
        self.assertEqual(naturalsize(999), "999 Bytes")
        self.assertEqual(naturalsize(2000), "2.0 kB")
        self.assertEqual(naturalsize(1_500_000), "1.5 MB")
