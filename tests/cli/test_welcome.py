"""The welcome's advice (wormhole._welcome): the motd once, and an
upgrade notice only when the server recommends a newer release; then
both through real ``wormhole`` processes and both Mailbox servers."""
import io

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole._welcome import WelcomeAdvice, advice
from wormhole.errors import LonelyError

from ..interop.servers import RefMailboxServer
from ._process import CLIProcess, our_cli

URL = "ws://example:4000/v1"


class Advice(unittest.TestCase):

    def test_motd(self):
        """The motd is shown indented under a line naming the server;
        control characters in it are escaped."""
        self.assertEqual(advice({"motd": "hello\nsecond \x1b[31mred"}, URL, "1.0"),
                         [f"Message from the Mailbox server at {URL}:", "  hello",
                          "  second \\x1b[31mred"])

    def test_upgrade_notice_only_when_older(self):
        """current_cli_version newer than ours: one notice line; equal,
        older, unparsable, or ours a development/local build: nothing."""
        notice = advice({"current_cli_version": "0.25.0"}, URL, "0.24.0")
        self.assertEqual(len(notice), 1)
        self.assertIn("recommends version 0.25.0; this wormhole is 0.24.0", notice[0])
        for current, ours in [("0.24.0", "0.24.0"), ("0.23", "0.24.0"),
                              ("not a version", "0.24.0"), ("9.0", "0.24.0.dev3"),
                              ("9.0", "0.24.0+g1234")]:
            self.assertEqual(advice({"current_cli_version": current}, URL, ours), [],
                             (current, ours))

    def test_shown_once(self):
        """A second welcome (after a reconnection) shows nothing again."""
        out = io.StringIO()
        handler = WelcomeAdvice(URL, out, version="1.0")
        handler({"motd": "once"})
        handler({"motd": "once"})
        self.assertEqual(out.getvalue().count("once"), 1)


class Library(unittest.TestCase):
    timeout = 30

    @defer.inlineCallbacks
    def test_default_handler(self):
        """A library user who passes no welcome_handler gets the same
        advice on create()'s stderr, once; one who passes a handler gets
        the welcome and nothing printed."""
        from wormhole import create
        from wormhole_mailbox.testing import start_mailbox_server
        srv = yield start_mailbox_server(reactor, port=0, motd="lib motd",
                                         advertise_version="99.0")
        self.addCleanup(srv.stop)
        out, got = io.StringIO(), []
        for kwargs in ({}, {"welcome_handler": got.append}):
            w = create("example.com/welcome", srv.url, reactor, stderr=out, **kwargs)
            yield w.get_welcome()
            # alone on the server: close() says so (LonelyError)
            yield self.assertFailure(w.close(), LonelyError)
        self.assertEqual(out.getvalue().count("lib motd"), 1, out.getvalue())
        self.assertIn("recommends version 99.0", out.getvalue())
        self.assertEqual(got[0]["motd"], "lib motd")


class _EndToEnd:
    timeout = 60

    @defer.inlineCallbacks
    def test_motd_and_notice(self):
        """Both sides show the server's motd exactly once and the upgrade
        notice (the server recommends 99.0); the text still arrives."""
        url = yield self.start_server(motd="Be excellent ✓", advertise_version="99.0")
        send = CLIProcess.spawn(self, reactor, our_cli("--relay-url", url, "send", "--no-qr",
                                                       "--code", "8-be-nice", "--text", "hi"),
                                name="sender")
        recv = CLIProcess.spawn(self, reactor, our_cli("--relay-url", url, "receive",
                                                       "8-be-nice"), name="receiver")
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), (0, 0), send.describe() + recv.describe())
        self.assertEqual(recv.stdout, b"hi\n")
        for run in (send, recv):
            err = run.stderr.decode()
            self.assertEqual(err.count("Be excellent ✓"), 1, run.describe())
            self.assertEqual(err.count(f"Message from the Mailbox server at {url}:"), 1)
            self.assertEqual(err.count("recommends version 99.0"), 1, run.describe())


class OurServer(_EndToEnd, unittest.TestCase):
    @defer.inlineCallbacks
    def start_server(self, motd, advertise_version):
        from wormhole_mailbox.testing import start_mailbox_server
        srv = yield start_mailbox_server(reactor, port=0, motd=motd,
                                         advertise_version=advertise_version)
        self.addCleanup(srv.stop)
        return srv.url


class ReferenceServer(_EndToEnd, unittest.TestCase):
    @defer.inlineCallbacks
    def start_server(self, motd, advertise_version):
        srv = yield RefMailboxServer.start(self, reactor, extra_args=[
            "--motd", motd, "--advertise-version", advertise_version])
        self.addCleanup(srv.stop)
        return srv.url
