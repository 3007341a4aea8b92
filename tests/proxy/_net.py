"""A network whose only way out is a proxy (docs/proxy.md, "Tests").

Two network namespaces made for one test, joined by a veth pair:

    inside  10.33.0.2  -- our CLI; nftables lets out only TCP to the
                          proxies' ports on 10.33.0.1 (and loopback), and
                          counts every other packet it drops
    outside 10.33.0.1  -- the Mailbox server (port 4000) and the Transit
                          relay (4001), our twistd plugins; the proxies
                          (tinyproxy, microsocks); the peer outside

Every packet the inside sends past the proxy lands in the ``bypass``
counter; a test that reads a non-zero count has seen a direct connection
attempt, and fails. Namespace names start with a prefix unique to this
process and test; the teardown, registered before anything is made,
deletes only what this test made, and every process started here is
stopped by its PID. Needs root, ip(8), nft(8), tinyproxy and microsocks
(./dev installs them).
"""
import itertools
import os
import re
import shutil
import subprocess
import sys

from twisted.internet import defer, reactor
from twisted.internet.task import deferLater

from wormhole._proxy._url import ENVIRONMENT, NO_PROXY_ENVIRONMENT

from .._paths import REPO_ROOT
from ..cli._process import CLIProcess

INSIDE, OUTSIDE = "10.33.0.2", "10.33.0.1"
MAILBOX_PORT, RELAY_PORT = 4000, 4001
# the proxies' ports; DEAD_PORT is let out by the firewall but nothing
# listens there (the unreachable proxy)
HTTP_PORT, HTTP_AUTH_PORT, SOCKS_PORT, SOCKS_AUTH_PORT, DEAD_PORT = 8888, 8889, 1080, 1081, 1082
PROXY_PORTS = (HTTP_PORT, HTTP_AUTH_PORT, SOCKS_PORT, SOCKS_AUTH_PORT, DEAD_PORT)
USER = "alice"
_runs = itertools.count()


def _run(*argv):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True).stdout


def need_tools():
    missing = [t for t in ("ip", "nft", "tinyproxy", "microsocks")
               if shutil.which(t) is None and not os.access(f"/usr/sbin/{t}", os.X_OK)]
    if missing or os.geteuid() != 0:
        # a failure, never a skip: a skipped test hides a regression
        raise AssertionError("tests/proxy needs root, ip(8), nft(8), tinyproxy and microsocks "
                             f"(missing: {', '.join(missing) or 'root'}); `./dev test` "
                             "installs them")


def _bin(tool):
    return shutil.which(tool) or f"/usr/sbin/{tool}"


