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


def _plain_target(name, directory):
    target = _incoming.target_path("file", {"filename": name}, None, directory)
    if os.path.basename(target) != name:
        raise Refused(f"unusable name {name!r}")
    return target


def _check(target, directory, needed, free_space):
    _incoming.check_not_existing(target, os.path.relpath(target, directory))
    _incoming.check_room(free_space, target, needed)


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


class DirectorySink:
    """One offered directory, into ``directory``/``offer.base``."""

    def __init__(self, offer, directory, free_space=_incoming.default_free_space, name=None):
        self.final_path = _plain_target(name or offer.base, directory)
        _check(self.final_path, directory, offer.size, free_space)
        self._tmp = tempfile.mkdtemp(prefix=_incoming.PARTIAL_PREFIX + offer.base + ".",
                                     dir=directory)

    def open_file(self, path, header):
        target = os.path.join(self._tmp, *path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        return _VerifiedPartial(target, header.bytes)

    def complete(self):
        os.chmod(self._tmp, _incoming._default_mode(0o777))
        if os.path.lexists(self.final_path):
            self.abort()
            raise Refused(f"refusing to overwrite existing '{self.final_path}'")
        os.rename(self._tmp, self.final_path)

    def abort(self):
        shutil.rmtree(self._tmp, ignore_errors=True)


def sink_for(offer, directory, free_space=_incoming.default_free_space, name=None):
    """The sink for an accepted offer, or Refused (the reason goes to the
    peer); ``name`` replaces the offered name (``wormhole receive -o``)."""
    if isinstance(offer, M.DirectoryOffer):
        return DirectorySink(offer, directory, free_space, name)
    return FileSink(offer, directory, free_space, name)
