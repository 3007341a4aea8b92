"""The reader of docs/cli.md's error tables (tests/cli/_doctables.py):
tables found under their headings, rows split, a documented message
turned into a pattern."""
import re

from twisted.trial import unittest

from tests.cli._doctables import (
    DocTableError,
    documented_status,
    pattern,
    quoted,
    read_tables,
    split_row,
)

DOC = """# Title

## Errors

Some words.

### Exit status

| status | meaning |
| --- | --- |
| 0 | it worked |
| 2 | usage (`-0` with a code) |

### Messages

| situation | message |
| --- | --- |
| no file | `Cannot send: no file named 'NOSUCHFILE'` |
| a bar \\| in a cell | `A` / `B` (exit 3) |

### Other

| situation | message |
| --- | --- |
| not ours | `x` |

## Next
"""


class ReadTables(unittest.TestCase):

    def test_both_tables(self):
        tables = read_tables(DOC)
        self.assertEqual(tables["Exit status"], [("0", "it worked"),
                                                 ("2", "usage (`-0` with a code)")])
        self.assertEqual(tables["Messages"], [
            ("no file", "`Cannot send: no file named 'NOSUCHFILE'`"),
            ("a bar | in a cell", "`A` / `B` (exit 3)")])

    def test_missing_heading(self):
        self.assertRaises(DocTableError, read_tables, DOC.replace("### Messages", "### Words"))

    def test_table_outside_errors_is_not_read(self):
        self.assertRaises(DocTableError, read_tables,
                          DOC.replace("## Errors", "## Elsewhere"))

    def test_wrong_header(self):
        self.assertRaises(DocTableError, read_tables,
                          DOC.replace("| situation | message |\n| --- | --- |\n| no file",
                                      "| when | what |\n| --- | --- |\n| no file"))

    def test_duplicate_row(self):
        self.assertRaises(DocTableError, read_tables,
                          DOC.replace("| 2 | usage", "| 0 | usage"))

    def test_ragged_row(self):
        self.assertRaises(DocTableError, split_row, "no bars")
        self.assertRaises(DocTableError, read_tables, DOC.replace("| 0 | it worked |",
                                                                  "| 0 | it | worked |"))


class Patterns(unittest.TestCase):

    def test_quoted(self):
        self.assertEqual(quoted("receiver: `A b` / `C` (exit 3)"), ["A b", "C"])

    def test_placeholders_and_ellipsis_match_any_text(self):
        regex = pattern("bad --relay-url 'URL': ...")
        self.assertRegex("ERROR: bad --relay-url 'http://x': must be ws://", regex)
        self.assertNotRegex("bad --relay-url http://x", regex)

    def test_numbers_match_any_number(self):
        regex = pattern("after 4.2 MB of 8.0 MB were sent")
        self.assertRegex("after 12.5 MB of 16.0 MB were sent", regex)
        self.assertNotRegex("after some MB of 16.0 MB were sent", regex)

    def test_the_rest_is_literal(self):
        regex = pattern("(use --key-file) ok? [x]")
        self.assertRegex("(use --key-file) ok? [x]", regex)
        self.assertNotRegex("(use --key-file) ok [x]", regex)

    def test_capitals_that_are_no_placeholder_stay(self):
        regex = pattern("ERROR: 2 of 2 MB")
        self.assertEqual(re.fullmatch(regex, "ERROR: 3 of 4 MB").group(), "ERROR: 3 of 4 MB")
        self.assertNotRegex("WARNING: 3 of 4 kB", regex)

    def test_status(self):
        self.assertEqual(documented_status("`A` (exit 3)"), 3)
        self.assertEqual(documented_status("`A` (both exit 3)"), 3)
        self.assertEqual(documented_status("`A`"), 1)
        self.assertRaises(DocTableError, documented_status, "(exit 1) or (exit 3)")
