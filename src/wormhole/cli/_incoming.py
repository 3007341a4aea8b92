"""The receiver's safety rules for files and directories (spec 004 9.2;
docs/cli.md "Receiving files safely").

- the name comes from the offer but only its last component is used, and
  it must pass ``_names.check_component`` (length, characters) before
  anything is streamed;
- an existing file or directory is never overwritten;
- there must be room for what the offer announces (``free_space`` is
  injectable so tests can play a full disk);
- bytes go to a hidden temporary name in the target's directory; only
  when the whole transfer arrived and is on disk (fsync), with its sha256
  computed as the bytes were written, is it renamed to the final name
  (``PartialFile``), so an interrupted transfer never leaves a partial
  file under the final name; the temporary name fits beside any legal
  final name (``_names.temporary_prefix``);
- a zipfile is checked whole before anything is unpacked, then unpacked
  without ever following a link, reading no more than the offer
  announced (``_unzip``).
"""
import hashlib
import os
import shutil
import tempfile

from ._names import PARTIAL_PREFIX, BadName, check_component, temporary_prefix
from ._unzip import Refused, unpack_zip

__all__ = [
    "PARTIAL_PREFIX",
    "PartialFile",
    "BadOffer",
    "Refused",
    "check_not_existing",
    "check_room",
    "offered_name",
    "receive_directory_into",
    "target_path",
]


def _default_mode(mode):
    """``mode`` less the umask: temporary files are private (0600) while
    they fill, the final one gets what ``open()`` would have given it."""
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


def default_free_space(path):
    return shutil.disk_usage(path).free


class BadOffer(Refused):
    """The offer itself is malformed (a missing or unusable name, a bad
    count): refused, and a failure (exit status 1), not a decision of
    ours like an overwrite or a lack of room (docs/cli.md, "Exit status")."""


def offered_name(kind, offer):
    """The plain name a file or directory offer suggests, or Refused."""
    key = "filename" if kind == "file" else "dirname"
    raw = offer.get(key)
    if not isinstance(raw, str):
        raise BadOffer(f"the sender's offer has no {key}")
    # a peer could send "../../.bashrc" or "/etc/passwd": keep the last part
    name = raw.replace("\\", "/").rstrip("/").split("/")[-1]
    try:
        check_component(name)
    except BadName as e:
        raise BadOffer(f"the sender offered an unusable name '{raw[:300]}': {e}") from None
    return name


def target_path(kind, offer, output_file, cwd):
    """Where the received file or directory goes (absolute)."""
    if output_file:
        target = os.path.abspath(os.path.join(cwd, output_file))
        if os.path.isdir(target):
            # -o DIR: into it, under the offered name (as the reference)
            return os.path.join(target, offered_name(kind, offer))
        return target
    return os.path.join(os.path.abspath(cwd), offered_name(kind, offer))


def check_not_existing(target, shown):
    if os.path.lexists(target):
        raise Refused(f"refusing to overwrite existing '{shown}'")


def check_room(free_space, target, needed):
    """Refuse when the target's file system has less than ``needed`` bytes free."""
    where = os.path.dirname(target)
    if not os.path.isdir(where):
        raise Refused(f"cannot write into '{where}': no such directory")
    if not os.access(where, os.W_OK):
        raise Refused(f"cannot write into '{where}': permission denied")
    free = free_space(where)
    if free < needed:
        raise Refused(f"not enough free space in '{where}': the transfer needs "
                      f"{needed} bytes, only {free} are free")


class PartialFile:
    """Bytes arriving for ``target``, under a temporary name beside it."""

    def __init__(self, target):
        self.target = target
        directory, name = os.path.split(target)
        fd, self.path = tempfile.mkstemp(prefix=temporary_prefix(name), dir=directory)
        self._f = os.fdopen(fd, "wb")
        self._hash = hashlib.sha256()
        self.size = 0

    def write(self, data):
        self._f.write(data)
        self._hash.update(data)
        self.size += len(data)

    def hexdigest(self):
        return self._hash.hexdigest()

    def finish(self):
        """Flush to disk (fsync) and return the sha256 (hex) of the bytes.

        The hash is of the bytes as they were written, computed on the
        way in: reading the whole file back to hash it again cost a
        second sha256 pass and a read of every byte (a quarter of the
        receiver's CPU, docs/performance.md) and caught nothing the fsync
        does not report: every record was authenticated (SecretBox,
        spec 004 6.2) before it was written. ``commit`` (the rename)
        still comes only after this.
        """
        self._f.flush()
        os.fsync(self._f.fileno())
        self._f.close()
        return self._hash.hexdigest()

    def commit(self):
        """Give the verified file its final name, never replacing one
        that appeared meanwhile (link() fails when the name exists)."""
        os.chmod(self.path, _default_mode(0o666))
        try:
            os.link(self.path, self.target)
        except FileExistsError:
            self.abort()
            raise Refused(f"refusing to overwrite existing '{self.target}'") from None
        os.unlink(self.path)

    def abort(self):
        if not self._f.closed:
            self._f.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def receive_directory_into(zip_path, target, max_bytes, max_files):
    """Unpack (``_unzip``) into a hidden temporary directory beside
    ``target``, then rename it to ``target``; nothing is left under
    ``target`` on failure."""
    directory, name = os.path.split(target)
    tmp = tempfile.mkdtemp(prefix=temporary_prefix(name), dir=directory)
    try:
        os.chmod(tmp, _default_mode(0o777))
        unpack_zip(zip_path, tmp, max_bytes, max_files)
        if os.path.lexists(target):
            raise Refused(f"refusing to overwrite existing '{target}'")
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
