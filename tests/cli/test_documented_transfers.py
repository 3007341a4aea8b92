"""docs/cli.md "Messages", the rows about a transfer once the peers met
(tests/cli/_doccases_transfer.py), run case by case against our
``wormhole`` CLI: see test_documented_errors.py, which also checks that
every row has a case."""
import re

from twisted.trial import unittest

from ._doccases_transfer import TRANSFER_MESSAGES
from ._docscenarios import Servers, check_row
from ._doctables import doc_tables


def _message_test(key):
    def test(self):
        cells = dict(doc_tables()["Messages"])
        self.assertIn(key, cells, "the row is gone from docs/cli.md")
        return check_row(self, cells[key], TRANSFER_MESSAGES[key])
    test.__doc__ = f"Messages: {key}"
    return test


class TransferMessages(Servers, unittest.TestCase):
    for _i, _key in enumerate(TRANSFER_MESSAGES):
        locals()[f"test_{_i:02d}_{re.sub(r'[^a-z0-9]+', '_', _key.lower())[:50]}"] = (
            _message_test(_key))
    del _i, _key
