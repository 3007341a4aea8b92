"""docs/cli.md "Exit status" and "Messages", run case by case against our
``wormhole`` CLI: the tables are read from the
docs when the tests run, every row has a case keyed by its first cell and
every case a row (so the docs and the tests cannot drift apart), and each
case runs real ``wormhole`` processes against our Mailbox server and
Transit relay on 127.0.0.1 and checks the row's message and exit status.
This module: the exit statuses, the rows that need no file to move, and
the bookkeeping; the transfers' rows are in test_documented_transfers.py.
"""
import re

from twisted.internet import defer
from twisted.trial import unittest

from ._doccases_quick import EXIT_STATUS, NOT_RUN, QUICK_MESSAGES
from ._doccases_transfer import TRANSFER_MESSAGES
from ._docscenarios import Servers, check_row
from ._doctables import doc_tables

MESSAGES = {**QUICK_MESSAGES, **TRANSFER_MESSAGES}


class EveryRowHasACase(unittest.TestCase):

    def assertSameKeys(self, rows, cases, table):
        documented = [row[0] for row in rows]
        self.assertEqual(sorted(set(documented) - set(cases)), [],
                         f"rows of {table!r} without a case")
        self.assertEqual(sorted(set(cases) - set(documented)), [],
                         f"cases without a row in {table!r}")

    def test_exit_status(self):
        self.assertSameKeys(doc_tables()["Exit status"], EXIT_STATUS, "Exit status")

    def test_messages(self):
        """Every row is run, or named in NOT_RUN with why; never both."""
        self.assertEqual(set(QUICK_MESSAGES) & set(TRANSFER_MESSAGES), set())
        self.assertEqual(set(MESSAGES) & set(NOT_RUN), set())
        self.assertSameKeys(doc_tables()["Messages"], {**MESSAGES, **NOT_RUN}, "Messages")


def slug(key):
    return re.sub(r"\W+", "_", key.lower()).strip("_")[:60]


def row(table, key):
    for first, cell in doc_tables()[table]:
        if first == key:
            return cell
    raise AssertionError(f"docs/cli.md {table!r} has no row {key!r} any more")


def _status_test(key):
    @defer.inlineCallbacks
    def test(self):
        row("Exit status", key)
        case = EXIT_STATUS[key]
        runs = yield case.scenario(self)
        statuses = {int(s) for s in key.split(", ")}
        for name, run in runs.items():
            want = case.status.get(name, int(key) if len(statuses) == 1 else None)
            if name in case.expect or not case.expect:
                self.assertIn(want, statuses)
                self.assertEqual(run.status, want, run.describe())
    test.__doc__ = f"Exit status {key}: {EXIT_STATUS[key].scenario.__doc__}"
    return test


def _message_test(key):
    def test(self):
        return check_row(self, row("Messages", key), QUICK_MESSAGES[key])
    test.__doc__ = f"Messages: {key}"
    return test


class ExitStatus(Servers, unittest.TestCase):
    for _i, _key in enumerate(EXIT_STATUS):
        locals()[f"test_{_i:02d}_{slug(_key)}"] = _status_test(_key)
    del _i, _key


class QuickMessages(Servers, unittest.TestCase):
    for _i, _key in enumerate(QUICK_MESSAGES):
        locals()[f"test_{_i:02d}_{slug(_key)}"] = _message_test(_key)
    del _i, _key
