"""Where a received file or folder goes, and what may be there already.

The target is one checked name (``_names.check_name``) inside the chosen
folder, or the user's own ``-o`` choice; nothing existing is ever
replaced (a link counts as existing: it is not followed).
"""
import os

from ._errors import Refused
from ._names import check_name


def target_path(folder, offered, output=None):
    """The absolute path where something offered as ``offered`` (the
    peer's name, checked here only when it is used) goes: into
    ``folder``, or at ``output`` (relative to ``folder``), or into
    ``output`` under the offered name when ``output`` is a folder (as the
    reference does)."""
    if output:
        target = os.path.abspath(os.path.join(folder, output))
        if os.path.isdir(target):
            return os.path.join(target, check_name(offered))
        return target
    return os.path.join(os.path.abspath(folder), check_name(offered))


def check_not_existing(target, shown=None):
    """Refuse when anything, a link included, has the name ``target``."""
    if os.path.lexists(target):
        raise Refused(f"refusing to overwrite existing '{shown or target}'")
