"""Where the resume feature hashes kept bytes (transfer_v2._hashing): in
the reactor's thread pool the reactor keeps running meanwhile, a
cancelled hash stops at its next chunk and its result is dropped, the
synchronous runner answers at once, and the sender's check of a source
that changes while it is hashed refuses the resume."""
import os
import threading

from twisted.internet import defer, reactor, task
from twisted.trial import unittest

from wormhole.transfer_v2 import _hashing
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2 import _source as S

# a sparse file: reading it costs no disk, hashing it costs the CPU time
# a real kept file of this size would
LARGE = 384 * 1024 * 1024


class InThread(unittest.TestCase):
    def setUp(self):
        self.dir = self.mktemp()
        os.makedirs(self.dir)

    def sparse(self, size):
        path = os.path.join(self.dir, "kept")
        with open(path, "wb") as f:
            f.truncate(size)
        return path

    @defer.inlineCallbacks
    def test_reactor_keeps_running_while_hashing(self):
        """A LoopingCall keeps ticking while a few hundred MB are hashed in
        the thread pool (in the reactor thread it could tick only once: the
        hash would finish before the reactor ran again), and every byte was
        hashed."""
        path = self.sparse(LARGE)
        ticks = []
        ticker = task.LoopingCall(lambda: ticks.append(None))
        ticker.start(0.005)
        try:
            hasher, seen = yield _hashing.in_thread(reactor)(
                lambda cancelled: _hashing.hash_file(path, None, cancelled))
            during = len(ticks)
        finally:
            ticker.stop()
        self.assertEqual(seen, LARGE)
        self.assertEqual(len(hasher.digest()), 32)
        self.assertGreaterEqual(during, 3)

    @defer.inlineCallbacks
    def test_cancel_mid_hash(self):
        """Cancelling the Deferred while the thread hashes fails it with
        CancelledError at once; the thread stops before its next chunk
        (HashCancelled) and what it would have returned is dropped."""
        path = self.sparse(8 << 20)  # eight chunks
        started, ended = defer.Deferred(), defer.Deferred()
        go_on = threading.Event()
        asked = []

        def cancelled_after_first_chunk(cancelled):
            def ask():
                asked.append(None)
                if len(asked) == 2:  # one chunk hashed: let the test cancel
                    reactor.callFromThread(started.callback, None)
                    go_on.wait(30)
                return cancelled()
            try:
                return _hashing.hash_file(path, None, ask)
            except _hashing.HashCancelled:
                reactor.callFromThread(ended.callback, len(asked))
                raise

        d = _hashing.in_thread(reactor)(cancelled_after_first_chunk)
        yield started
        d.cancel()
        go_on.set()
        self.failureResultOf(d, defer.CancelledError)
        asks = yield ended
        self.assertEqual(asks, 2)  # the chunk after the cancel was never read

    def test_synchronous(self):
        """The synchronous runner has the result when it returns; an
        exception is the Deferred's failure."""
        self.assertEqual(self.successResultOf(
            _hashing.synchronous(lambda cancelled: cancelled())), False)

        def broken(cancelled):
            raise OSError("unreadable")
        self.failureResultOf(_hashing.synchronous(broken), OSError)


class ChangedWhileHashing(unittest.TestCase):
    def test_source_changed_during_hash_refused(self):
        """A file written while the sender hashes its prefix for a resume
        is not resumed from: prefix_hasher gives None and resume_point
        answers from the start, with why."""
        root = self.mktemp()
        os.makedirs(root)
        path = os.path.join(root, "big")
        data = os.urandom(3 << 20)
        with open(path, "wb") as f:
            f.write(data)
        out = S.prepare(path)
        prefix = M.new_hash()
        prefix.update(data[:2 << 20])
        accept = M.OfferAccept(2 << 20, prefix.digest())
        self.assertIsNotNone(S.resume_point(out, accept)[0].hasher)  # unchanged: resumed

        calls = []

        def writer_meanwhile():
            calls.append(None)
            if len(calls) == 2:  # after the first chunk
                with open(path, "r+b") as f:
                    f.seek(len(data) - 1)
                    f.write(b"\0")
                os.utime(path, ns=(1, out.files[0].mtime_ns + 10 ** 9))
            return False

        point, why = S.resume_point(out, accept, writer_meanwhile)
        self.assertEqual(point, S.FROM_START)
        self.assertIn("is not what the receiver kept", why)
