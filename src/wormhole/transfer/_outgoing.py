"""What a classic sender offers (File-transfer protocol, "Sender"): a
file as it is, a directory as a deflated zipfile built in a temporary
file first (its size goes in the offer, so it must be known before
anything is sent).

``prepare(path, ...)`` returns an ``Outgoing``: the ``offer`` value, the
number of bytes that will travel, ``open()`` for the bytes, ``cleanup()``.
"""
import os
import stat
import tempfile
import zipfile
import zlib

import attrs

from .._landing import PERMISSION_BITS
from .._outgoing_tree import kind, regular_file, walk
from .._wording import naturalsize
from ..errors import TransferError
from ._messages import ZIP_MODE


@attrs.define
class Outgoing:
    """What ``prepare`` made of a path, ready to send: the ``offer``, the
    ``size`` sent over Transit and the file ``open()`` reads (a temporary
    zipfile for a directory, removed by ``cleanup()``)."""
    kind: str              # "file" or "directory"
    offer: dict            # the value of the "offer" key
    size: int              # bytes sent over Transit
    path: str              # what open() reads
    temporary: bool = False

    def open(self):
        """The bytes to send, as a binary file object."""
        return open(self.path, "rb")

    def cleanup(self):
        """Remove the temporary zipfile, if this offer made one."""
        if self.temporary:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass


def _name_of(path):
    # "dir/", "." and "../x" offer the name the human sees in a listing
    return os.path.basename(os.path.normpath(os.path.abspath(path)))


