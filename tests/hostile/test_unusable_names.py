"""A name one protocol refuses, the other refuses the same way
(docs/security.md, "Names (`wormhole._landing._names`)"): a folder from a hostile sender
whose entry is named with a bidi override (``invoice\\u202egnp.exe``
shows as ``invoiceexe.png``), an escape sequence, a bell, or 300 bytes.

Classic: the zipfile comes from the hostile sender through the classic
receiver (``wormhole receive``'s own code with a recording wormhole and
Transit). transfer-v2: the hostile DirectoryOffer comes through the real
offer subchannel protocol of a TransferSession, its OfferReceiver, the
real sink, and the CLI's decision flow (``Receiving``). Both end in the
same exception class with the same text, the same ``ERROR:`` line, the
same exit status (1: a malformed offer is a failure), and nothing
written.
"""
import io
import json
import os
import zipfile

from twisted.internet import task
from twisted.trial import unittest

from wormhole._landing import BadName
from wormhole.cli import cli, cmd_receive
from wormhole.cli._config import Config
from wormhole.cli._receiving import Receiving
from wormhole.transfer_v2 import _api, _versions
from wormhole.transfer_v2 import _messages as M

from ..cli.fakes import FakeFactory, FakeReactor, FakeTransits

HOSTILE = {
    "bidi override": "invoice\u202egnp.exe",
    "escape sequence": "a\x1b[2Jb",
    "bell": "ring\x07",
    "300 bytes": "n" * 300,
}


def plenty(path):
    return 10 ** 12


class _Wire:
    """An offer subchannel as the receiver writes to it."""

    def __init__(self):
        self.records = []
        self.disconnecting = False

    def write(self, data):
        self.records.append(M.parse_record(data))

    def loseConnection(self):
        self.disconnecting = True


class SameRefusal(unittest.TestCase):
    def setUp(self):
        self.inbox = os.path.abspath(self.mktemp())
        os.makedirs(self.inbox)

    def config(self, **kw):
        return Config(relay_url="ws://example/v1", stdin=io.StringIO(), stdout=io.StringIO(),
                      stderr=io.StringIO(), code="4-purple-sausages", cwd=self.inbox,
                      free_space=plenty, hide_progress=True, accept_file=True, **kw)

    def classic(self, name):
        """A zipfile holding ``name`` through the classic receiver: the
        exception it fails with, and the config (its terminal)."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr(name, b"x")
        z = buf.getvalue()
        factory = FakeFactory()
        transits = FakeTransits(factory.log)
        cfg = self.config(create=factory.create, transit_receiver=transits)
        d = cmd_receive.receive(FakeReactor(), cfg)
        w = factory.wormholes[0]
        w.got_key()
        w.got_verifier()
        w.deliver(json.dumps({"offer": {"directory": {
            "mode": "zipfile/deflated", "dirname": "d", "zipsize": len(z),
            "numbytes": 1, "numfiles": 1}}}).encode())
        transits.made[0].pipe.feed(z)
        return self.failureResultOf(d).value, cfg

    def transfer_v2(self, name):
        """A DirectoryOffer listing ``name`` through a session's offer
        subchannel, decided by the CLI's flow: the library's refusal, the
        command's error, and what the peer heard."""
        clock = task.Clock()
        cfg = self.config()
        receiving = Receiving(clock, cfg, ask=None)
        incomings = []

        def on_offer(incoming):
            incomings.append(incoming)
            receiving.on_offer(incoming)
        session = _api.TransferSession(clock, None, "receive", on_offer=on_offer,
                                       free_space=plenty)
        # a peer that declared no feature: one record per write
        session._agree(_versions.negotiate("receive", _versions.app_versions("send", {})))
        protocol = session._offer_in()
        wire = _Wire()
        protocol.makeConnection(wire)
        protocol.dataReceived(M.encode_record(M.DirectoryOffer("d", 1, [[name]])))
        clock.advance(0)
        [incoming] = incomings
        d = receiving.finished()
        clock.advance(0)
        return incoming.refusal, self.failureResultOf(d).value, cfg, wire.records

    def test_same_refusal_both_protocols(self):
        for what, name in HOSTILE.items():
            classic_error, classic_cfg = self.classic(name)
            refusal, command_error, v2_cfg, heard = self.transfer_v2(name)
            # the same rule, class and words
            self.assertIsInstance(classic_error, BadName, what)
            self.assertIs(type(refusal), type(classic_error), what)
            self.assertEqual(str(refusal), str(classic_error), what)
            self.assertIn("the sender offered an unusable name '", str(refusal))
            # the same ERROR line, escaped, and a failing exit status
            line = cli.describe_error(classic_error, classic_cfg)
            self.assertEqual(cli.describe_error(command_error, v2_cfg), line, what)
            self.assertTrue(line.startswith("ERROR: the sender offered an unusable name"))
            self.assertNotIn("\x1b", line)
            self.assertNotIn("\x07", line)
            self.assertNotIn("\u202e", line)
            # a malformed offer is a failure, not a decision (docs/cli.md)
            self.assertEqual(cli.exit_status(classic_error), cli.EXIT_FAILED)
            self.assertEqual(cli.exit_status(command_error), cli.EXIT_FAILED)
            # the peer heard a rejection; nothing was written
            self.assertEqual(heard, [M.OfferReject("transfer rejected")], what)
            self.assertEqual(os.listdir(self.inbox), [], what)
