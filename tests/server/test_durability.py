"""Mailbox server protocol, "Persistence": what was acked survives a SIGKILL of the server."""

import os

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.trial import unittest

from ._client import connect
from ._subprocess import kill, start_twistd


class Durability(unittest.TestCase):
    timeout = 120

    @inlineCallbacks
    def test_sigkill_keeps_acked_messages(self):
        """A client adds three messages and gets their acks; the server is
        SIGKILLed and restarted on the same database; the other side then
        claims the same nameplate, gets the same mailbox, and receives all
        three messages."""
        workdir = os.path.abspath(self.mktemp())
        db = os.path.join(workdir, "channel.sqlite")
        proc, url = yield start_twistd(self, workdir, f"--channel-db={db}")
        a = yield connect(reactor, url)
        a.send(type="bind", appid="app", side="aaaa")
        a.send(type="claim", nameplate="12", id="c")
        mailbox = (yield a.next("claimed"))["mailbox"]
        a.send(type="open", mailbox=mailbox)
        for i in range(3):
            a.send(type="add", phase=str(i), body=f"{i:02x}" * 4, id=f"m{i}")
        for i in range(3):
            yield a.next("ack", id=f"m{i}")
        kill(proc)
        yield a.when_closed()

        proc2, url2 = yield start_twistd(self, workdir, f"--channel-db={db}")
        b = yield connect(reactor, url2)
        self.addCleanup(b.close)
        b.send(type="bind", appid="app", side="bbbb")
        b.send(type="claim", nameplate="12")
        self.assertEqual((yield b.next("claimed"))["mailbox"], mailbox)
        b.send(type="open", mailbox=mailbox)
        got = []
        for i in range(3):
            msg = yield b.next("message", phase=str(i))
            got.append((msg["side"], msg["body"], msg["id"]))
        self.assertEqual(got, [("aaaa", f"{i:02x}" * 4, f"m{i}")
                               for i in range(3)])
