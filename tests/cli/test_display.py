"""How text and sizes are shown (settled against the reference 0.24)."""
from twisted.trial import unittest

from wormhole.cli._display import escape_text, naturalsize


class Escape(unittest.TestCase):

    def test_printable_unchanged(self):
        """Printable text, non-ASCII included, passes unchanged."""
        self.assertEqual(escape_text("Grüße ✓ 😀 it's"), "Grüße ✓ 😀 it's")

    def test_control_characters_escaped(self):
        """Newline, tab, CR, ESC, DEL, NEL and bidi overrides are escaped,
        and the backslash is doubled, as the reference prints them."""
        self.assertEqual(escape_text("a\tb\\c\r\n"), "a\\tb\\\\c\\r\\n")
        self.assertEqual(escape_text("\x1b[31m\x7f\x85\u202e"),
                         "\\x1b[31m\\x7f\\x85\\u202e")

    def test_both_quotes(self):
        """With both kinds of quote, the single quote is escaped (as the
        reference 0.24 printed `it\\'s "x"`)."""
        self.assertEqual(escape_text("it's \"x\""), "it\\'s \"x\"")


class Sizes(unittest.TestCase):

    def test_sizes(self):
        """Bytes below 1000, then one decimal in kB/MB (powers of 1000)."""
        self.assertEqual(naturalsize(0), "0 Bytes")
        self.assertEqual(naturalsize(1), "1 Byte")
        self.assertEqual(naturalsize(35), "35 Bytes")
        self.assertEqual(naturalsize(999), "999 Bytes")
        self.assertEqual(naturalsize(2000), "2.0 kB")
        self.assertEqual(naturalsize(1_500_000), "1.5 MB")
