"""Unpacking a received directory (File-transfer protocol, "Recipient",
mode ``zipfile/deflated``) so that nothing the archive says can reach
outside the target.

Two steps, and nothing is written before the first one passed:

1. ``plan``: every entry of the archive is checked and placed in a model
   of the tree it will create (``_Tree``): names by the rules of
   ``_landing.check_path`` (length, characters), no absolute names, no
   ``..``, only stored or deflated data, no encryption, no entry under a
   file or a link, no name twice; each link's target is read with a bound
   (``MAX_LINK_TARGET``) and *resolved through the tree*, following the
   archive's other links as the kernel would (``a/b -> ..`` then
   ``c -> a/b/..`` climbs out, though neither looks like it alone), and
   refused if its effective path ever leaves the target; the archive may
   hold no more entries than the offer's ``numfiles`` plus
   ``MAX_EXTRA_ENTRIES`` (folders and links, which senders do not count),
   and its central directory is checked against that number before
   zipfile parses it (``check_directory_size``).
2. ``unpack``: entries are created relative to directory file
   descriptors opened with ``O_NOFOLLOW``, files with ``O_EXCL``, links
   last: even a flaw in step 1 could not make a write follow a link. The
   bytes written are counted against the offer's ``numbytes`` as they
   are decompressed, whatever the headers claim.

Modes (docs/security.md, "Modes (`wormhole._landing.landed_mode`)"): a
file or folder entry keeps the permission bits the sender's zipfile
carries in its external attributes (``st_mode << 16``, as the reference
and we write them), never set-uid, set-gid or sticky, and never more
than the receiver's umask allows; an entry carrying none gets what
``open()``/``mkdir()`` give (0666/0777 less the umask). Folders get
theirs last, so a read-only folder is still filled. No device or FIFO
comes from an archive. Every way a damaged archive makes ``zipfile``
fail becomes ``Refused`` with one line; a disk error becomes a
``TransferError`` naming it.
"""
import collections
import errno
import os
import stat
import zipfile

from .. import _landing
from .._landing import Refused, check_path, land_folder
from ..errors import TransferError

# PATH_MAX: no legitimate link target is longer, and a link entry's data
# is read only this far (a deflated link target could otherwise expand to
# gigabytes in memory)
MAX_LINK_TARGET = 4096
# an entry's whole relative path: the receiving rules' bound (_landing)
MAX_PATH_BYTES = _landing.MAX_PATH_BYTES
# links followed while resolving one link target (Linux's MAXSYMLINKS)
MAX_LINK_HOPS = 40
# entries beyond the announced numfiles: folder entries (and links), which
# the reference and our sender do not count as files
MAX_EXTRA_ENTRIES = 10_000
# bytes of central directory allowed per allowed entry (46 fixed bytes,
# the name, extra fields): zipfile reads the whole directory into ~600
# bytes of Python objects per record before we can count them, so its
# size is checked first (legitimate records average far less)
MAX_CENTRAL_RECORD = 512
_CHUNK = 1 << 20
_MODES = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


def _is_link(info):
    return stat.S_ISLNK(info.external_attr >> 16)


def _permissions(info, default):
    """The mode an entry gets (the receiving rules' ``landed_mode``: the
    sender's permission bits without set-uid, set-gid and sticky, less the
    umask), or ``default`` less the umask when the entry carries none."""
    mode = info.external_attr >> 16
    return _landing.landed_mode(stat.S_IMODE(mode) if mode else None, default)


class _Link:
    def __init__(self, target):
        self.target = target


_DIR = "dir"
_FILE = "file"


class _Tree:
    """What the archive will create: {parts: _DIR | _FILE | _Link}."""

    def __init__(self):
        self.nodes = {(): _DIR}

    def add(self, parts, kind, shown):
        for i in range(1, len(parts)):
            above = self.nodes.setdefault(parts[:i], _DIR)
            if above is not _DIR:
                raise Refused(f"zip entry '{shown}' lies under a file or a link of "
                              "the same archive")
        if parts in self.nodes:
            if kind is _DIR and self.nodes[parts] is _DIR:
                return
            raise Refused(f"zip entry '{shown}' appears twice")
        self.nodes[parts] = kind

    def resolve(self, where, target, hops=0):
        """The physical path (parts from the target's root) that
        ``target`` (a link's text) reaches from the folder ``where``,
        following the archive's links like the kernel (a link's ``..``
        goes up from where the link *points*, not where it sits). Raises
        _Escapes as soon as the path would go above the root (Refused for
        a chain longer than MAX_LINK_HOPS). Missing
        components are taken as folders: a link that the kernel could not
        resolve today must not escape once they exist."""
        path = list(where)
        for part in target.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not path:
                    raise _Escapes()
                path.pop()
                continue
            path.append(part)
            node = self.nodes.get(tuple(path))
            if isinstance(node, _Link):
                hops += 1
                if hops > MAX_LINK_HOPS:
                    raise Refused(f"a link chain in the zipfile is longer than "
                                  f"{MAX_LINK_HOPS} links (or a loop)")
                path.pop()
                path, hops = self.resolve(path, node.target, hops)
        return path, hops


