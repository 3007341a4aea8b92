"""Bytes arriving for a file, under a hidden temporary name beside it,
given the final name only when all of them are on disk
(docs/cli.md "Receiving files safely";
File-transfer protocol, "Recipient"), and the one rule for the
permission bits a received file or folder gets (``landed_mode``,
docs/security.md "Modes").

The temporary name (``_names.temporary_prefix`` plus tempfile's random
part, created ``O_EXCL | O_NOFOLLOW`` by ``mkstemp``) fits beside any
legal final name; the file is private (0600) while it fills and gets its final mode
(``landed_mode``: the sender's bits when it sent some, else 0666, less
the umask) before it is linked to its final name, which it never replaces (``link()`` fails on an
existing name, a link included).
"""
import hashlib
import os

from . import _nofollow
from ._errors import BadOffer, Refused
from ._names import temporary_prefix

# the bits a sender's mode may give a received file or folder: read,
# write and execute for owner, group and others; never set-uid, set-gid
# or sticky (a received program must not run with its receiver's rights
# elevated, nor a folder change who may delete in it)
PERMISSION_BITS = 0o777


def default_mode(mode):
    """``mode`` less the umask: what ``open()``/``mkdir()`` would give."""
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


def landed_mode(sender_mode, default):
    """The mode a received file (``default`` 0o666) or folder (0o777)
    gets, whatever protocol carried it (docs/security.md "Modes"): the
    sender's permission bits (``PERMISSION_BITS``: set-uid, set-gid and
    sticky are dropped, as is anything above them) less our umask, never
    more than a file we create would get; ``default`` less the umask when
    the sender gave none (None). A mode that is not an integer is a
    malformed offer (BadOffer)."""
    if sender_mode is None:
        return default_mode(default)
    if not isinstance(sender_mode, int) or isinstance(sender_mode, bool) or sender_mode < 0:
        raise BadOffer(f"a file mode must be a non-negative integer, not {sender_mode!r}")
    return default_mode(sender_mode & PERMISSION_BITS)


class PartialFile:
    """Bytes arriving for ``target``, under a temporary name beside it,
    hashed on the way in with ``hasher`` (SHA-256 for classic receive,
    transfer-v2 gives its BLAKE2b). ``mode``: the sender's permission
    bits, or None (``landed_mode``)."""

    mode = None

    def __init__(self, target, hasher=None, mode=None):
        self.target = target
        directory, name = os.path.split(target)
        fd, self.path = _nofollow.create_temporary(directory, temporary_prefix(name))
        self._f = os.fdopen(fd, "wb")
        self._hash = hashlib.sha256() if hasher is None else hasher
        self.size = 0
        self.mode = mode

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
        report: every record was authenticated (SecretBox, Transit
        protocol, "Records"; Noise for transfer-v2) before it was written. ``commit`` (the
        link) still comes only after this.
        """
        if not self._f.closed:
            self._f.flush()
            # its final mode, on the descriptor: never through a name
            os.fchmod(self._f.fileno(), landed_mode(self.mode, 0o666))
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
