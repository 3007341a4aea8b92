"""What ``wormhole send PATH`` offers (spec 004 9.1): a file as it is, a
directory as a deflated zipfile built in a temporary file first (its size
goes in the offer, so it must be known before anything is sent).

``prepare(path, ...)`` returns an ``Outgoing``: the ``offer`` value, the
number of bytes that will travel, ``open()`` for the bytes, ``cleanup()``.
"""
import os
import stat
import tempfile
import zipfile

import attrs

from ..errors import TransferError
from ._display import naturalsize

ZIP_MODE = "zipfile/deflated"


@attrs.define
class Outgoing:
    kind: str              # "file" or "directory"
    offer: dict            # the value of the "offer" key
    size: int              # bytes sent over Transit
    path: str              # what open() reads
    temporary: bool = False

    def open(self):
        return open(self.path, "rb")

    def cleanup(self):
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
    raise TransferError(f"Cannot send '{path}': it is neither a file nor a directory")


def _zip_directory(path, ignore_unsendable, warn, tmpdir):
    """Deflate the tree under ``path`` into a temporary zipfile. Entry
    names are relative, '/'-separated; only files get entries, as with the
    reference (wormhole-william unpacks a directory entry as an empty
    file), so empty directories do not travel. Files that cannot be read
    stop the send, or are skipped with a warning when
    ``ignore_unsendable`` (--ignore-unsendable-files)."""
    fd, zpath = tempfile.mkstemp(prefix="wormhole-send-", suffix=".zip", dir=tmpdir)
    os.close(fd)
    numbytes = numfiles = 0
    try:
        with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
            for root, dirs, files in os.walk(path):
                dirs.sort()
                rel_root = os.path.relpath(root, path)
                prefix = "" if rel_root == "." else rel_root.replace(os.sep, "/") + "/"
                for name in sorted(files):
                    local = os.path.join(root, name)
                    try:
                        size = _add_file(zf, local, prefix + name)
                    except OSError as e:
                        reason = f"{local}: {e.strerror or e}"
                        if not ignore_unsendable:
                            raise TransferError(
                                f"Cannot send {reason} (use --ignore-unsendable-files "
                                "to skip files that cannot be read)") from None
                        if warn is not None:
                            warn(f"{reason} (skipped)")
                        continue
                    numbytes += size
                    numfiles += 1
    except BaseException:
        os.unlink(zpath)
        raise
    zipsize = os.stat(zpath).st_size
    offer = {"directory": {"mode": ZIP_MODE, "dirname": _name_of(path),
                           "zipsize": zipsize, "numbytes": numbytes,
                           "numfiles": numfiles}}
    return Outgoing("directory", offer, zipsize, zpath, temporary=True)


def _add_file(zf, local, arcname):
    st = os.stat(local)  # follows links, as the bytes sent will
    if not stat.S_ISREG(st.st_mode):
        raise OSError(0, "not a regular file")
    with open(local, "rb") as src:
        info = zipfile.ZipInfo.from_file(local, arcname)
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=st.st_size > 2**31) as dst:
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                dst.write(chunk)
    return st.st_size


def describe(outgoing):
    """The sender's first line on stderr."""
    if outgoing.kind == "file":
        return (f"Sending {naturalsize(outgoing.size)} file named "
                f"'{outgoing.offer['file']['filename']}'")
    return (f"Sending directory ({naturalsize(outgoing.size)} compressed) named "
            f"'{outgoing.offer['directory']['dirname']}'")
