"""Tahoe-LAFS 1.20.0 invites a new client over a wormhole, on the
reference 0.24 and on ours (docs/api.md, "Real applications beyond
fowl").

The way its users run it: ``tahoe -d NODE invite NICKNAME`` on a node of
a grid prints an invite code and waits; ``tahoe create-client --join
CODE DIR`` on the new machine types it, and the inviter sends the grid's
introducer and share settings through the wormhole (two messages each
way, then close). Both run as processes of the applications' venv against
a Mailbox server of ours on 127.0.0.1; the same run is made on the
reference first, then on ours, then with our inviter and the reference's
joiner.
"""

import os

from twisted.internet import defer, reactor
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial import unittest

from tests._processes import LineProcess
from wormhole_mailbox.testing import start_mailbox_server

from ._apps import app_env, apps_bin, require_apps

INTRODUCER = "pb://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@tcp:127.0.0.1:1/introducer"
WAIT = 60.0  # seconds for the inviter to print its code


def read_node(basedir):
    """What the join wrote: the settings the inviter chose."""
    out = {}
    with open(os.path.join(basedir, "tahoe.cfg")) as f:
        for line in f:
            key, _, value = line.partition("=")
            if key.strip() in ("nickname", "shares.needed", "shares.happy", "shares.total"):
                out[key.strip()] = value.strip()
    with open(os.path.join(basedir, "private", "introducers.yaml")) as f:
        out["introducer"] = INTRODUCER in f.read()
    return out


class TahoeInvite(unittest.TestCase):
    timeout = 300

    @defer.inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor)
        self.addCleanup(self.srv.stop)
        self.url = self.srv.url

    def tahoe(self, library, cwd, *args):
        return getProcessOutputAndValue(apps_bin("tahoe"), args, env=app_env(library),
                                        path=cwd, reactor=reactor)

    def mktemp_dir(self):
        d = self.mktemp()
        os.makedirs(d)
        return os.path.abspath(d)

    @defer.inlineCallbacks
    def invite_and_join(self, inviter, joiner):
        work = self.mktemp_dir()
        alice, bob = os.path.join(work, "alice"), os.path.join(work, "bob")
        out, err, code = yield self.tahoe(
            inviter, work, "create-client", f"--introducer={INTRODUCER}", "--shares-needed", "1",
            "--shares-happy", "1", "--shares-total", "1", alice)
        self.assertEqual(code, 0, err)
        invite = LineProcess()
        reactor.spawnProcess(invite, apps_bin("tahoe"),
                             [apps_bin("tahoe"), "-d", alice, "--wormhole-server", self.url,
                              "invite", "--shares-needed", "2", "--shares-happy", "3",
                              "--shares-total", "4", "bob"],
                             env=app_env(inviter), path=work)
        self.addCleanup(invite.stop)
        prefix = b"Invite Code for client: "
        while True:
            line = yield invite.next_line().addTimeout(WAIT, reactor)
            if line.startswith(prefix):
                break
        code_text = line[len(prefix):].decode().strip()
        out, err, code = yield self.tahoe(joiner, work, "--wormhole-server", self.url,
                                          "create-client", "--join", code_text, bob)
        self.assertEqual(code, 0, (out, err))
        yield invite.ended
        self.assertIn(b"Completed successfully", b"\n".join(invite.lines), invite.stderr)
        return read_node(bob)

    @defer.inlineCallbacks
    def test_invite_and_join(self):
        """On the reference, on ours, and ours inviting the reference's
        joiner: the new client has the inviter's nickname, share settings
        and introducer, written exactly as the reference run wrote them
        (tahoe 1.20 writes the share numbers as "b'2'", on any library)."""
        require_apps("reference")
        require_apps("ours")
        reference = yield self.invite_and_join("reference", "reference")
        self.assertEqual((reference["nickname"], reference["introducer"]), ("bob", True))
        self.assertEqual([reference[f"shares.{k}"].strip("b'") for k in
                          ("needed", "happy", "total")], ["2", "3", "4"])
        for inviter, joiner in (("ours", "ours"), ("ours", "reference")):
            got = yield self.invite_and_join(inviter, joiner)
            self.assertEqual(got, reference, f"inviter on {inviter}, joiner on {joiner}")
