"""What transfer-v2's end-to-end test modules share: folder trees written
and read back, two of our wormholes dilated on our Mailbox server
(``_Base``, ``_Attempts``), and our CLI as processes (``_CLIBase``)."""

import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

import wormhole
from wormhole import transfer_v2 as T
from wormhole.errors import TransferError
from wormhole_mailbox.testing import start_mailbox_server

from .._ourmailbox import OurMailboxTestCase
from ..cli._process import CLIProcess, our_cli
from ..cli._support import NO_TRANSIT

APPID = "example.com/transfer-v2-e2e"


def write_tree(root, files):
    for rel, data in files.items():
        path = os.path.join(root, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def read_tree(root, folders=False):
    """{relative path: bytes}; with ``folders`` also {relative path/: None}
    for every folder."""
    found = {}
    for dirpath, dirs, names in os.walk(root):
        for n in names:
            full = os.path.join(dirpath, n)
            with open(full, "rb") as f:
                found[os.path.relpath(full, root).replace(os.sep, "/")] = f.read()
        for n in dirs if folders else ():
            rel = os.path.relpath(os.path.join(dirpath, n), root)
            found[rel.replace(os.sep, "/") + "/"] = None
    return found


class _Base(OurMailboxTestCase):
    @defer.inlineCallbacks
    def pair(self, mode1, mode2, versions2=None):
        w1 = wormhole.create(APPID, self.srv.url, reactor, dilation=True,
                             versions=T.app_versions(mode1))
        w2 = wormhole.create(APPID, self.srv.url, reactor, dilation=True,
                             versions=T.app_versions(mode2) if versions2 is None else versions2)
        self.close_later(w1, w2)
        w1.allocate_code()
        code = yield w1.get_code()
        w2.set_code(code)
        return w1, w2

    def session(self, w, mode, **kw):
        kw.setdefault("dilate_kwargs", {"_listen_addresses": ["127.0.0.1"]})
        return T.TransferSession(reactor, w, mode, **kw)


class _Attempts(_Base):
    """Sessions of one offer, some cut short by the receiving side."""

    @defer.inlineCallbacks
    def attempt(self, src, dst, stop_at=None):
        """One session offering ``src``; with ``stop_at``, the receiving
        side closes its session (as a Ctrl-C would) once that many bytes
        arrived. Returns (result or error, bytes the sender streamed, the
        IncomingOffer)."""
        w1, w2 = yield self.pair("send", "receive")
        incoming = []
        seen = [0]
        stopping = []

        def on_offer(offer):
            incoming.append(offer)

            def progress(n):
                seen[0] += n
                if stop_at is not None and seen[0] >= stop_at and not stopping:
                    stopping.append(s2.close())
            offer.progress = progress
            offer.accept(dst)
        sent = [0]

        def counted(n):
            sent[0] += n
        s1 = self.session(w1, "send")
        s2 = self.session(w2, "receive", on_offer=on_offer)
        yield defer.gatherResults([s1.start(), s2.start()])
        try:
            result = yield s1.offer(src, progress=counted)
        except TransferError as e:
            result = e
        yield s1.close()
        yield s2.when_closed()
        yield incoming[0].when_done().addErrback(lambda f: None)
        return result, sent[0], incoming[0]

    def source(self, size):
        """(a file of ``size`` random bytes, an empty destination, its bytes)."""
        src, dst = self.mktemp(), self.mktemp()
        os.makedirs(src)
        os.makedirs(dst)
        data = os.urandom(size)
        path = os.path.join(src, "big")
        with open(path, "wb") as f:
            f.write(data)
        return path, dst, data


ENV = {"WORMHOLE_TRANSIT_ADDRESSES": "127.0.0.1"}


class _CLIBase(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(self.srv.stop)
        self.src = os.path.abspath(self.mktemp())
        self.dst = os.path.abspath(self.mktemp())
        os.makedirs(self.src)
        os.makedirs(self.dst)

    def spawn(self, argv, name, stdin=None, cwd=None):
        return CLIProcess.spawn(self, reactor, argv, stdin=stdin, name=name, env=ENV,
                                cwd=cwd)

    def ours(self, *args, transit=NO_TRANSIT):
        return our_cli("--relay-url", self.srv.url, "--transit-helper", transit, *args)

    @defer.inlineCallbacks
    def run_pair(self, send_argv, recv_argv, recv_stdin=None):
        send = self.spawn(send_argv, "sender")
        m = yield send.wait_for(rb"wormhole receive (\S+)")
        recv = self.spawn(recv_argv + [m.group(1).decode()], "receiver", stdin=recv_stdin,
                          cwd=self.dst)
        yield defer.gatherResults([send.ended, recv.ended])
        self.runs = (send, recv)
        return send, recv

    @defer.inlineCallbacks
    def kill_then_interrupt(self, victim, survivor):
        """``victim`` killed (SIGKILL) mid-transfer; ``survivor`` waits for
        its peer (Dilation reconnects), so its human gives up with Ctrl-C."""
        victim.transport.signalProcess("KILL")
        yield victim.ended
        self.assertFalse(survivor.ended.called, survivor.describe())
        survivor.transport.signalProcess("INT")
        yield survivor.ended

    def assertExit(self, run, status):
        self.assertEqual(run.status, status, "\n".join(r.describe() for r in self.runs))

    def assertSameFile(self, name):
        with open(os.path.join(self.src, name), "rb") as a, \
                open(os.path.join(self.dst, name), "rb") as b:
            self.assertEqual(a.read(), b.read())
