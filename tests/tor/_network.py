"""A private Tor network on 127.0.0.1 (``TestingTorNetwork``) for the
end-to-end Tor tests: three directory authorities and two more relays,
every one of them an exit, and a client Tor with a control port.

Facts it relies on (measured on these machines, see the project's TOR.md
notes): txtorcon refuses private address literals, so tests name
``localhost`` and the client maps it to 127.0.0.1; exits accept ``*:*``
(a policy of 127.0.0.1 alone makes clients see no usable exit), so the
whole network runs in a loopback-only network namespace (``unshare -n``,
entered by the test process for the module: see ``enter_loopback_namespace``)
where "everything" is loopback; exits refuse streams until they have the
consensus, hence ``RefuseUnknownExits 0`` and waiting for every node's
consensus before a client is used.

Every process is started by PID and stopped by PID (``stop()``), also on
failure. Run ``python -m tests.tor._network`` (as root) to measure how long
the network takes to bootstrap.
"""

import ctypes
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

CLONE_NEWNET = 0x40000000
TOR = shutil.which("tor") or "/usr/sbin/tor"
TOR_GENCERT = shutil.which("tor-gencert") or "/usr/bin/tor-gencert"
AUTHORITIES = 3
RELAYS = 2


def _free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class LoopbackNamespace:
    """A fresh network namespace with only loopback up, which the calling
    thread (the reactor's) enters with ``enter()`` and leaves with
    ``leave()``; sockets made and processes spawned meanwhile live in it,
    and other helpers' processes and ports are out of sight. Needs root."""

    def __init__(self):
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._home = os.open(f"/proc/self/task/{_gettid()}/ns/net", os.O_RDONLY)
        if self._libc.unshare(CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            os.close(self._home)
            raise OSError(err, "unshare(CLONE_NEWNET) failed (the Tor tests need root): "
                          + os.strerror(err))
        self._ns = os.open(f"/proc/self/task/{_gettid()}/ns/net", os.O_RDONLY)
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        self.leave()

    def _setns(self, fd):
        if self._libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, "setns failed: " + os.strerror(err))

    def enter(self):
        self._setns(self._ns)

    def leave(self):
        self._setns(self._home)

    def close(self):
        """Forget the namespace (it lives on while sockets or processes in
        it do)."""
        os.close(self._ns)
        os.close(self._home)


def _die_with_parent():
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _gettid():
    import threading
    return threading.get_native_id()  # namespaces belong to threads


class Node:
    def __init__(self, base, name, authority=False, relay=True):
        self.name = name
        self.dir = os.path.join(base, name)
        os.makedirs(self.dir, mode=0o700)
        self.authority = authority
        self.relay = relay
        self.or_port = _free_port() if relay else None
        self.dir_port = _free_port() if relay else None
        # the client takes Tor's usual ports (free in the namespace), so
        # "--tor" finds it where it finds a system Tor
        self.socks_port = None if relay else 9050
        self.control_port = None if relay else 9051
        self.process = None
        self.output = ""  # tor's notices so far (stdout), read by _read
        self.fingerprint = None
        self.v3ident = None

    @property
    def log(self):
        return os.path.join(self.dir, "notice.log")

    def make_authority_keys(self):
        keys = os.path.join(self.dir, "keys")
        os.makedirs(keys, mode=0o700)
        subprocess.run([TOR_GENCERT, "--create-identity-key", "-m", "12",
                        "-a", f"127.0.0.1:{self.dir_port}",
                        "-i", os.path.join(keys, "authority_identity_key"),
                        "-s", os.path.join(keys, "authority_signing_key"),
                        "-c", os.path.join(keys, "authority_certificate"),
                        "--passphrase-fd", "0"],
                       input=b"\n", check=True, capture_output=True, cwd=self.dir)
        with open(os.path.join(keys, "authority_certificate")) as f:
            self.v3ident = re.search(r"^fingerprint (\w+)", f.read(), re.M).group(1)

    def list_fingerprint(self):
        out = subprocess.run([TOR, "--list-fingerprint", "--DataDirectory", self.dir,
                              "--ORPort", str(self.or_port), "--Nickname", self.name,
                              "-f", "/dev/null", "--ignore-missing-torrc"],
                             check=True, capture_output=True, text=True).stdout
        self.fingerprint = out.split()[-1] if self.name in out else out.strip().split()[-1]
        # --list-fingerprint prints "NICK FP FP FP ..." (spaced groups)
        line = [ln for ln in out.splitlines() if ln.startswith(self.name)][-1]
        self.fingerprint = "".join(line.split()[1:])

    def dir_authority_line(self):
        return (f"{self.name} orport={self.or_port} no-v2 v3ident={self.v3ident} "
                f"127.0.0.1:{self.dir_port} {self.fingerprint}")

    def torrc(self, authorities):
        lines = [
            "TestingTorNetwork 1",
            f"DataDirectory {self.dir}",
            "RunAsDaemon 0",
            "Address 127.0.0.1",
            f"Nickname {self.name}",
            "ContactInfo wormhole-tests",
            f"Log notice file {self.log}",
            # the same notices on stdout: what PrivateTorNetwork waits on
            "Log notice stdout",
            "SafeLogging 0",
            "ShutdownWaitLength 0",
            "AssumeReachable 1",
            "DisableDebuggerAttachment 0",
            # the whole schedule in seconds, not minutes (TestingTorNetwork
            # allows it): the first consensus ~7 s after start
            "TestingV3AuthInitialVotingInterval 5",
            "TestingV3AuthInitialVoteDelay 2",
            "TestingV3AuthInitialDistDelay 2",
            "TestingV3AuthVotingStartOffset 0",
            "V3AuthVotingInterval 10",
            "V3AuthVoteDelay 2",
            "V3AuthDistDelay 2",
            "TestingDirAuthVoteExit *",
            "TestingDirAuthVoteGuard *",
            "TestingDirAuthVoteHSDir *",
            "TestingMinExitFlagThreshold 0",
            "PathsNeededToBuildCircuits 0.25",
        ] + [f"DirAuthority {a.dir_authority_line()}" for a in authorities]
        if self.relay:
            lines += [
                "SocksPort 0",
                f"ORPort 127.0.0.1:{self.or_port}",
                f"DirPort 127.0.0.1:{self.dir_port}",
                # inside the loopback-only namespace "anywhere" is loopback
                "ExitRelay 1",
                "ExitPolicy accept *:*",
                "ExitPolicyRejectPrivate 0",
                "ExitPolicyRejectLocalInterfaces 0",
                "RefuseUnknownExits 0",
            ]
        else:
            lines += [
                f"SocksPort 127.0.0.1:{self.socks_port}",
                f"ControlPort 127.0.0.1:{self.control_port}",
                "CookieAuthentication 0",
                # tests name "localhost" (txtorcon refuses 127.0.0.1)
                "MapAddress localhost 127.0.0.1",
            ]
        if self.authority:
            lines += ["AuthoritativeDirectory 1", "V3AuthoritativeDirectory 1"]
        path = os.path.join(self.dir, "torrc")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def start(self, authorities, changed):
        """Start tor; every line it prints, and its end, notify
        ``changed`` (a threading.Condition)."""
        torrc = self.torrc(authorities)
        # tor dies with the test process, whatever happens to it
        self.process = subprocess.Popen([TOR, "-f", torrc], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, cwd=self.dir,
                                        preexec_fn=_die_with_parent)
        threading.Thread(target=self._read, args=(self.process, changed), daemon=True,
                         name=f"tor {self.name} output").start()

    def _read(self, process, changed):
        # drained for as long as tor runs (a full pipe would stop it);
        # stdout.log keeps everything for the error messages
        with open(os.path.join(self.dir, "stdout.log"), "wb") as log:
            for line in process.stdout:
                log.write(line)
                log.flush()
                with changed:
                    self.output += line.decode("utf-8", "replace")
                    changed.notify_all()
        process.wait()
        with changed:
            changed.notify_all()

    def log_text(self, name="notice.log"):
        try:
            with open(os.path.join(self.dir, name)) as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        p, self.process = self.process, None
        if p is not None and p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


