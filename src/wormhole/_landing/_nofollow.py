"""Every file the receiver makes in a receive folder, made without ever
following a link (docs/security.md "Hidden files").

The receive folder is shared with whoever else can write there, and the
hidden names we use in it (partial files, resume state, journals, their
temporary names) are known in advance: a link planted under one of them
must never make us write, truncate, read or remove anything elsewhere. So
every such file is

- created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (fails on any existing
  name, a link included);
- re-opened (to continue, to append, to read back) with ``O_NOFOLLOW``
  and checked with ``fstat`` to be a regular file (a FIFO is opened
  non-blocking, then refused);
- replaced by writing a fresh temporary name exclusively, then
  ``os.replace`` (which replaces a link, never follows it); a stale
  temporary left by an earlier session is removed first;
- removed with ``unlink`` (a link goes, not what it points at) or, for a
  real folder, ``shutil.rmtree`` (which never follows links).

These few functions are the only way the receiving rules (``_partial``,
``_folder``, transfer-v2's sinks) touch such a name.
"""
import errno
import os
import shutil
import stat
import tempfile

from ._errors import Refused

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NEW = os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC
_EXISTING = os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC


def create(path, flags=os.O_WRONLY, mode=0o600):
    """A descriptor of the new file ``path`` (private, 0600, by default);
    FileExistsError when anything, a link included, has the name."""
    return os.open(path, flags | _NEW, mode)


def create_temporary(directory, prefix):
    """(descriptor, path) of a new private file with a random name in
    ``directory`` (tempfile's ``mkstemp`` opens it ``O_CREAT | O_EXCL |
    O_NOFOLLOW``, 0600, trying other names while one exists)."""
    return tempfile.mkstemp(prefix=prefix, dir=directory)


def create_temporary_folder(directory, prefix):
    """The path of a new private (0700) folder with a random name in
    ``directory`` (``mkdtemp``: mkdir never follows a link)."""
    return tempfile.mkdtemp(prefix=prefix, dir=directory)


def create_file(path, permissions=0o600):
    """``create`` as a file object, for writing."""
    return os.fdopen(create(path, os.O_WRONLY, permissions), "wb")


def _regular(fd, path):
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise Refused(f"'{path}' is not a regular file: not used")
    # back to blocking I/O (O_NONBLOCK was only for opening a FIFO)
    os.set_blocking(fd, True)
    return fd


def reopen(path, flags=os.O_RDONLY):
    """A descriptor of the existing regular file ``path``: OSError (ELOOP)
    on a link, Refused on anything but a regular file."""
    return _regular(os.open(path, flags | _EXISTING), path)


def open_or_create(path, flags=os.O_RDWR, mode=0o600):
    """``reopen(path)``, or ``create(path)`` when nothing has the name:
    for a file a later session continues."""
    try:
        return reopen(path, flags)
    except FileNotFoundError:
        return create(path, flags, mode)


def read(path, limit):
    """At most ``limit`` bytes of the regular file ``path`` (one more
    tells the caller that it is longer)."""
    fd = reopen(path)
    with os.fdopen(fd, "rb") as f:
        return f.read(limit + 1)


def append(path, data):
    """Add ``data`` at the end of the regular file ``path``."""
    fd = reopen(path, os.O_WRONLY | os.O_APPEND)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def remove(path):
    """Whatever is at ``path`` (a file, a link, a folder), never what a
    link points at; nothing there is fine."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        # fd-based on Linux: never follows a link inside (avoids_symlink_attacks)
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def replace(path, data, temporary):
    """Make ``path`` hold ``data``: written to ``temporary`` (a stale one
    removed first, then created exclusively), then renamed over ``path``
    (a link there is replaced, not followed)."""
    remove(temporary)
    fd = create(temporary)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        os.close(fd)
        remove(temporary)
        raise
    os.close(fd)
    os.replace(temporary, path)


def make_folder(path, mode=0o700):
    """A new private folder ``path`` (mkdir never follows a link: an
    existing name, a link included, is FileExistsError)."""
    os.mkdir(path, mode)


def set_folder_mode(path, mode):
    """chmod the folder ``path`` (not a link: ELOOP) through its descriptor."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _EXISTING)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def is_real_folder(path):
    """True when ``path`` is a folder, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def makedirs_inside(root, parts):
    """Make the folders ``parts`` (a tuple of names) inside ``root``,
    where none may be a link: ELOOP (an OSError) if one is."""
    path = root
    for part in parts:
        path = os.path.join(path, part)
        try:
            os.mkdir(path, 0o777)
        except FileExistsError:
            if not is_real_folder(path):
                raise OSError(errno.ELOOP, "not a folder (a link?)", path) from None
    return path