class _Escapes(Exception):
    pass


def _parts(info):
    """The checked path components of an entry name."""
    name = info.filename
    norm = name.replace("\\", "/")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":"):
        raise Refused(f"zip entry '{name}' is an absolute path")
    parts = tuple(p for p in norm.split("/") if p not in ("", "."))
    if ".." in parts:
        raise Refused(f"zip entry '{name}' climbs out of the target with '..'")
    if len(norm.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise Refused(f"zip entry '{name[:100]}...' has a path longer than "
                      f"{MAX_PATH_BYTES} bytes")
    return check_path(parts, shown=name)


def _link_target(zf, info):
    """A link entry's target, read no further than MAX_LINK_TARGET."""
    if info.file_size > MAX_LINK_TARGET:
        raise Refused(f"zip link entry '{info.filename}' has a target longer than "
                      f"{MAX_LINK_TARGET} bytes")
    with zf.open(info) as f:
        raw = f.read(MAX_LINK_TARGET + 1)
    if len(raw) > MAX_LINK_TARGET:
        raise Refused(f"zip link entry '{info.filename}' has a target longer than "
                      f"{MAX_LINK_TARGET} bytes")
    try:
        target = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"zip link entry '{info.filename}' has a target that is not "
                      "UTF-8") from None
    if not target or "\x00" in target or "\\" in target:
        raise Refused(f"zip link entry '{info.filename}' has an unusable target "
                      f"'{target}'")
    if target.startswith("/"):
        raise Refused(f"zip entry '{info.filename}' is a link to an absolute path "
                      f"('{target}')")
    return target


def end_record_reader():
    """zipfile's own reader of the end record (it follows zip64) and the
    index of the directory's size in what it returns, or None. Both are
    private to zipfile: a Python without them falls back on the count
    after parsing (``plan``), and tests/unit/transfer/test_unzip_modes.py
    fails on such a Python, so the loss of the early bound is seen."""
    end_record = getattr(zipfile, "_EndRecData", None)
    size_field = getattr(zipfile, "_ECD_SIZE", None)
    if not callable(end_record) or not isinstance(size_field, int):
        return None
    return end_record, size_field


def check_directory_size(zip_path, max_files):
    """Before zipfile parses the central directory: refuse one larger
    than ``MAX_CENTRAL_RECORD`` bytes per entry the offer allows, so the
    memory the parse takes is bounded by the offer's numfiles."""
    allowed = (max_files + MAX_EXTRA_ENTRIES) * MAX_CENTRAL_RECORD
    found = end_record_reader()
    if found is None:
        return
    end_record, size_field = found
    with open(zip_path, "rb") as f:
        end = end_record(f)
    if end is None:
        raise Refused("the zipfile is damaged: no end of central directory")
    size = end[size_field]
    if size > allowed:
        raise Refused(f"the zipfile's directory is {size} bytes, more than the "
                      f"{max_files} files the sender announced allow ({allowed})")


def plan(zf, max_bytes, max_files):
    """Check the whole archive (step 1): [(info, parts, kind)] in archive
    order, kind being _DIR, _FILE or a _Link."""
    infos = zf.infolist()
    if len(infos) > max_files + MAX_EXTRA_ENTRIES:
        raise Refused(f"the zipfile has {len(infos)} entries, more than the "
                      f"{max_files} files the sender announced allow")
    tree = _Tree()
    entries = []
    announced = 0
    for info in infos:
        parts = _parts(info)
        if info.flag_bits & 0x1:
            raise Refused(f"zip entry '{info.filename}' is encrypted")
        if info.compress_type not in _MODES:
            raise Refused(f"zip entry '{info.filename}' is compressed with method "
                          f"{info.compress_type}; only stored and deflated are "
                          "accepted (zipfile/deflated)")
        if not parts:
            if info.filename.endswith("/"):
                continue
            raise Refused(f"zip entry '{info.filename}' has no name")
        if _is_link(info):
            kind = _Link(_link_target(zf, info))
        elif info.filename.endswith("/"):
            kind = _DIR
        else:
            kind = _FILE
            # what the headers claim, refused early; unpack() counts again
            announced += info.file_size
        tree.add(parts, kind, info.filename)
        entries.append((info, parts, kind))
    if announced > max_bytes:
        raise _over(max_bytes)
    for info, parts, kind in entries:
        if isinstance(kind, _Link):
            try:
                tree.resolve(parts[:-1], kind.target)
            except _Escapes:
                raise Refused(f"zip entry '{info.filename}' is a link out of the "
                              f"target directory ('{kind.target}')") from None
    return entries


