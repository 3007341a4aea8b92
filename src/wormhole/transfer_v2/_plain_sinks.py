"""The sinks of offers that cannot be resumed (``ISink``): a file to a
hidden temporary name linked to its final name, a folder filled inside a
hidden temporary folder renamed to its final name (``_sink`` says which
sink an offer gets; the rules are ``wormhole._landing``'s)."""
import os

from zope.interface import implementer

from .. import _landing
from .._landing import _nofollow
from ._interfaces import ISink
from ._writers import FolderFile, VerifiedPartial


def plain_target(name, directory):
    """Where ``name`` (checked: BadName) goes in ``directory``."""
    return _landing.target_path(directory, name)


def mode_of(sink, header):
    """The mode ``header`` (a FileOffer) carries for its file when the
    "file-modes" feature is on (``sink.modes``), else None (the default)."""
    return header.mode if sink.modes else None


def check_target(target, directory, needed, free_space):
    """Nothing at ``target`` yet, and room for ``needed`` bytes (Refused)."""
    _landing.check_not_existing(target, os.path.relpath(target, directory))
    _landing.check_room(free_space, target, needed)


@implementer(ISink)
class FileSink:
    """One offered file, into ``directory``."""

    modes = False  # the "file-modes" feature: the file gets the mode offered

    def __init__(self, offer, directory, free_space=_landing.default_free_space, name=None):
        self.final_path = plain_target(name or offer.filename, directory)
        check_target(self.final_path, directory, offer.bytes, free_space)

    def open_file(self, path, header):
        return VerifiedPartial(self.final_path, header.bytes, mode_of(self, header))

    def complete(self):
        pass

    def abort(self):
        pass  # the machine aborts the writer itself

    suspend = abort


@implementer(ISink)
class DirectorySink:
    """One offered directory, into ``directory``/``offer.base``."""

    modes = False  # the "file-modes" feature: each file gets its header's mode

    def __init__(self, offer, directory, free_space=_landing.default_free_space, name=None):
        self._prepare(offer, directory, free_space, name)
        self._folder = _landing.TemporaryFolder(self.final_path)
        self._tmp = self._folder.path

    def _prepare(self, offer, directory, free_space, name):
        self.final_path = plain_target(name or offer.base, directory)
        # every path, before anything is made: the same rule as a zip entry's
        for path in offer.files + offer.folders + tuple(p for p, _ in offer.folder_modes):
            _landing.check_path(path)
        check_target(self.final_path, directory, offer.size, free_space)
        self._offer = offer
        self._made = set()  # folders already created inside the temporary one

    def _folder_for(self, path):
        """Where the file ``path`` goes, its folders made (none a link)."""
        folder = path[:-1]
        if folder and folder not in self._made:
            _nofollow.makedirs_inside(self._tmp, folder)
            self._made.add(folder)
        return os.path.join(self._tmp, *path)

    def open_file(self, path, header):
        return FolderFile(self._folder_for(path), header.bytes, mode=mode_of(self, header))

    def complete(self):
        # the "empty-folders" feature: folders no file created
        for folder in self._offer.folders:
            _nofollow.makedirs_inside(self._tmp, folder)
        if self.modes:
            self._set_folder_modes()
        self._folder.commit()

    def _set_folder_modes(self):
        """The "file-modes" feature: each folder the offer gives a mode
        gets the receiving rules' one, once nothing more goes into it:
        deepest first (a read-only folder is filled before), on its
        descriptor, never through a link; one that was not made (an
        empty folder to a peer without "empty-folders") is skipped."""
        # every path was checked at accept (_prepare), and every folder
        # inside the hidden one is ours (made, or checked when kept)
        for path, mode in sorted(self._offer.folder_modes, key=lambda p: -len(p[0])):
            folder = os.path.join(self._tmp, *path)
            if os.path.lexists(folder):
                _nofollow.set_folder_mode(folder, _landing.landed_mode(mode, 0o777))

    def abort(self):
        self._folder.abort()

    suspend = abort
