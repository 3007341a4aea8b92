"""What an interrupted transfer-v2 receive keeps in the receive folder
(docs/api.md "Sessions"; docs/security.md "Kept partials"): the library's
list, discard and expiry of kept partials, which the command line shows
(docs/cli.md "What an interrupted receive keeps").

An offer that did not complete keeps what arrived under fixed hidden
names beside its target (the "resume" feature): the bytes (or a folder's
files) as ``.wormhole-partial-NAME.resume`` and their state as
``.wormhole-partial-NAME.resume.json`` (``_landing.kept_name``, with the
suffixes of ``transfer_v2.KEPT_SUFFIXES``); the same offer sent again
into the same folder resumes from them. Here:

- ``kept_in(folder)``: every kept partial of ours in a folder (only
  regular files and real folders with our hidden names: a link under such
  a name is not ours and is left alone); ``kept_for(target)``: the one of
  an offer;
- ``discard(folder)``: removes exactly those, never following a link
  (``_landing``'s no-follow removal);
- ``expire(folder, now)``: the bound on what is kept: a kept partial
  untouched for ``MAX_AGE_DAYS`` is removed when the next transfer-v2
  receive into that folder begins.
"""
import os
import stat

import attrs

from .._landing import PARTIAL_PREFIX, kept_name
from .._landing._nofollow import remove
from ..transfer_v2 import KEPT_SUFFIXES

# a kept partial older than this (its newest file's modification time) is
# removed at the next transfer-v2 receive into its folder
MAX_AGE_DAYS = 30


@attrs.frozen
class Kept:
    """One interrupted offer's hidden files in ``folder``: their ``names``,
    the bytes they hold (``nbytes``: the data, not the state file) and the
    newest modification time."""
    folder: str
    base: str
    names: tuple
    nbytes: int
    mtime: float


def _size(path, st):
    """The bytes under ``path`` (a regular file or a real folder), never
    following a link."""
    if stat.S_ISREG(st.st_mode):
        return st.st_size
    total = 0
    for root, _dirs, files in os.walk(path, followlinks=False):
        for name in files:
            try:
                sub = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if stat.S_ISREG(sub.st_mode):
                total += sub.st_size
    return total


def _ours(folder, name):
    """(lstat, suffix) when ``name`` in ``folder`` is one of our kept
    files (a hidden name with a kept suffix, a regular file or a real
    folder), else None."""
    if not name.startswith(PARTIAL_PREFIX):
        return None
    # the longest suffix first, so a name is counted under its own one
    for suffix in sorted(KEPT_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix) and len(name) > len(PARTIAL_PREFIX) + len(suffix):
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                return None
            if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
                return st, suffix
            return None
    return None


def kept_in(folder):
    """Every Kept in ``folder``, by name."""
    groups = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        found = _ours(folder, name)
        if found is None:
            continue
        st, suffix = found
        base = name[len(PARTIAL_PREFIX):-len(suffix)]
        group = groups.setdefault(base, {"names": [], "nbytes": 0, "mtime": 0.0})
        group["names"].append(name)
        if suffix == KEPT_SUFFIXES[0]:  # the data, not the state
            group["nbytes"] += _size(os.path.join(folder, name), st)
        group["mtime"] = max(group["mtime"], st.st_mtime)
    return [Kept(folder, base, tuple(g["names"]), g["nbytes"], g["mtime"])
            for base, g in sorted(groups.items())]


def kept_for(target):
    """The Kept of the offer whose final path is ``target``, or None."""
    folder, base = os.path.split(target)
    wanted = {kept_name(base, suffix) for suffix in KEPT_SUFFIXES}
    for kept in kept_in(folder):
        if wanted & set(kept.names):
            return kept
    return None


def discard(folder):
    """Remove every Kept of ``folder``; the list removed."""
    removed = kept_in(folder)
    for kept in removed:
        _remove(kept)
    return removed


def _remove(kept):
    for name in kept.names:
        remove(os.path.join(kept.folder, name))


def expire(folder, now, max_age_days=MAX_AGE_DAYS):
    """Remove the Kept of ``folder`` untouched for ``max_age_days``; the
    list removed."""
    old = [k for k in kept_in(folder) if now - k.mtime > max_age_days * 86400]
    for kept in old:
        _remove(kept)
    return old
