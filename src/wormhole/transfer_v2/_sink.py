"""Where accepted offers are written, under the classic receiver's rules
(``wormhole.cli._incoming``, called rather than copied): the target is a
plain name inside the chosen folder, never an existing one, there must be
room for the offered bytes, and nothing appears under a final name before
its hash is verified.

- a file offer: bytes go to a hidden temporary name beside the target
  (``_incoming.PartialFile``, hashed with BLAKE2b instead of SHA-256) and
  are linked to the final name once the FileAcknowledges matched;
- a directory offer: every file is written (the same way) inside a hidden
  temporary folder beside the target, which is renamed to the target once
  the last file matched; on any failure the folder is removed.

The paths inside a directory offer were checked by ``_messages`` (plain
segments only), so ``os.path.join`` stays inside the temporary folder.
"""
import json
import os
import shutil
import tempfile

from ..cli import _incoming
from . import _messages as M

Refused = _incoming.Refused


class _VerifiedPartial(_incoming.PartialFile):
    """A PartialFile hashed with transfer-v2's BLAKE2b (the FileAcknowledge
    hash), counting what it expects."""

    def __init__(self, target, expected):
        super().__init__(target)
        self._hash = M.new_hash()
        self.expected = expected

    @property
    def received(self):
        return self.size

    def digest(self):
        return self._hash.digest()

    def commit(self):
        self.finish()  # fsync before the final name appears
        super().commit()

    def suspend(self):
        self.abort()  # nothing to resume from: an interrupted file goes


def _plain_target(name, directory):
    target = _incoming.target_path("file", {"filename": name}, None, directory)
    if os.path.basename(target) != name:
        raise Refused(f"unusable name {name!r}")
    return target


def _check(target, directory, needed, free_space):
    _incoming.check_not_existing(target, os.path.relpath(target, directory))
    _incoming.check_room(free_space, target, needed)


RESUME_SUFFIX = ".resume"
STATE_SUFFIX = ".resume.json"
_STATE_MAX = 64 * 1024
_PREFIX_CHUNK = 1 << 20


class _ResumablePartial(_incoming.PartialFile):
    """The bytes of a file offer under a fixed hidden name beside the
    target, continued from ``offset`` (whose bytes ``hasher`` has seen).
    ``suspend()`` keeps them (and the state file) for a later session;
    ``abort()`` deletes both; ``commit()`` is PartialFile's (no overwrite)."""

    def __init__(self, target, path, state_path, expected, offset, hasher):
        # not PartialFile.__init__: the name is fixed, the file may exist
        self.target = target
        self.path = path
        self._state_path = state_path
        # private (0600) while it fills, as PartialFile's mkstemp
        self._f = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o600), "r+b")
        self._f.seek(offset)
        self._f.truncate()
        self._hash = hasher
        self.size = offset
        self.expected = expected

    @property
    def received(self):
        return self.size

    def digest(self):
        return self._hash.copy().digest()

    def commit(self):
        self.finish()
        super().commit()
        _unlink(self._state_path)

    def suspend(self):
        self._f.close()

    def abort(self):
        super().abort()
        _unlink(self._state_path)


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class ResumableFileSink:
    """One offered file, into ``directory``, resumable (the "resume"
    feature, docs/transfer-v2.md "Resume"): the bytes go to
    ``.wormhole-partial-NAME.resume`` beside the target, with a state file
    ``...resume.json`` naming the offer (filename, size, timestamp). When
    an earlier session left bytes for the same offer, ``resume`` is
    (offset, hasher) to ask for the rest; state for another version of the
    file is discarded, and ``discarded`` says why."""

    def __init__(self, offer, directory, free_space=_incoming.default_free_space, name=None):
        self.final_path = _plain_target(name or offer.filename, directory)
        _check(self.final_path, directory, offer.bytes, free_space)
        folder, base = os.path.split(self.final_path)
        self._partial = os.path.join(folder, _incoming.PARTIAL_PREFIX + base + RESUME_SUFFIX)
        self._state = os.path.join(folder, _incoming.PARTIAL_PREFIX + base + STATE_SUFFIX)
        self._identity = {"filename": offer.filename, "bytes": offer.bytes,
                          "timestamp": offer.timestamp}
        self.discarded = None
        self.resume = self._find_resumable()

    def _read_state(self):
        try:
            with open(self._state, "rb") as f:
                return json.loads(f.read(_STATE_MAX).decode("utf-8"))
        except (OSError, ValueError):
            return None

    def _find_resumable(self):
        if not os.path.exists(self._state) and not os.path.exists(self._partial):
            return None
        state = self._read_state()
        try:
            held = os.stat(self._partial).st_size
        except OSError:
            held = None
        if state != self._identity or held is None or held > self._identity["bytes"]:
            self._forget()
            self.discarded = ("the bytes kept from an earlier transfer belong to another "
                              "version of this file: discarded, receiving it in full")
            return None
        hasher = M.new_hash()
        with open(self._partial, "rb") as f:
            for chunk in iter(lambda: f.read(_PREFIX_CHUNK), b""):
                hasher.update(chunk)
        return held, hasher

    def _forget(self):
        _unlink(self._partial)
        _unlink(self._state)

    def open_file(self, path, header):
        """Continue at ``header.offset`` (the offering side agreed), or start
        over (offset 0 or absent)."""
        offset = header.offset or 0
        if offset and (self.resume is None or self.resume[0] != offset):
            raise Refused(f"the sender resumes at byte {offset}, which we did not ask for")
        if not offset:
            if self.resume is not None:
                self.discarded = ("the sender's file no longer starts with the bytes kept "
                                  "from an earlier transfer: discarded, receiving it in full")
            self._forget()
            with open(self._state, "w") as f:
                json.dump(self._identity, f)
            hasher = M.new_hash()
        else:
            hasher = self.resume[1]
        return _ResumablePartial(self.final_path, self._partial, self._state, header.bytes,
                                 offset, hasher)

    def complete(self):
        pass

    def abort(self):
        pass  # the writer keeps (suspend) or deletes (abort) its own bytes


