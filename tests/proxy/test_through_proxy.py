"""Transfers whose only way out is a proxy (docs/proxy.md), with real
proxies from Debian's packages: tinyproxy (HTTP CONNECT, without and with
BasicAuth) and microsocks (SOCKS5, without and with RFC 1929 user and
password), in the network of ``_net``: our CLI inside, where nftables lets
out nothing but TCP to the proxies; the Mailbox server, the relay and the
peer outside.

Every transfer test checks, besides the data: the proxy's own log shows
the Mailbox and the relay connections; the firewall dropped nothing (a
direct connection attempt would have been dropped and counted); the
human output says the proxy was used; and the proxy's password appears
neither in stdout, stderr nor the ``--dump-timing`` bundle.
"""
import os
import secrets

from twisted.internet import defer, reactor
from twisted.trial import unittest

from .._paths import reference_bin
from ._net import (
    DEAD_PORT,
    HTTP_AUTH_PORT,
    HTTP_PORT,
    MAILBOX_PORT,
    OUTSIDE,
    RELAY_PORT,
    SOCKS_AUTH_PORT,
    SOCKS_PORT,
    USER,
    ProxyNet,
)

# a failed run must end by itself well within this (docs/proxy.md, "Errors")
ERROR_DEADLINE = 10.0
RUN_DEADLINE = 90.0


def deadline(proc, seconds):
    """``proc.ended``, or a failure naming ``proc`` when it is still
    running after ``seconds`` (then it is killed)."""
    timer = reactor.callLater(seconds, proc.kill)
    d = defer.Deferred()

    def ended(status):
        if timer.active():
            timer.cancel()
            d.callback(status)
        else:
            d.errback(AssertionError(f"{proc.name} still ran after {seconds:g} s:\n"
                                     + proc.describe()))
    proc.ended.addCallback(ended)
    return d


class _ProxyTest(unittest.TestCase):
    timeout = 240

    @defer.inlineCallbacks
    def setUp(self):
        self.net = ProxyNet.build(self)
        yield self.net.start_servers()
        self.password = "pw-" + secrets.token_hex(8)
        self.timing_files = []

    def common(self):
        return ["--relay-url", self.net.relay_url, "--transit-helper", self.net.transit_helper]

    def ours_inside(self, proxy, *args, name, env=None, cwd=None):
        """Our CLI inside, with ``--proxy proxy`` (None: the proxy comes
        from ``env``)."""
        timing = os.path.join(self.net.tmp, f"timing-{name}.json")
        self.timing_files.append(timing)
        given = [] if proxy is None else ["--proxy", proxy]
        return self.net.ours("inside", "--dump-timing", timing, *self.common(), *args,
                             *given, name=name, env=env, cwd=cwd)

    def ours_outside(self, *args, name, cwd=None):
        return self.net.ours("outside", *self.common(), *args, name=name, cwd=cwd)

    def assertNoPassword(self, *procs):
        for proc in procs:
            self.assertNotIn(self.password.encode(), proc.stdout + proc.stderr, proc.name)
        for path in self.timing_files:
            # every run inside wrote its --dump-timing bundle, failed ones too
            with open(path, "rb") as f:
                bundle = f.read()
            self.assertNotIn(self.password.encode(), bundle, path)
            # the proxy is named there, redacted
            self.assertIn(f"{USER}:***@".encode(), bundle, path)

    def assertThroughProxy(self, port, proc, relay=True):
        log = self.net.logs[port]()
        self.assertIn(f"{OUTSIDE}:{MAILBOX_PORT}", log, "the proxy's log:\n" + log)
        if relay:
            self.assertIn(f"{OUTSIDE}:{RELAY_PORT}", log, "the proxy's log:\n" + log)
        self.assertIn(b"Connecting through the proxy", proc.stderr)
        self.assertEqual(self.net.bypassed(), 0,
                         "a connection was tried around the proxy (dropped by nftables)")

    def assertExit(self, proc, status):
        self.assertEqual(proc.status, status, proc.describe())

    def proxy_url(self, scheme, port, password=None):
        creds = f"{USER}:{password}@" if password else ""
        return f"{scheme}://{creds}{OUTSIDE}:{port}"

    @defer.inlineCallbacks
    def send_inside(self, proxy, *args, env=None):
        send = self.ours_inside(proxy, "send", "--no-qr", *args, name="sender", env=env)
        m = yield send.wait_for(rb"Wormhole code is: (\S+)")
        return send, m.group(1).decode("ascii")


