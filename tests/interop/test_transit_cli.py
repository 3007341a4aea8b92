"""File transfer between reference CLIs through OUR Transit relay (and our
mailbox server): the relay as a drop-in replacement at full-stack level.

Both CLIs run with ``--no-listen``, so neither offers direct hints (the
reference would advertise every local interface address otherwise, and
tests here connect to 127.0.0.1 only): the only way the file can travel is
the relay hint ``tcp:127.0.0.1:PORT`` each side got from ``--transit-helper``.
The same transfer through the reference relay is the baseline.
"""
import hashlib
import os
import sqlite3

from twisted.internet import defer, reactor

from . import harness
from .harness import InteropTestCase, ref_cli_argv

SIZE = 300 * 1000 + 7   # several Transit records, not a round number


class RelayedFileTransfer:
    """Mixin; ``start_relay()`` returns the relay's port and a function
    returning its usage records as [{"mood": ...}]."""

    @defer.inlineCallbacks
    def test_reference_cli_file_through_relay(self):
        """A file sent by the reference CLI arrives byte-identical at the
        reference receiver, relayed; the relay records one happy pair that
        carried at least the file."""
        srv = yield self.start_our_server()
        port, usage = yield self.start_relay()
        transit = "tcp:127.0.0.1:%d" % port
        src = harness.new_dir(self)
        data = os.urandom(SIZE)
        with open(os.path.join(src, "payload.bin"), "wb") as f:
            f.write(data)
        out = os.path.join(harness.new_dir(self), "received.bin")
        code = "17-relayed-file"
        send = self.spawn(ref_cli_argv(srv.url, "send", "--no-listen",
                                       "--hide-progress", "--code", code,
                                       "payload.bin", transit=transit),
                          "reference sender", cwd=src)
        recv = self.spawn(ref_cli_argv(srv.url, "receive", "--no-listen",
                                       "--hide-progress", "--accept-file",
                                       "-o", out, code, transit=transit),
                          "reference receiver")
        yield self.wait_all([send, recv])
        self.assertExited(send)
        self.assertExited(recv)
        with open(out, "rb") as f:
            got = f.read()
        self.assertEqual(hashlib.sha256(got).hexdigest(),
                         hashlib.sha256(data).hexdigest())
        yield self.poll_until(lambda: usage(), "the relay's usage record")
        records = usage()
        self.assertEqual([r["mood"] for r in records], ["happy"])
        self.assertGreaterEqual(records[0]["total_bytes"], SIZE)


class ThroughOurRelay(RelayedFileTransfer, InteropTestCase):

    @defer.inlineCallbacks
    def start_relay(self):
        from wormhole_relay.testing import start_transit_relay
        r = yield start_transit_relay(reactor)
        self.addCleanup(r.stop)
        return r.port, r.usage


class TwistdRelay:
    """A relay run as ``twistd -n transitrelay --usage-db F``; usage read
    from the SQLite ``usage`` table (the reference relay's schema, which
    ours writes too)."""

    @defer.inlineCallbacks
    def start_relay(self):
        basedir = harness.new_dir(self)
        db = os.path.join(basedir, "usage.sqlite")
        _, port = yield harness.start_twistd(
            self, reactor, self.twistd(), "transitrelay", "transit relay",
            basedir, ["--usage-db", db], probe=False)

        def usage():
            if not os.path.exists(db):
                return []
            conn = sqlite3.connect(db)
            try:
                return [{"mood": m, "total_bytes": b} for m, b in
                        conn.execute("SELECT result, total_bytes FROM usage")]
            except sqlite3.OperationalError:
                return []  # not created yet
            finally:
                conn.close()
        return port, usage


class ThroughReferenceRelay(TwistdRelay, RelayedFileTransfer,
                            InteropTestCase):
    """The baseline: the reference relay."""

    def twistd(self):
        return harness.ref_bin("twistd")


class ThroughOurTwistdRelay(TwistdRelay, RelayedFileTransfer,
                            InteropTestCase):
    """Ours with the reference's command line and usage DB."""

    def twistd(self):
        return harness.our_twistd()
