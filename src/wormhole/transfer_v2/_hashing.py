"""Where the resume feature's hashing runs (docs/transfer-v2.md "Resume").

Both sides hash the bytes a resumed transfer keeps (about a second per
GB): in the reactor thread that would stall every connection, Dilation's
keepalives included, for as long. A *runner* takes ``work(cancelled)``
(a function that calls ``cancelled()`` between chunks and raises
``HashCancelled`` when it says so) and returns a Deferred of its result;
cancelling that Deferred makes the work stop at its next chunk, and its
result, if any, is dropped. ``in_thread(reactor)`` runs the work in the
reactor's thread pool (hashlib releases the GIL for large updates);
``synchronous`` runs it at once, for tests and callers without threads.
"""
import os
import threading

from twisted.internet import defer, threads

from .._landing import _nofollow
from . import _messages as M


class HashCancelled(Exception):
    """The offer ended while its kept bytes were being hashed."""


def synchronous(work):
    """Run ``work`` now; the Deferred has fired when this returns."""
    return defer.maybeDeferred(work, never)


def in_thread(reactor):
    """A runner that hashes in ``reactor``'s thread pool."""

    def run(work):
        stop = threading.Event()
        result = defer.Deferred(lambda d: stop.set())

        def deliver(outcome, fire):
            if not result.called:  # else cancelled: nobody waits any more
                fire(outcome)

        worker = threads.deferToThreadPool(reactor, reactor.getThreadPool(), work,
                                           stop.is_set)
        worker.addCallbacks(deliver, deliver, callbackArgs=(result.callback,),
                            errbackArgs=(result.errback,))
        return result

    return run


def checked(cancelled):
    """Raise HashCancelled when ``cancelled()`` says the work is no longer wanted."""
    if cancelled():
        raise HashCancelled()


_CHUNK = 1 << 20  # large: hashlib releases the GIL only for updates over 2 KiB


def never():
    return False


def hash_file(path, nbytes=None, cancelled=never, follow=True):
    """The BLAKE2b state after the first ``nbytes`` (all) of ``path``, and
    how many bytes it saw (fewer when the file is shorter). ``follow=False``
    for what the receiver kept in its folder: a regular file, never
    through a link (``_landing._nofollow``)."""
    hasher = M.new_hash()
    seen = 0
    with (open(path, "rb") if follow else os.fdopen(_nofollow.reopen(path), "rb")) as f:
        while nbytes is None or seen < nbytes:
            checked(cancelled)
            chunk = f.read(_CHUNK if nbytes is None else min(_CHUNK, nbytes - seen))
            if not chunk:
                break
            hasher.update(chunk)
            seen += len(chunk)
    return hasher, seen