# -- step 2: creating, never through a link ----------------------------------
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
               | getattr(os, "O_CLOEXEC", 0))


class _Folders:
    """Descriptors of the folders entries go into, each opened relative to
    its parent with O_NOFOLLOW (and made first when missing). The last
    ``MAX_OPEN`` are kept open: entries come folder by folder, and
    re-opening every component for every entry doubled the unpack time."""

    MAX_OPEN = 64

    def __init__(self, root):
        self._open = collections.OrderedDict()
        self._open[()] = os.open(root, _DIR_FLAGS)

    def get(self, folder):
        """The descriptor of ``folder`` (a tuple of parts); valid until
        the next call."""
        fd = self._open.get(folder)
        if fd is not None:
            self._open.move_to_end(folder)
            return fd
        parent = self.get(folder[:-1])
        try:
            os.mkdir(folder[-1], 0o777, dir_fd=parent)
        except FileExistsError:
            pass
        fd = os.open(folder[-1], _DIR_FLAGS, dir_fd=parent)
        self._open[folder] = fd
        if len(self._open) > self.MAX_OPEN:
            oldest = next(k for k in self._open if k != ())
            os.close(self._open.pop(oldest))
        return fd

    def close(self):
        for fd in self._open.values():
            os.close(fd)
        self._open.clear()


def _write_file(zf, info, fd, budget):
    """Copy one entry into ``fd``; returns the bytes written, never more
    than ``budget`` (the rest of the offer's numbytes)."""
    written = 0
    with zf.open(info) as src:
        while True:
            chunk = src.read(_CHUNK)
            if not chunk:
                return written
            written += len(chunk)
            if written > budget:
                raise _OverBudget()
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]


class _OverBudget(Exception):
    pass


def _over(max_bytes):
    return Refused(f"the zipfile unpacks to more than the {max_bytes} bytes the "
                   "sender announced")


def unpack(zf, entries, root, max_bytes):
    """Create the planned ``entries`` under ``root`` (step 2)."""
    folders = _Folders(root)
    try:
        written = 0
        links = []
        moded_folders = []
        for info, parts, kind in entries:
            if isinstance(kind, _Link):
                links.append((parts, kind.target))
            elif kind is _DIR:
                folders.get(parts)
                moded_folders.append((parts, _permissions(info, 0o777)))
            else:
                fd = os.open(parts[-1], _FILE_FLAGS, _permissions(info, 0o666),
                             dir_fd=folders.get(parts[:-1]))
                try:
                    written += _write_file(zf, info, fd, max_bytes - written)
                except _OverBudget:
                    raise _over(max_bytes) from None
                finally:
                    os.close(fd)
        # links last: no entry above was written through one
        for parts, target in links:
            os.symlink(target, parts[-1], dir_fd=folders.get(parts[:-1]))
        # folders last (deepest first), once nothing more goes into them:
        # on the descriptor, never through a name
        for parts, mode in sorted(moded_folders, key=lambda p: -len(p[0])):
            os.fchmod(folders.get(parts), mode)
    finally:
        folders.close()


def _damaged(e):
    return Refused(f"the zipfile is damaged: {type(e).__name__}: {e}")


def unpack_zip(zip_path, root, max_bytes, max_files):
    """Check, then unpack ``zip_path`` into ``root`` (a fresh, empty
    folder). Refused for anything the archive does wrong, TransferError
    when the disk fails us."""
    try:
        check_directory_size(zip_path, max_files)
        with zipfile.ZipFile(zip_path) as zf:
            entries = plan(zf, max_bytes, max_files)
            unpack(zf, entries, root, max_bytes)
    except (TransferError, _OverBudget):
        raise
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EEXIST):
            # plan() made sure no entry goes through a link or collides:
            # this is a file system that folds names (case, Unicode
            # normalisation) into the same one
            raise Refused(f"the zipfile's entries collide on this file system: "
                          f"{e.strerror}") from None
        if e.filename == zip_path:
            raise _damaged(e) from None
        raise TransferError(f"cannot unpack the received directory: "
                            f"{e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 (every failure of zipfile is the peer's)
        # zipfile reports a damaged archive with BadZipFile, zlib.error,
        # EOFError, NotImplementedError, ValueError, struct.error...: all
        # of them are the peer's doing, reported as one line
        raise _damaged(e) from None


def receive_directory_into(zip_path, target, max_bytes, max_files):
    """Unpack into a hidden temporary folder beside ``target``, renamed to
    ``target`` at the end (``_landing.land_folder``); nothing is left
    under ``target`` on failure."""
    land_folder(target, lambda tmp: unpack_zip(zip_path, tmp, max_bytes, max_files))