def prepare(path, ignore_unsendable=False, warn=None, tmpdir=None):
    """Build the offer for ``path``; raise TransferError with a readable
    reason when it cannot be sent."""
    if not os.path.exists(path):
        raise TransferError(f"Cannot send: no file or directory named '{path}'")
    st = os.stat(path)
    if stat.S_ISREG(st.st_mode):
        try:
            with open(path, "rb"):
                pass
        except OSError as e:
            raise TransferError(f"Cannot send '{path}': {e.strerror}") from None
        return Outgoing("file", {"file": {"filename": _name_of(path),
                                          "filesize": st.st_size}},
                        st.st_size, path)
    if stat.S_ISDIR(st.st_mode):
        return _zip_directory(path, ignore_unsendable, warn, tmpdir)
    if stat.S_ISBLK(st.st_mode):
        # a disk or partition, as the reference sends it: its size is
        # where reading it ends, not st_size (0 for devices)
        try:
            with open(path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
        except OSError as e:
            raise TransferError(f"Cannot send '{path}': {e.strerror}") from None
        return Outgoing("file", {"file": {"filename": _name_of(path), "filesize": size}},
                        size, path)
    raise TransferError(f"Cannot send '{path}': it is {kind(st.st_mode)}, not a file, "
                        "a block device or a directory")


class _Unsendable(Exception):
    """One entry of the tree cannot be sent: ``reason`` says why."""


class Unsendable(TransferError):
    """Something in the directory cannot be sent (and ``prepare`` was not
    told to skip it): the message names it and says why."""


def _zip_directory(path, ignore_unsendable, warn, tmpdir):
    """Zip the tree under ``path`` into a temporary zipfile. Entry
    names are relative, '/'-separated; files get entries, and so do empty
    directories (a name ending in '/'; numfiles counts files only, as the
    reference's offer does). What cannot be sent (an unreadable file or
    directory, a dangling link, a FIFO, socket or device, a link loop)
    stops the send (Unsendable), or is skipped with a ``warn``ing when
    ``ignore_unsendable``; docs/cli.md."""
    def unsendable(local, reason):
        reason = f"{local}: {reason}"
        if not ignore_unsendable:
            raise _Unsendable(reason)
        if warn is not None:
            warn(f"{reason} (skipped)")

    fd, zpath = tempfile.mkstemp(prefix="wormhole-send-", suffix=".zip", dir=tmpdir)
    os.close(fd)
    numbytes = numfiles = 0
    try:
        with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
            for entry in walk(path, unsendable):
                arcname = "/".join(entry.segments)
                if entry.is_dir:
                    # folders with files get theirs from the files' names;
                    # an empty one travels as its own entry, as with the
                    # reference 0.24
                    if entry.holds_nothing:
                        zf.write(entry.local, arcname + "/")
                        # external attributes live in the central
                        # directory only, written from these at close
                        zf.filelist[-1].external_attr = _entry_attributes(
                            os.stat(entry.local).st_mode)
                    continue
                try:
                    size = _add_file(zf, entry.local, arcname)
                except OSError as e:
                    unsendable(entry.local, e.strerror or str(e))
                    continue
                numbytes += size
                numfiles += 1
    except _Unsendable as e:
        os.unlink(zpath)
        raise Unsendable(f"Cannot send {e}") from None
    except BaseException:
        os.unlink(zpath)
        raise
    zipsize = os.stat(zpath).st_size
    offer = {"directory": {"mode": ZIP_MODE, "dirname": _name_of(path),
                           "zipsize": zipsize, "numbytes": numbytes,
                           "numfiles": numfiles}}
    return Outgoing("directory", offer, zipsize, zpath, temporary=True)


# A file whose first 16 KiB do not shrink by a tenth at zlib's fastest
# level (photos, video, archives, encrypted data) is stored rather than
# deflated: deflating such bytes costs ~18 ms per MB and saves nothing
# (the reference stores every entry). Receivers read both methods.
_SAMPLE = 1 << 14
_WORTH_DEFLATING = 0.9


def _compress_type(sample):
    if len(zlib.compress(sample, 1)) < len(sample) * _WORTH_DEFLATING:
        return zipfile.ZIP_DEFLATED
    return zipfile.ZIP_STORED


def _entry_attributes(st_mode):
    """A zip entry's external attributes: the file type and permission
    bits in the high 16 bits (where the reference 0.24 and we read a
    mode), never set-uid, set-gid or sticky: the reference's receiver
    applies an entry's mode as it is, umask or not (docs/security.md,
    "Modes (`wormhole._landing.landed_mode`)"), and what we would not
    keep as a receiver we do not ask others to keep.
    Folders also get MS-DOS's directory bit, as zipfile gives them."""
    attributes = (stat.S_IFMT(st_mode) | stat.S_IMODE(st_mode) & PERMISSION_BITS) << 16
    return attributes | (0x10 if stat.S_ISDIR(st_mode) else 0)


def _add_file(zf, local, arcname):
    st = regular_file(local)
    with open(local, "rb") as src:
        chunk = src.read(_SAMPLE)
        info = zipfile.ZipInfo.from_file(local, arcname)
        info.external_attr = _entry_attributes(st.st_mode)
        info.compress_type = _compress_type(chunk)
        with zf.open(info, "w", force_zip64=st.st_size > 2**31) as dst:
            while chunk:
                dst.write(chunk)
                chunk = src.read(1 << 20)
    return st.st_size


def grown(f, outgoing):
    """What to tell the human when the file sent (open as ``f``) is now
    longer than the offer said (it was being written): only the offered
    bytes went. None otherwise."""
    if outgoing.kind != "file":
        return None
    st = os.fstat(f.fileno())
    if stat.S_ISREG(st.st_mode) and st.st_size > outgoing.size:
        return (f"'{outgoing.offer['file']['filename']}' grew while it was sent: only its "
                f"first {naturalsize(outgoing.size)} (its size when offered) went")
    return None


def describe(outgoing):
    """The sender's first line on stderr."""
    if outgoing.kind == "file":
        return (f"Sending {naturalsize(outgoing.size)} file named "
                f"'{outgoing.offer['file']['filename']}'")
    return (f"Sending directory ({naturalsize(outgoing.size)} compressed) named "
            f"'{outgoing.offer['directory']['dirname']}'")