class PrivateTorNetwork:
    """Start with ``start()`` (blocks until the client bootstrapped, or
    raises with the logs' last lines), stop with ``stop()``."""

    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="wormhole-tor-net-")
        self.authorities = [Node(self.base, f"auth{i}", authority=True)
                            for i in range(AUTHORITIES)]
        self.relays = [Node(self.base, f"relay{i}") for i in range(RELAYS)]
        self.client = Node(self.base, "client", relay=False)
        self.timings = {}
        self._changed = threading.Condition()  # a node printed or ended

    @property
    def nodes(self):
        return self.authorities + self.relays + [self.client]

    def dir_authority_lines(self):
        return [a.dir_authority_line() for a in self.authorities]

    def start(self, timeout=90.0):
        t0 = time.monotonic()
        for a in self.authorities:
            a.make_authority_keys()
        for n in self.authorities + self.relays:
            n.list_fingerprint()
        self.timings["keys_s"] = time.monotonic() - t0
        try:
            for n in self.nodes:
                n.start(self.authorities, self._changed)
            self._wait(lambda: all("Bootstrapped 100%" in n.output for n in self.nodes),
                       t0 + timeout, "every node to bootstrap")
            self.timings["bootstrap_s"] = time.monotonic() - t0
        except Exception:
            self.stop()
            raise

    def _wait(self, predicate, deadline, what):
        """Until ``predicate()`` holds, woken by each line a node prints
        (no polling); a node that exits, or the deadline, raises."""
        hupped = False
        with self._changed:
            while not predicate():
                for n in self.nodes:
                    if n.process.poll() is not None:
                        raise RuntimeError(f"tor {n.name} exited: "
                                           f"{n.log_text('stdout.log')[-2000:]}")
                # once the authorities published a consensus, a SIGHUP makes
                # everyone fetch it now rather than after its retry delay
                if not hupped and any("Consensus computed" in a.output or
                                      "Published ns consensus" in a.output
                                      for a in self.authorities):
                    hupped = True
                    for n in self.nodes:
                        n.process.send_signal(signal.SIGHUP)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._changed.wait(remaining)
            else:
                return
        tails = "\n".join(f"--- {n.name}\n" + "\n".join(n.log_text().splitlines()[-5:])
                          for n in self.nodes)
        raise RuntimeError(f"timed out waiting for {what}:\n{tails}")

    def stop(self):
        for n in self.nodes:
            n.stop()
        shutil.rmtree(self.base, ignore_errors=True)


if __name__ == "__main__":
    ns = LoopbackNamespace()
    ns.enter()
    net = PrivateTorNetwork()
    try:
        net.start()
        print("bootstrapped:", net.timings)
    finally:
        net.stop()
        ns.leave()
