"""Room on disk: an offer is refused before anything is accepted when
the target's file system cannot take what it announces (``free_space``
is injectable so tests can play a full disk)."""
import os
import shutil

from ._errors import Refused


def default_free_space(path):
    """Bytes free for us on the file system of ``path``."""
    return shutil.disk_usage(path).free


def check_room(free_space, target, needed):
    """Refuse when the target's folder is missing or not writable, or its
    file system has less than ``needed`` bytes free."""
    where = os.path.dirname(target)
    if not os.path.isdir(where):
        raise Refused(f"cannot write into '{where}': no such directory")
    if not os.access(where, os.W_OK):
        raise Refused(f"cannot write into '{where}': permission denied")
    free = free_space(where)
    if free < needed:
        raise Refused(f"not enough free space in '{where}': the transfer needs "
                      f"{needed} bytes, only {free} are free")