class Transfers(_ProxyTest):

    @defer.inlineCallbacks
    def test_text_through_http_connect(self):
        yield self.net.start_tinyproxy(HTTP_PORT)
        send, code = yield self.send_inside(self.proxy_url("http", HTTP_PORT), "--text", "hi")
        recv = self.ours_outside("receive", code, name="receiver")
        yield defer.gatherResults([deadline(send, RUN_DEADLINE), deadline(recv, RUN_DEADLINE)])
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertEqual(recv.stdout, b"hi\n")
        self.assertThroughProxy(HTTP_PORT, send, relay=False)

    @defer.inlineCallbacks
    def test_text_through_socks5_from_the_environment(self):
        """The proxy named by $ALL_PROXY alone (docs/proxy.md, "Which proxy")."""
        yield self.net.start_microsocks(SOCKS_PORT)
        send, code = yield self.send_inside(
            None, "--text", "hi", env={"ALL_PROXY": self.proxy_url("socks5h", SOCKS_PORT)})
        recv = self.ours_outside("receive", code, name="receiver")
        yield defer.gatherResults([deadline(send, RUN_DEADLINE), deadline(recv, RUN_DEADLINE)])
        self.assertExit(send, 0)
        self.assertEqual(recv.stdout, b"hi\n")
        self.assertThroughProxy(SOCKS_PORT, send, relay=False)

    @defer.inlineCallbacks
    def test_file_over_the_relay_http_basic_auth(self):
        """Classic: a file over the relay, through tinyproxy with BasicAuth;
        the receiver is inside (the file comes in through the proxy)."""
        yield self.net.start_tinyproxy(HTTP_AUTH_PORT, self.password)
        src = os.path.join(self.net.tmp, "payload.bin")
        data = os.urandom(200_000)
        with open(src, "wb") as f:
            f.write(data)
        send = self.ours_outside("send", "--no-qr", "--classic", src, name="sender")
        m = yield send.wait_for(rb"Wormhole code is: (\S+)")
        into = os.path.join(self.net.tmp, "rx")
        os.makedirs(into)
        recv = self.ours_inside(self.proxy_url("http", HTTP_AUTH_PORT, self.password),
                                "receive", "--accept-file", m.group(1).decode(),
                                name="receiver", cwd=into)
        yield defer.gatherResults([deadline(send, RUN_DEADLINE), deadline(recv, RUN_DEADLINE)])
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        with open(os.path.join(into, "payload.bin"), "rb") as f:
            self.assertEqual(f.read(), data)
        self.assertThroughProxy(HTTP_AUTH_PORT, recv)
        self.assertIn(b"->relay:tcp:10.33.0.1:4001 (through the proxy http://alice:***@",
                      recv.stderr)
        self.assertNoPassword(send, recv)

    @defer.inlineCallbacks
    def test_folder_over_transfer_v2_socks5_auth(self):
        """transfer-v2 (Dilation's relay connection) with a folder, through
        microsocks with a user and password."""
        yield self.net.start_microsocks(SOCKS_AUTH_PORT, self.password)
        folder = os.path.join(self.net.tmp, "folder")
        os.makedirs(os.path.join(folder, "sub"))
        files = {"a.txt": b"alpha\n", os.path.join("sub", "b.bin"): os.urandom(50_000)}
        for rel, content in files.items():
            with open(os.path.join(folder, rel), "wb") as f:
                f.write(content)
        send, code = yield self.send_inside(
            self.proxy_url("socks5", SOCKS_AUTH_PORT, self.password), folder)
        into = os.path.join(self.net.tmp, "rx")
        os.makedirs(into)
        recv = self.ours_outside("receive", "--accept-file", code, name="receiver", cwd=into)
        yield defer.gatherResults([deadline(send, RUN_DEADLINE), deadline(recv, RUN_DEADLINE)])
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertIn(b"transfer-v2", send.stderr)
        for rel, content in files.items():
            with open(os.path.join(into, "folder", rel), "rb") as f:
                self.assertEqual(f.read(), content, rel)
        self.assertThroughProxy(SOCKS_AUTH_PORT, send)
        self.assertNoPassword(send, recv)

    @defer.inlineCallbacks
    def test_classic_with_the_reference_outside(self):
        """The reference 0.24 sends a file from outside; ours receives it
        inside, through tinyproxy."""
        yield self.net.start_tinyproxy(HTTP_PORT)
        src = os.path.join(self.net.tmp, "ref.bin")
        data = os.urandom(100_000)
        with open(src, "wb") as f:
            f.write(data)
        ref = self.net.spawn("outside", [reference_bin("wormhole"), *self.common(), "send",
                                         "--hide-progress", src], "reference sender")
        m = yield ref.wait_for(rb"Wormhole code is: (\S+)")
        into = os.path.join(self.net.tmp, "rx")
        os.makedirs(into)
        recv = self.ours_inside(self.proxy_url("http", HTTP_PORT), "receive", "--accept-file",
                                m.group(1).decode(), name="receiver", cwd=into)
        yield defer.gatherResults([deadline(ref, RUN_DEADLINE), deadline(recv, RUN_DEADLINE)])
        self.assertExit(ref, 0)
        self.assertExit(recv, 0)
        with open(os.path.join(into, "ref.bin"), "rb") as f:
            self.assertEqual(f.read(), data)
        self.assertThroughProxy(HTTP_PORT, recv)


