"""Bytes arriving for a file, under a hidden temporary name beside it,
given the final name only when all of them are on disk (docs/cli.md
"Receiving files safely"; spec 004 9.2).

The temporary name (``_names.temporary_prefix`` plus tempfile's random
part, created ``O_EXCL | O_NOFOLLOW`` by ``mkstemp``) fits beside any
legal final name; the file is private (0600) while it fills and gets what
``open()`` would have given it (0666 less the umask) before it is linked
to its final name, which it never replaces (``link()`` fails on an
existing name, a link included).
"""
import hashlib
import os

from . import _nofollow
from ._errors import Refused
from ._names import temporary_prefix


def default_mode(mode):
    """``mode`` less the umask: what ``open()``/``mkdir()`` would give."""
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


class PartialFile:
    """Bytes arriving for ``target``, under a temporary name beside it,
    hashed on the way in with ``hasher`` (SHA-256 for classic receive,
    transfer-v2 gives its BLAKE2b)."""

    def __init__(self, target, hasher=None):
        self.target = target
        directory, name = os.path.split(target)
        fd, self.path = _nofollow.create_temporary(directory, temporary_prefix(name))
        self._f = os.fdopen(fd, "wb")
        self._hash = hashlib.sha256() if hasher is None else hasher
        self.size = 0

    def write(self, data):
        self._f.write(data)
        self._hash.update(data)
        self.size += len(data)

    def hexdigest(self):
        return self._hash.hexdigest()

    def finish(self):
        """Flush to disk (fsync) and return the hash (hex) of the bytes.

        The hash is of the bytes as they were written, computed on the
        way in: reading the whole file back to hash it again cost a
        second pass and a read of every byte (a quarter of the receiver's
        CPU, docs/performance.md) and caught nothing the fsync does not
        report: every record was authenticated (SecretBox, spec 004 6.2;
        Noise for transfer-v2) before it was written. ``commit`` (the
        link) still comes only after this.
        """
        if not self._f.closed:
            self._f.flush()
            # its final mode, on the descriptor: never through a name
            os.fchmod(self._f.fileno(), default_mode(0o666))
            os.fsync(self._f.fileno())
            self._f.close()
        return self._hash.hexdigest()

    def commit(self):
        """Give the verified file its final name, never replacing one
        that appeared meanwhile."""
        self.finish()
        try:
            os.link(self.path, self.target)
        except FileExistsError:
            self.abort()
            raise Refused(f"refusing to overwrite existing '{self.target}'") from None
        _nofollow.remove(self.path)

    def abort(self):
        if not self._f.closed:
            self._f.close()
        _nofollow.remove(self.path)
