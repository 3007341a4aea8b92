"""What a directory sends: one walk for both protocols (classic's zipfile,
File-transfer protocol, "Sender"; transfer-v2's DirectoryOffer), so that
their rules cannot drift apart (docs/cli.md "Files and directories").

- Links are followed, as the bytes sent will be: a link to a file sends
  the file's bytes under the link's name, a link to a directory is walked
  like one (what the reference 0.24 does).
- A link that leads back to a directory already being walked (a loop) and
  a directory that cannot be listed are unsendable: ``unsendable(local,
  reason)`` is called, and the caller decides whether that stops the send
  or is skipped with a warning (``--ignore-unsendable-files``).
- Only regular files are sent (``regular_file``): a FIFO, socket or
  device inside a directory is unsendable, and so is a dangling link.
"""
import os
import stat

import attrs


@attrs.frozen
class Entry:
    """A file or folder under the walked directory."""
    local: str  # where it is here
    segments: tuple  # its name in the offer: one string per level
    is_dir: bool
    holds_nothing: bool = False  # a folder in which nothing at all is


def walk(path, unsendable):
    """Yield an ``Entry`` for every folder under ``path`` (before what it
    holds) and for every name that is not a folder (files, links to
    files, and whatever ``regular_file`` will refuse), in sorted order."""
    seen = set()

    def listing_failed(e):
        unsendable(e.filename, e.strerror or str(e))

    def identity(p):
        st = os.stat(p)
        return (st.st_dev, st.st_ino)

    seen.add(identity(path))
    for root, dirs, files in os.walk(path, onerror=listing_failed, followlinks=True):
        dirs.sort()
        for name in list(dirs):
            local = os.path.join(root, name)
            try:
                key = identity(local)
            except OSError as e:
                dirs.remove(name)
                unsendable(local, e.strerror or str(e))
                continue
            if key in seen:
                dirs.remove(name)
                unsendable(local, "a link to a directory that is already being sent (a loop)")
                continue
            seen.add(key)
        rel = os.path.relpath(root, path)
        prefix = () if rel == "." else tuple(rel.split(os.sep))
        if prefix:
            yield Entry(root, prefix, True, holds_nothing=not files and not dirs)
        for name in sorted(files):
            yield Entry(os.path.join(root, name), prefix + (name,), False)


def regular_file(local):
    """``os.stat(local)``, following links as the bytes sent will; an
    OSError saying what it is when it is not a regular file."""
    st = os.stat(local)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(0, f"not a regular file ({kind(st.st_mode)})")
    return st


def kind(mode):
    """What a non-regular file is, in words."""
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISCHR, "a character device")):
        if test(mode):
            return name
    return "not a file"