class Failures(_ProxyTest):

    @defer.inlineCallbacks
    def assertOneErrorLine(self, proxy, words):
        send = self.ours_inside(proxy, "send", "--no-qr", "--text", "hi", name="sender")
        yield deadline(send, ERROR_DEADLINE)
        self.assertNotEqual(send.status, 0, send.describe())
        errors = [line for line in send.stderr.decode().splitlines() if "ERROR" in line]
        self.assertEqual(len(errors), 1, send.describe())
        self.assertTrue(errors[0].startswith("ERROR: "), errors[0])
        self.assertIn(words, errors[0])
        self.assertNotIn(b"Traceback", send.stderr)
        self.assertNoPassword(send)
        self.assertEqual(self.net.bypassed(), 0)

    @defer.inlineCallbacks
    def test_wrong_password_http(self):
        yield self.net.start_tinyproxy(HTTP_AUTH_PORT, "the-right-one")
        yield self.assertOneErrorLine(
            self.proxy_url("http", HTTP_AUTH_PORT, self.password),
            # tinyproxy says 401 where RFC 9110 has 407: both are read as a refusal
            f"the HTTP proxy http://{USER}:***@{OUTSIDE}:{HTTP_AUTH_PORT} refused the user "
            "name and password (40")

    @defer.inlineCallbacks
    def test_wrong_password_socks5(self):
        yield self.net.start_microsocks(SOCKS_AUTH_PORT, "the-right-one")
        yield self.assertOneErrorLine(
            self.proxy_url("socks5", SOCKS_AUTH_PORT, self.password),
            f"the SOCKS5 proxy socks5://{USER}:***@{OUTSIDE}:{SOCKS_AUTH_PORT} refused the "
            "user name and password")

    def test_unreachable_proxy(self):
        return self.assertOneErrorLine(
            self.proxy_url("socks5", DEAD_PORT, self.password),
            f"cannot reach the proxy socks5://{USER}:***@{OUTSIDE}:{DEAD_PORT}")


class NoProxy(_ProxyTest):

    @defer.inlineCallbacks
    def test_listed_host_is_dialled_directly(self):
        """NO_PROXY names the Mailbox server's address: the text goes
        without the proxy (the firewall's ``nodirect`` rule counts the
        packets, the proxy's log has no connection)."""
        self.net.allow_direct(MAILBOX_PORT)
        yield self.net.start_tinyproxy(HTTP_PORT)
        send = self.ours_inside(self.proxy_url("http", HTTP_PORT), "send", "--no-qr",
                                "--text", "hi", name="sender", env={"NO_PROXY": OUTSIDE})
        m = yield send.wait_for(rb"Wormhole code is: (\S+)")
        recv = self.ours_outside("receive", m.group(1).decode(), name="receiver")
        yield defer.gatherResults([deadline(send, RUN_DEADLINE), deadline(recv, RUN_DEADLINE)])
        self.assertExit(send, 0)
        self.assertEqual(recv.stdout, b"hi\n")
        self.assertGreater(self.net.direct_packets(), 0)
        self.assertNotIn(f"{OUTSIDE}:{MAILBOX_PORT}", self.net.logs[HTTP_PORT]())
        self.assertEqual(self.net.bypassed(), 0)
