"""A received folder, filled inside a hidden temporary folder beside its
target and renamed to the target only when all of it arrived: nothing
appears under the final name before, and a failure removes everything.

The temporary folder is made by ``mkdtemp`` (private, random name,
``_names.temporary_prefix``); the rename never replaces anything that
appeared at the target meanwhile.
"""
import os

from . import _nofollow
from ._errors import Refused
from ._names import temporary_prefix
from ._partial import default_mode


class TemporaryFolder:
    """The folder that becomes ``target``; ``path`` is where to fill it."""

    def __init__(self, target, path=None):
        self.target = target
        if path is None:
            directory, name = os.path.split(target)
            path = _nofollow.create_temporary_folder(directory, temporary_prefix(name))
        self.path = path

    def commit(self):
        """Rename it to the target (0777 less the umask from now on)."""
        _nofollow.set_folder_mode(self.path, default_mode(0o777))
        if os.path.lexists(self.target):
            self.abort()
            raise Refused(f"refusing to overwrite existing '{self.target}'")
        os.rename(self.path, self.target)

    def abort(self):
        _nofollow.remove(self.path)


def land_folder(target, fill):
    """Make the folder ``target`` by ``fill(path)`` in a temporary folder,
    then renaming it; nothing is left on failure."""
    folder = TemporaryFolder(target)
    try:
        fill(folder.path)
        folder.commit()
    except BaseException:
        folder.abort()
        raise
