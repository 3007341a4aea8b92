"""The receiving rules, one set for every protocol (classic file transfer,
transfer-v2) and for the command line (docs/security.md "Receiving files and directories"):

- ``_names``: which names from a peer are written (``check_name``,
  ``check_path``) and the hidden names we write under;
- ``_target``: where a received file or folder goes, and that nothing
  existing is replaced;
- ``_room``: room on disk for what an offer announces;
- ``_partial``: a file filled under a temporary name and linked to its
  final name when verified; the permission bits a received file or
  folder gets (``landed_mode``, one rule for both protocols);
- ``_folder``: a folder filled under a temporary name and renamed;
- ``_nofollow``: every hidden file made or opened without following a
  link (the only way the others touch one);
- ``_errors``: ``Refused`` and its kinds.

Library code: nothing here knows about a terminal or a prompt.
"""
from ._errors import BadName, BadOffer, Refused
from ._folder import TemporaryFolder, land_folder
from ._names import (
    MAX_PATH_BYTES,
    NAME_MAX,
    PARTIAL_PREFIX,
    check_name,
    check_path,
    kept_name,
    temporary_prefix,
)
from ._partial import PERMISSION_BITS, PartialFile, default_mode, landed_mode
from ._room import check_room, default_free_space
from ._target import check_not_existing, target_path

__all__ = [
    "BadName", "BadOffer", "Refused", "TemporaryFolder", "land_folder", "MAX_PATH_BYTES",
    "NAME_MAX", "PARTIAL_PREFIX", "check_name", "check_path", "kept_name",
    "temporary_prefix", "PERMISSION_BITS", "PartialFile", "default_mode", "landed_mode",
    "check_room", "default_free_space", "check_not_existing", "target_path",
]
