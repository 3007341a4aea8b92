"""<Tab> completes the receive code in a real terminal (a pseudo-terminal):
the nameplate from the server's ``list`` (which our server now answers by
default, as the reference's does), then each word; against our Mailbox
server and the reference's 0.8."""
import re

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole._wordlist import _EVEN_WORDS, _ODD_WORDS

from ._process import CLIProcess, our_cli
from ._pty import spawn_in_pty
from ._servers import OurServer, ReferenceServer

WORDS = [w.lower() for w in _EVEN_WORDS + _ODD_WORDS]


def shortest_unique_prefix(word):
    """The shortest start of ``word`` no other word shares (or all of it)."""
    for n in range(1, len(word)):
        if [w for w in WORDS if w.startswith(word[:n])] == [word]:
            return word[:n]
    return word


class _Completion:
    timeout = 60

    @defer.inlineCallbacks
    def test_tab_completes_nameplate_and_words(self):
        """Tab on the empty prompt gives the only nameplate ("N-"), Tab
        after the start of each word gives the word; Enter receives the
        text, and the "you can use <Tab>" hint is not shown."""
        send = CLIProcess.spawn(self, reactor, our_cli("--relay-url", self.url, "send",
                                                       "--no-qr", "--text", "tabbed"),
                                name="sender")
        m = yield send.wait_for(rb"Wormhole code is: (\d+)-(\w+)-(\w+)")
        nameplate, first, second = (g.decode() for g in m.groups())
        recv = spawn_in_pty(self, our_cli("--relay-url", self.url, "receive"), "receiver")
        yield recv.wait_for(rb"Enter receive wormhole code: ")
        recv.write(b"\t")
        yield recv.wait_for(re.escape(f"code: {nameplate}-".encode()))
        recv.write(shortest_unique_prefix(first).encode() + b"\t")
        yield recv.wait_for(re.escape(f"{nameplate}-{first}-".encode()))
        recv.write(shortest_unique_prefix(second).encode() + b"\t")
        yield recv.wait_for(re.escape(f"{nameplate}-{first}-{second}".encode()))
        recv.write(b"\r")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0),
                         send.describe() + recv.describe())
        self.assertIn(b"tabbed\r\n", recv.stdout)
        self.assertNotIn(b"you can use <Tab>", recv.stdout)


class CompletionOurServer(OurServer, _Completion, unittest.TestCase):
    pass


class CompletionReferenceServer(ReferenceServer, _Completion, unittest.TestCase):
    pass