class ProxyNet:
    """``ns("inside"|"outside")``: namespace names; ``spawn(where, argv)``
    runs a process there; ``bypassed()`` the packets the firewall dropped."""

    def __init__(self, testcase, prefix, tmp):
        self.testcase = testcase
        self.prefix = prefix
        self.tmp = tmp
        self.made = []

    @classmethod
    def build(cls, testcase):
        need_tools()
        tmp = os.path.abspath(testcase.mktemp())
        os.makedirs(tmp)
        net = cls(testcase, f"p33n{os.getpid()}x{next(_runs)}", tmp)
        testcase.addCleanup(net.teardown)
        for where in ("inside", "outside"):
            _run("ip", "netns", "add", net.ns(where))
            net.made.append(net.ns(where))
            net.sh(where, "ip link set lo up")
        # no IPv6 inside: the kernel's own neighbour discovery and MLD
        # packets on the new link would land in the bypass counter
        net.sh("inside", "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
                         "net.ipv6.conf.default.disable_ipv6=1")
        _run("ip", "link", "add", "p33in", "netns", net.ns("inside"), "type", "veth",
             "peer", "name", "p33out", "netns", net.ns("outside"))
        net.sh("inside", f"ip addr add {INSIDE}/24 dev p33in && ip link set p33in up")
        net.sh("outside", f"ip addr add {OUTSIDE}/24 dev p33out && ip link set p33out up")
        ports = ", ".join(str(p) for p in PROXY_PORTS)
        net.sh("inside", "nft -f -", stdin=f"""
table inet p33 {{
    counter bypass {{ }}
    counter nodirect {{ }}
    chain out {{
        type filter hook output priority 0; policy accept;
        oifname "lo" accept
        ip daddr {OUTSIDE} tcp dport {{ {ports} }} accept
        counter name "bypass" drop
    }}
}}
""")
        return net

    def ns(self, where):
        return f"{self.prefix}{where}"

    def sh(self, where, command, stdin=None):
        return subprocess.run(["ip", "netns", "exec", self.ns(where), "sh", "-c", command],
                              input=stdin, check=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True).stdout

    def allow_direct(self, port):
        """Let the inside reach ``OUTSIDE:port`` without the proxy (the
        NO_PROXY test), counting those packets in ``nodirect``."""
        self.sh("inside", f"nft insert rule inet p33 out ip daddr {OUTSIDE} tcp dport {port} "
                          'counter name "nodirect" accept')

    def _counter(self, name):
        out = self.sh("inside", f"nft list counter inet p33 {name}")
        return int(re.search(r"packets (\d+)", out).group(1))

    def bypassed(self):
        return self._counter("bypass")

    def direct_packets(self):
        return self._counter("nodirect")

    def spawn(self, where, argv, name, env=None, stdin=None, cwd=None):
        """A process in namespace ``where``, killed in cleanup if it is
        still running; ``ip netns exec`` execs it, so its PID is the
        program's own."""
        env = dict(env or {})
        return CLIProcess.spawn(self.testcase, reactor,
                                ["ip", "netns", "exec", self.ns(where)] + list(argv),
                                stdin=stdin, name=name, env=env, cwd=cwd)

    def ours(self, where, *args, name, env=None, stdin=None, cwd=None):
        """Our ``wormhole`` CLI from this checkout (PYTHONPATH: its src),
        with no proxy from the test's own environment (empty is unset)."""
        env = dict({name: "" for name in ENVIRONMENT + NO_PROXY_ENVIRONMENT}, **(env or {}),
                   PYTHONPATH=os.path.join(REPO_ROOT, "src"))
        return self.spawn(where, [sys.executable, "-m", "wormhole", *args], name, env=env,
                          stdin=stdin, cwd=cwd)

    # -- servers and proxies, all outside ---------------------------------
    @defer.inlineCallbacks
    def start_servers(self):
        twistd = os.path.join(os.path.dirname(sys.executable), "twistd")
        src = {"PYTHONPATH": os.path.join(REPO_ROOT, "src")}
        db = os.path.join(self.tmp, "mailbox.sqlite")
        self.mailbox = self.spawn("outside", [
            twistd, "-n", "--pidfile=", "wormhole-mailbox", "--channel-db", db,
            "--port", f"tcp:{MAILBOX_PORT}:interface={OUTSIDE}"], "mailbox", env=src)
        self.relay = self.spawn("outside", [
            twistd, "-n", "--pidfile=", "transitrelay",
            "--port", f"tcp:{RELAY_PORT}:interface={OUTSIDE}"], "relay", env=src)
        yield self.listening(MAILBOX_PORT, RELAY_PORT)

    @property
    def relay_url(self):
        return f"ws://{OUTSIDE}:{MAILBOX_PORT}/v1"

    @property
    def transit_helper(self):
        return f"tcp:{OUTSIDE}:{RELAY_PORT}"

    def start_tinyproxy(self, port, password=None):
        """tinyproxy on ``port``, with ``BasicAuth USER password`` when
        given; its log (every CONNECT) is ``self.logs[port]``."""
        log = os.path.join(self.tmp, f"tinyproxy-{port}.log")
        conf = os.path.join(self.tmp, f"tinyproxy-{port}.conf")
        lines = [f"Port {port}", f"Listen {OUTSIDE}", "Timeout 120", "MaxClients 20",
                 "LogLevel Info", f'LogFile "{log}"', f"Allow {INSIDE}", f"Allow {OUTSIDE}"]
        if password is not None:
            lines.append(f"BasicAuth {USER} {password}")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.spawn("outside", [_bin("tinyproxy"), "-d", "-c", conf], f"tinyproxy-{port}")
        self.logs = getattr(self, "logs", {})
        self.logs[port] = lambda: open(log, errors="replace").read() if os.path.exists(log) \
            else ""
        return self.listening(port)

    def start_microsocks(self, port, password=None):
        """microsocks (SOCKS5) on ``port``, with RFC 1929 user and password
        when given; it logs each connection on its stderr."""
        argv = [_bin("microsocks"), "-i", OUTSIDE, "-p", str(port)]
        if password is not None:
            argv += ["-u", USER, "-P", password]
        proc = self.spawn("outside", argv, f"microsocks-{port}")
        self.logs = getattr(self, "logs", {})
        self.logs[port] = lambda: (proc.stdout + proc.stderr).decode("utf-8", "replace")
        return self.listening(port)

    @defer.inlineCallbacks
    def listening(self, *ports, tries=100):
        """Wait (10 s at most) until every port listens outside."""
        for _ in range(tries):
            out = self.sh("outside", "ss -Hltn")
            if all(f"{OUTSIDE}:{p} " in out for p in ports):
                return
            yield deferLater(reactor, 0.1, lambda: None)
        raise AssertionError(f"nothing listens on {ports} outside after 10 s:\n{out}")

    def teardown(self):
        for name in self.made:
            subprocess.run(["ip", "netns", "delete", name], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
