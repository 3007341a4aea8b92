"""Servers and CLIs on the small internet of ``_net``: our Mailbox server
and Transit relay in the public namespace, our CLI (or the reference
0.24's) in a host's namespace. Every process is killed by its PID in
cleanup (tests/cli/_process.py)."""
import hashlib
import itertools
import os
import re
import sys

from twisted.internet import defer, reactor

from ..cli._process import CLIProcess
from ..files._support import ref_bin
from ._net import PUBLIC

MAILBOX_PORT = 4000
RELAY_PORT = 4001
URL = f"ws://{PUBLIC}:{MAILBOX_PORT}/v1"
HELPER = f"tcp:{PUBLIC}:{RELAY_PORT}"
ENV = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONUNBUFFERED": "1"}
PATH_LINE = re.compile(rb"(?:Sending|Receiving) \((.*)\)\.\.")
_codes = itertools.count(1)


def _twistd():
    return os.path.join(os.path.dirname(sys.executable), "twistd")


def spawn(testcase, net, role, argv, name, env=None, cwd=None):
    return CLIProcess.spawn(testcase, reactor, net.argv(role, argv), name=name,
                            env=dict(ENV, **(env or {})), cwd=cwd)


@defer.inlineCallbacks
def start_servers(testcase, net):
    """Our Mailbox server and relay on the public segment."""
    for plugin, port in (("wormhole-mailbox", MAILBOX_PORT), ("transitrelay", RELAY_PORT)):
        basedir = os.path.abspath(testcase.mktemp())
        os.makedirs(basedir)
        run = spawn(testcase, net, "pub",
                    [_twistd(), "-n", "--pidfile=", "--logfile=-", plugin,
                     f"--port=tcp:{port}:interface={PUBLIC}"], plugin, cwd=basedir)
        yield run.wait_for(rb"starting on %d" % port)


def write_file(path, size):
    with open(path, "wb") as f:
        f.write(os.urandom(size))
    return sha256_of(path)


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def path_line(run):
    m = PATH_LINE.search(run.stderr)
    return m.group(1).decode() if m else None


@defer.inlineCallbacks
def transfer(testcase, net, sender, receiver, size=300_000, extra_env=None,
             send_args=(), recv_args=(), ref_receiver=False, top_args=(),
             recv_top_args=(), ref_sender=False):
    """Our CLI sends a file from host ``sender`` to host ``receiver`` (the
    reference 0.24 CLI receives with ``ref_receiver``, sends with
    ``ref_sender``); returns (send run, receive run, seconds from start to
    the sender's path line: the time to the first byte)."""
    src = os.path.abspath(testcase.mktemp())
    os.makedirs(src)
    digest = write_file(os.path.join(src, "data.bin"), size)
    out = os.path.abspath(testcase.mktemp())
    os.makedirs(out)
    code = f"{next(_codes)}-nat-punch"
    cli = [sys.executable, "-m", "wormhole.cli", "--relay-url", URL,
           "--transit-helper", HELPER, *top_args]
    ref_cli = [ref_bin("wormhole"), "--relay-url", URL, "--transit-helper", HELPER]
    recv_cli = ref_cli if ref_receiver else cli
    send_cli = cli
    if ref_sender:
        send_cli, send_args = ref_cli, ("--no-qr", *send_args)
    started = reactor.seconds()
    send = spawn(testcase, net, sender,
                 send_cli + ["send", "--hide-progress", "--code", code, *send_args,
                             "data.bin"], f"sender on {sender}", env=extra_env, cwd=src)
    recv = spawn(testcase, net, receiver,
                 recv_cli + [*recv_top_args, "receive", "--hide-progress", "--accept-file",
                             *recv_args, code], f"receiver on {receiver}", env=extra_env,
                 cwd=out)
    seen = []
    send.wait_for(PATH_LINE).addCallbacks(
        lambda m: seen.append(reactor.seconds() - started), lambda f: None)

    def ended(status, other):
        if status != 0:
            other.kill()
        return status
    yield defer.gatherResults([send.ended.addCallback(ended, recv),
                               recv.ended.addCallback(ended, send)])
    for run in (send, recv):
        testcase.assertEqual(run.status, 0, send.describe() + "\n" + recv.describe())
    testcase.assertEqual(sha256_of(os.path.join(out, "data.bin")), digest)
    return send, recv, (seen or [None])[0]