class FileSink:
    """One offered file, into ``directory``."""

    def __init__(self, offer, directory, free_space=_incoming.default_free_space, name=None):
        self.final_path = _plain_target(name or offer.filename, directory)
        _check(self.final_path, directory, offer.bytes, free_space)

    def open_file(self, path, header):
        return _VerifiedPartial(self.final_path, header.bytes)

    def complete(self):
        pass

    def abort(self):
        pass  # the machine aborts the writer itself


class _FolderFile:
    """One file of a directory offer, written under its own name inside
    the offer's hidden temporary folder: nothing there is visible before
    the folder is renamed, so no temporary name, rename or fsync per file
    (classic receive unpacks a zipfile the same way); a temporary name and
    an fsync per file made a 2,000-file folder take twice the reference's
    time (docs/performance.md). ``xb``: a name cannot be written twice."""

    def __init__(self, path, expected):
        self._path = path
        self._f = open(path, "xb")
        self._hash = M.new_hash()
        self.expected = expected
        self.received = 0

    def write(self, data):
        self._f.write(data)
        self._hash.update(data)
        self.received += len(data)

    def digest(self):
        return self._hash.digest()

    def commit(self):
        self._f.close()

    def abort(self):
        self._f.close()
        _unlink(self._path)

    suspend = abort


class DirectorySink:
    """One offered directory, into ``directory``/``offer.base``."""

    def __init__(self, offer, directory, free_space=_incoming.default_free_space, name=None):
        self.final_path = _plain_target(name or offer.base, directory)
        _check(self.final_path, directory, offer.size, free_space)
        self._tmp = tempfile.mkdtemp(prefix=_incoming.PARTIAL_PREFIX + offer.base + ".",
                                     dir=directory)
        self._made = {self._tmp}  # folders already created inside it

    def open_file(self, path, header):
        target = os.path.join(self._tmp, *path)
        folder = os.path.dirname(target)
        if folder not in self._made:
            os.makedirs(folder, exist_ok=True)
            self._made.add(folder)
        return _FolderFile(target, header.bytes)

    def complete(self):
        os.chmod(self._tmp, _incoming._default_mode(0o777))
        if os.path.lexists(self.final_path):
            self.abort()
            raise Refused(f"refusing to overwrite existing '{self.final_path}'")
        os.rename(self._tmp, self.final_path)

    def abort(self):
        shutil.rmtree(self._tmp, ignore_errors=True)


def sink_for(offer, directory, free_space=_incoming.default_free_space, name=None,
             resumable=False):
    """The sink for an accepted offer, or Refused (the reason goes to the
    peer); ``name`` replaces the offered name (``wormhole receive -o``);
    ``resumable`` when both peers declared the "resume" feature."""
    if isinstance(offer, M.DirectoryOffer):
        return DirectorySink(offer, directory, free_space, name)
    if resumable:
        return ResumableFileSink(offer, directory, free_space, name)
    return FileSink(offer, directory, free_space, name)
