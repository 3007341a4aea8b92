"""docs/state-machines/refusals.md lists every input each machine refuses
in each state, and nothing else (docs/state-machines/README.md, "Inputs
the machines refuse")."""

from twisted.trial import unittest

from . import generator

TABLE = generator.REPO / "docs" / "state-machines" / "refusals.md"
FIX = ("regenerate the pairs with: python misc/generate-diagrams.py --write-refusals, "
       "then give each new row its reason")

PLANTED = """# head

## `pkg.M.m`

| input | refused in | why |
| --- | --- | --- |
| `go` | `A`, `B` | cannot arrive |
| `stop` | `A` | a clear error |
"""


class RefusalsTable(unittest.TestCase):
    def setUp(self):
        self.gen = generator.load()
        self.gen._use_this_checkout()
        self.rows, _ = self.gen.parse_refusals(TABLE.read_text(encoding="utf-8"))

    def test_every_refused_pair_is_listed_and_nothing_else(self):
        """Each (state, input) pair without a transition, of every machine
        the diagrams show, is in the table; no pair in the table has a
        transition, and none is listed twice."""
        unlisted, wrong = self.gen.refusal_differences(self.rows, self.gen.refused_pairs())
        self.assertEqual((unlisted, wrong), ([], []),
                         f"(refused but not listed, listed but not refused); {FIX}")

    def test_the_table_is_in_its_generated_form(self):
        """Regenerating the table from the machines and its own reasons
        gives it back unchanged (rows grouped and sorted as the generator
        writes them), so a refresh after a machine changes shows only
        what changed."""
        text = TABLE.read_text(encoding="utf-8")
        self.assertEqual(self.gen.refusals_table(self.gen.refused_pairs(), text), text, FIX)

    def test_every_row_has_a_reason(self):
        """No row is empty or still waits for its reason (a refresh marks
        new pairs "to audit")."""
        self.assertEqual([r[:3] for r in self.rows
                          if not r[3] or r[3] == self.gen.TO_AUDIT], [], FIX)

    def test_a_planted_discrepancy_is_found(self):
        """The check itself, on a table in memory: a refused pair the table
        omits, a listed pair that has a transition, a pair listed twice and
        a machine that does not exist are all reported."""
        current = {"pkg.M.m": {"go": {"A", "B", "C"}, "stop": {"B"}}}
        rows, head = self.gen.parse_refusals(PLANTED)
        self.assertEqual(head, "# head\n")
        self.assertEqual(self.gen.refusal_differences(rows, current),
                         ([("pkg.M.m", "go", "C"), ("pkg.M.m", "stop", "B")],
                          [("pkg.M.m", "stop", "A")]))
        rows.append(("pkg.M.m", "go", ("A",), "again"))
        rows.append(("pkg.Gone.m", "go", ("A",), "gone"))
        self.assertEqual(self.gen.refusal_differences(rows, current)[1],
                         [("pkg.Gone.m", "go", "A"), ("pkg.M.m", "go", "A"),
                          ("pkg.M.m", "stop", "A")])
        self.assertEqual(self.gen.refusal_differences(
            self.gen.parse_refusals(PLANTED)[0],
            {"pkg.M.m": {"go": {"A", "B"}, "stop": {"A"}}}), ([], []))

    def test_regenerating_keeps_reasons_and_marks_new_pairs(self):
        """A refresh keeps each pair's reason, splits a row whose states
        now differ, and marks a newly refused pair for audit."""
        current = {"pkg.M.m": {"go": {"A", "C"}, "stop": {"A"}}}
        table = self.gen.refusals_table(current, PLANTED)
        self.assertIn("| `go` | `A` | cannot arrive |", table)
        self.assertIn(f"| `go` | `C` | {self.gen.TO_AUDIT} |", table)
        self.assertIn("| `stop` | `A` | a clear error |", table)
        self.assertTrue(table.startswith("# head\n"))
