"""Mailbox servers for the interop tests: the reference's and ours as
``twistd -n`` subprocesses on free 127.0.0.1 ports, ours in-process, and
their usage records.
"""
import os
import sqlite3
import sys

from twisted.internet import defer, error, protocol
from twisted.internet.task import deferLater

from .processes import POLL_INTERVAL, ProcessFailed, new_dir, spawn
from .reference import ref_bin


@defer.inlineCallbacks
def wait_until_listening(reactor, port, timeout=30.0):
    """Poll until 127.0.0.1:port accepts a TCP connection."""
    from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
    deadline = reactor.seconds() + timeout
    while True:
        try:
            p = yield connectProtocol(
                TCP4ClientEndpoint(reactor, "127.0.0.1", port, timeout=5),
                protocol.Protocol())
        except error.ConnectError:
            if reactor.seconds() > deadline:
                raise
            yield deferLater(reactor, POLL_INTERVAL, lambda: None)
        else:
            p.transport.loseConnection()
            return


@defer.inlineCallbacks
def start_twistd(testcase, reactor, twistd, plugin, name, basedir, args,
                 probe=True, port=0):
    """``twistd -n PLUGIN --port tcp:PORT:interface=127.0.0.1 ARGS`` in
    ``basedir``; returns (ProcessRun, port) once the port accepts TCP.
    ``port=0`` (the default) lets the kernel pick a free one.

    ``probe=False`` skips the test connection: a Transit relay would count
    it as an "empty" connection in its usage.  twistd logs "starting on
    PORT" only after listen(), so the port is ready either way."""
    argv = [twistd, "-n", "--pidfile=", plugin,
            # port 0: the kernel picks a free port, which twistd's log
            # line "<Factory> starting on PORT" tells us
            "--port", "tcp:%d:interface=127.0.0.1" % port] + list(args)
    run = spawn(testcase, reactor, argv, name, cwd=basedir, timeout=600)
    try:
        m = yield run.wait_for_line(rb"\w+ starting on (\d+)")
    except ProcessFailed as e:
        testcase.fail("%s did not start: %s" % (name, e))
    port = int(m.group(1))
    if probe:
        yield wait_until_listening(reactor, port)
    return run, port


class TwistdMailboxServer:
    """A mailbox server run as ``twistd -n wormhole-mailbox`` on a free
    127.0.0.1 port, with the reference's options: the reference's
    (magic-wormhole-mailbox-server 0.8) or ours, by ``twistd`` path."""

    def __init__(self, run, port, basedir):
        self._run = run
        self.port = port
        self.basedir = basedir
        self.url = "ws://127.0.0.1:%d/v1" % port
        self.usage_db = os.path.join(basedir, "usage.sqlite")

    @classmethod
    @defer.inlineCallbacks
    def start(cls, testcase, reactor, twistd, name, extra_args=(),
              port=0, basedir=None):
        """``port``/``basedir`` of a stopped server restart it with the
        same port and databases."""
        basedir = basedir or new_dir(testcase)
        run, port = yield start_twistd(
            testcase, reactor, twistd, "wormhole-mailbox", name, basedir,
            ["--channel-db", os.path.join(basedir, "channel.sqlite"),
             "--usage-db", os.path.join(basedir, "usage.sqlite")]
            + list(extra_args), port=port)
        return cls(run, port, basedir)

    def usage(self):
        """The usage DB as [{"kind", "result", "app_id"}] (the shape of our
        in-process server's ``usage()``).  Both servers keep the
        reference's tables ``mailboxes`` and ``nameplates``
        (docs/interop.md, "Usage DB")."""
        if not os.path.exists(self.usage_db):
            return []
        conn = sqlite3.connect(self.usage_db)
        try:
            tables = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
            rows = []
            for table, kind in (("mailboxes", "mailbox"),
                                ("nameplates", "nameplate")):
                if table in tables:
                    rows += [{"kind": kind, "result": r, "app_id": a}
                             for a, r in conn.execute(
                                 "SELECT app_id, result FROM " + table)]
            return rows
        finally:
            conn.close()

    def stop(self):
        return self._run.kill()


class RefMailboxServer(TwistdMailboxServer):
    """The reference mailbox server (magic-wormhole-mailbox-server 0.8)."""

    @classmethod
    def start(cls, testcase, reactor, extra_args=(), port=0, basedir=None):
        return super().start(testcase, reactor, ref_bin("twistd"),
                             "reference mailbox server", extra_args,
                             port=port, basedir=basedir)


def our_twistd():
    """Our venv's twistd (finds our plugin through src/twisted/plugins)."""
    return os.path.join(os.path.dirname(sys.executable), "twistd")


@defer.inlineCallbacks
def start_our_server(testcase, reactor):
    """Our mailbox server, in-process, on a free 127.0.0.1 port."""
    try:
        from wormhole_mailbox.testing import start_mailbox_server
    except ImportError as e:
        testcase.fail("our mailbox server is not available "
                      "(wormhole_mailbox.testing.start_mailbox_server): %s"
                      % (e,))
    srv = yield start_mailbox_server(reactor, port=0)
    testcase.addCleanup(srv.stop)
    return srv


@defer.inlineCallbacks
def wait_for_moods(reactor, server, predicate, timeout=30.0):
    """Poll ``server.usage()`` until ``predicate(rows)`` holds.  A server
    writes a mailbox's usage row when its last side closes, which may land
    a moment after the clients' processes exit."""
    deadline = reactor.seconds() + timeout
    while True:
        rows = list(server.usage())
        if predicate(rows):
            return rows
        if reactor.seconds() > deadline:
            return rows
        yield deferLater(reactor, POLL_INTERVAL, lambda: None)


def mailbox_moods(rows):
    return sorted(r["result"] for r in rows if r["kind"] == "mailbox")
