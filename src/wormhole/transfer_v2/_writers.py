"""The writers of transfer-v2's sinks (``IWriter``): one file of an
accepted offer each, written under the receiving rules of
``wormhole._landing`` (docs/transfer-v2.md "Receiving safely"):

- ``VerifiedPartial``: a file offer's bytes under a random hidden name
  beside the target (``_landing.PartialFile``, BLAKE2b), linked to the
  final name once both acknowledgements matched;
- ``ResumablePartial``: the same under a fixed hidden name a later
  session can continue (the "resume" feature);
- ``FolderFile``: a file inside a directory offer's hidden folder;
- ``JournaledFile``: the same, in a resumable folder, adding its line to
  the folder's journal once verified.

Every one is made and opened without following a link (``_nofollow``).
"""
import os

from zope.interface import implementer

from .. import _landing
from .._landing import _nofollow
from . import _messages as M
from ._interfaces import IWriter

# the files of a received folder: what open() would give them (less the umask)
FILE_MODE = 0o666


@implementer(IWriter)
class VerifiedPartial(_landing.PartialFile):
    """A PartialFile hashed with transfer-v2's BLAKE2b (the FileAcknowledge
    hash), counting what it expects."""

    def __init__(self, target, expected, mode=None):
        super().__init__(target, M.new_hash(), mode)
        self.expected = expected

    @property
    def received(self):
        return self.size

    def digest(self):
        return self._hash.digest()

    def suspend(self):
        self.abort()  # nothing to resume from: an interrupted file goes


@implementer(IWriter)
class ResumablePartial(_landing.PartialFile):
    """The bytes of a file offer under a fixed hidden name beside the
    target, continued from ``offset`` (whose bytes ``hasher`` has seen).
    ``suspend()`` keeps them (and the state file) for a later session;
    ``abort()`` deletes both; ``commit()`` is PartialFile's (no overwrite)."""

    def __init__(self, target, path, state_path, expected, offset, hasher, mode=None):
        # not PartialFile.__init__: the name is fixed, the file may exist;
        # private (0600) while it fills, never through a link
        self.target = target
        self.path = path
        self._state_path = state_path
        self._f = os.fdopen(_nofollow.open_or_create(path), "r+b")
        self._f.seek(offset)
        self._f.truncate()
        self._hash = hasher
        self.size = offset
        self.expected = expected
        self.mode = mode  # given at commit (PartialFile.finish)

    @property
    def received(self):
        return self.size

    def digest(self):
        return self._hash.copy().digest()

    def commit(self):
        super().commit()
        _nofollow.remove(self._state_path)

    def suspend(self):
        self._f.close()

    def abort(self):
        super().abort()
        _nofollow.remove(self._state_path)


@implementer(IWriter)
class FolderFile:
    """One file of a directory offer, written under its own name inside
    the offer's hidden temporary folder: nothing there is visible before
    the folder is renamed, so no temporary name, rename or fsync per file
    (classic receive unpacks a zipfile the same way); a temporary name and
    an fsync per file made a 2,000-file folder take twice the reference's
    time (docs/performance.md). Created ``O_EXCL | O_NOFOLLOW``: a name
    cannot be written twice, nor through a link; mode 0666 less the umask,
    what ``open()`` gives (the folder is private, 0700, until it is
    renamed), as classic's unpacker does. With the "file-modes" feature
    (``mode`` not None) it gets the receiving rules' ``landed_mode`` when
    verified: not before, so that a file kept for a resume stays ours to
    write and hash whatever the sender's bits."""

    def __init__(self, path, expected, f=None, hasher=None, received=0, mode=None):
        self._path = path
        self._mode = mode
        self._f = _nofollow.create_file(path, FILE_MODE) if f is None else f
        self._hash = M.new_hash() if hasher is None else hasher
        self.expected = expected
        self.received = received

    def write(self, data):
        self._f.write(data)
        self._hash.update(data)
        self.received += len(data)

    def digest(self):
        return self._hash.digest()

    def commit(self):
        if self._mode is not None:
            # on the descriptor, never through a name (docs/security.md)
            os.fchmod(self._f.fileno(), _landing.landed_mode(self._mode, FILE_MODE))
        self._f.close()

    def abort(self):
        self._f.close()
        _nofollow.remove(self._path)

    suspend = abort


@implementer(IWriter)
class JournaledFile(FolderFile):
    """A file of a resumable directory offer: once verified, a line in the
    offer's journal says so; an interrupted one keeps its bytes."""

    def __init__(self, path, expected, journal, **kw):
        super().__init__(path, expected, **kw)
        self._journal = journal

    def commit(self):
        super().commit()
        self._journal(self.received, self.digest())

    def suspend(self):
        self._f.close()
