"""Where accepted offers are written, under the receiving rules that
classic receive follows too (``wormhole._landing``): every name is checked
(the offered name and every path of a directory offer, before anything is
made), the target is a plain name inside the chosen folder, never an
existing one, there must be room for the offered bytes, and nothing
appears under a final name before its hash is verified.

- a file offer: bytes go to a hidden temporary name beside the target
  (``_landing.PartialFile``, hashed with BLAKE2b instead of SHA-256) and
  are linked to the final name once the FileAcknowledges matched;
- a directory offer: every file is written (the same way) inside a hidden
  temporary folder beside the target, which is renamed to the target once
  the last file matched; on any failure the folder is removed.

With the "resume" feature a file goes to a fixed hidden name and a
folder to a fixed hidden folder, each with a state file, so that a later
session can continue (docs/transfer-v2.md "Resume"); what an earlier
session left is checked before it is used (it may be stale or tampered
with) and discarded, with the reason in ``discarded``, when it does not
match. With the "empty-folders" feature a folder's empty folders are made
before it is renamed into place.

The paths inside a directory offer are checked (``_landing.check_path``)
before the temporary folder is made, so ``os.path.join`` stays inside it.
"""
import json
import os
import stat

import attr
from zope.interface import implementer

from .. import _landing
from .._landing import _nofollow
from . import _hashing
from . import _messages as M
from ._interfaces import IResumableSink, ISink, IWriter

Refused = _landing.Refused


@implementer(IWriter)
class _VerifiedPartial(_landing.PartialFile):
    """A PartialFile hashed with transfer-v2's BLAKE2b (the FileAcknowledge
    hash), counting what it expects."""

    def __init__(self, target, expected):
        super().__init__(target, M.new_hash())
        self.expected = expected

    @property
    def received(self):
        return self.size

    def digest(self):
        return self._hash.digest()

    def suspend(self):
        self.abort()  # nothing to resume from: an interrupted file goes


@attr.s(frozen=True)
class Held:
    """What an earlier session left that this one can continue: for a
    directory ``files`` whole files (their digests, in order), then the
    first ``offset`` bytes of the next file, which ``hasher`` has seen;
    ``bytes`` counts all of it. ``files`` is None for a file offer;
    ``sizes`` are the whole files' sizes."""
    offset = attr.ib()
    hasher = attr.ib()
    bytes = attr.ib()
    files = attr.ib(default=None)
    digests = attr.ib(default=())
    sizes = attr.ib(default=())

    def request(self):
        """The OfferAccept that asks the offering side to continue."""
        if self.files is None:
            return M.OfferAccept(self.offset, self.hasher.copy().digest())
        # the digests themselves too: a sender that reads them keeps the
        # files that still match when others changed (FileOffer.resend)
        return M.OfferAccept(self.offset, self.hasher.copy().digest(), self.files,
                             M.files_digest(self.digests), b"".join(self.digests))


def _plain_target(name, directory):
    return _landing.target_path(directory, name)


def _check(target, directory, needed, free_space):
    _landing.check_not_existing(target, os.path.relpath(target, directory))
    _landing.check_room(free_space, target, needed)


RESUME_SUFFIX = ".resume"
STATE_SUFFIX = ".resume.json"
# the temporary name a state file or journal is rewritten under
STATE_TEMP_SUFFIX = ".resume.json.new"
# every fixed hidden name a sink uses beside its target (the random ones
# come from tempfile, created O_EXCL): the hostile tests plant a link at
# each (tests/unit/hostile/test_planted_links.py)
KEPT_SUFFIXES = (RESUME_SUFFIX, STATE_SUFFIX, STATE_TEMP_SUFFIX)
_STATE_MAX = 64 * 1024
# the files of a received folder: what open() would give them (less the umask)
FILE_MODE = 0o666


def kept_path(folder, base, suffix):
    """The fixed hidden name beside ``folder``/``base`` where an interrupted
    offer's bytes (``RESUME_SUFFIX``) or their state (``STATE_SUFFIX``) are
    kept (``_landing.kept_name``: it fits NAME_MAX and stays the same for
    the same offer in the next session)."""
    return os.path.join(folder, _landing.kept_name(base, suffix))


def _write_state(path, temporary, lines):
    """The state file or journal ``path``, rewritten whole (never through a
    link: ``_nofollow.replace``)."""
    _nofollow.replace(path, "".join(json.dumps(line) + "\n" for line in lines).encode(),
                      temporary)


@implementer(IWriter)
class _ResumablePartial(_landing.PartialFile):
    """The bytes of a file offer under a fixed hidden name beside the
    target, continued from ``offset`` (whose bytes ``hasher`` has seen).
    ``suspend()`` keeps them (and the state file) for a later session;
    ``abort()`` deletes both; ``commit()`` is PartialFile's (no overwrite)."""

    def __init__(self, target, path, state_path, expected, offset, hasher):
        # not PartialFile.__init__: the name is fixed, the file may exist;
        # private (0600) while it fills, never through a link
        self.target = target
        self.path = path
        self._state_path = state_path
        self._f = os.fdopen(_nofollow.open_or_create(path), "r+b")
        self._f.seek(offset)
        self._f.truncate()
        self._hash = hasher
        self.size = offset
        self.expected = expected

    @property
    def received(self):
        return self.size

    def digest(self):
        return self._hash.copy().digest()

    def commit(self):
        super().commit()
        _nofollow.remove(self._state_path)

    def suspend(self):
        self._f.close()

    def abort(self):
        super().abort()
        _nofollow.remove(self._state_path)


@implementer(IResumableSink)
class ResumableFileSink:
    """One offered file, into ``directory``, resumable (the "resume"
    feature, docs/transfer-v2.md "Resume"): the bytes go to
    ``.wormhole-partial-NAME.resume`` beside the target, with a state file
    ``...resume.json`` naming the offer (filename, size, timestamp). When
    an earlier session left bytes for the same offer, ``resume`` is
    (offset, hasher) to ask for the rest; state for another version of the
    file is discarded, and ``discarded`` says why. Both are known after
    ``check_kept(cancelled)``, which hashes the kept bytes: run it with a
    runner of ``_hashing``, away from the reactor. Every hidden name is
    read, written and removed without following a link (``_nofollow``)."""

    kept_bytes = 0  # no whole files: a file's kept bytes are its offset

    def __init__(self, offer, directory, free_space=_landing.default_free_space, name=None):
        self.final_path = _plain_target(name or offer.filename, directory)
        _check(self.final_path, directory, offer.bytes, free_space)
        folder, base = os.path.split(self.final_path)
        self._partial = kept_path(folder, base, RESUME_SUFFIX)
        self._state = kept_path(folder, base, STATE_SUFFIX)
        self._state_temp = kept_path(folder, base, STATE_TEMP_SUFFIX)
        self._identity = {"filename": offer.filename, "bytes": offer.bytes,
                          "timestamp": offer.timestamp}
        self.discarded = None
        self.resume = None

    def check_kept(self, cancelled=_hashing.never):
        self.resume = self._find_resumable(cancelled)

    def _read_state(self):
        try:
            return json.loads(_nofollow.read(self._state, _STATE_MAX).decode("utf-8"))
        except (OSError, ValueError, Refused):
            return None

    def _find_resumable(self, cancelled):
        if not any(os.path.lexists(p) for p in (self._state, self._partial, self._state_temp)):
            return None
        state = self._read_state()
        try:
            st = os.lstat(self._partial)
            held = st.st_size if stat.S_ISREG(st.st_mode) else None
        except OSError:
            held = None
        if state != self._identity or held is None or held > self._identity["bytes"]:
            self._forget()
            self.discarded = ("the bytes kept from an earlier transfer belong to another "
                              "version of this file: discarded, receiving it in full")
            return None
        _nofollow.remove(self._state_temp)  # stale: the state file is whole
        return Held(held, _hashing.hash_file(self._partial, None, cancelled, follow=False)[0], held)

    def _forget(self):
        for path in (self._partial, self._state, self._state_temp):
            _nofollow.remove(path)

    def open_file(self, path, header):
        """Continue at ``header.offset`` (the offering side agreed), or start
        over (offset 0 or absent)."""
        offset = header.offset or 0
        if offset and (self.resume is None or self.resume.offset != offset):
            raise Refused(f"the sender resumes at byte {offset}, which we did not ask for")
        if not offset:
            if self.resume is not None:
                self.discarded = ("the sender's file no longer starts with the bytes kept "
                                  "from an earlier transfer: discarded, receiving it in full")
            self._forget()
            _write_state(self._state, self._state_temp, [self._identity])
            hasher = M.new_hash()
        else:
            hasher = self.resume.hasher
        return _ResumablePartial(self.final_path, self._partial, self._state, header.bytes,
                                 offset, hasher)

    def open_resumed(self, header):
        """The offering side's answer to our resume request."""
        return self.open_file((header.filename,), header)

    def complete(self):
        pass

    def abort(self):
        pass  # the writer keeps (suspend) or deletes (abort) its own bytes

    suspend = abort


@implementer(ISink)
class FileSink:
    """One offered file, into ``directory``."""

    def __init__(self, offer, directory, free_space=_landing.default_free_space, name=None):
        self.final_path = _plain_target(name or offer.filename, directory)
        _check(self.final_path, directory, offer.bytes, free_space)

    def open_file(self, path, header):
        return _VerifiedPartial(self.final_path, header.bytes)

    def complete(self):
        pass

    def abort(self):
        pass  # the machine aborts the writer itself

    suspend = abort


@implementer(IWriter)
class _FolderFile:
    """One file of a directory offer, written under its own name inside
    the offer's hidden temporary folder: nothing there is visible before
    the folder is renamed, so no temporary name, rename or fsync per file
    (classic receive unpacks a zipfile the same way); a temporary name and
    an fsync per file made a 2,000-file folder take twice the reference's
    time (docs/performance.md). Created ``O_EXCL | O_NOFOLLOW``: a name
    cannot be written twice, nor through a link; mode 0666 less the umask,
    what ``open()`` gives (the folder is private, 0700, until it is
    renamed), as classic's unpacker does."""

    def __init__(self, path, expected, f=None, hasher=None, received=0):
        self._path = path
        self._f = _nofollow.create_file(path, FILE_MODE) if f is None else f
        self._hash = M.new_hash() if hasher is None else hasher
        self.expected = expected
        self.received = received

    def write(self, data):
        self._f.write(data)
        self._hash.update(data)
        self.received += len(data)

    def digest(self):
        return self._hash.digest()

    def commit(self):
        self._f.close()

    def abort(self):
        self._f.close()
        _nofollow.remove(self._path)

    suspend = abort


@implementer(ISink)
class DirectorySink:
    """One offered directory, into ``directory``/``offer.base``."""

    def __init__(self, offer, directory, free_space=_landing.default_free_space, name=None):
        self._prepare(offer, directory, free_space, name)
        self._folder = _landing.TemporaryFolder(self.final_path)
        self._tmp = self._folder.path

    def _prepare(self, offer, directory, free_space, name):
        self.final_path = _plain_target(name or offer.base, directory)
        # every path, before anything is made: the same rule as a zip entry's
        for path in offer.files + offer.folders:
            _landing.check_path(path)
        _check(self.final_path, directory, offer.size, free_space)
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
        return _FolderFile(self._folder_for(path), header.bytes)

    def complete(self):
        # the "empty-folders" feature: folders no file created
        for folder in self._offer.folders:
            _nofollow.makedirs_inside(self._tmp, folder)
        self._folder.commit()

    def abort(self):
        self._folder.abort()

    suspend = abort


@implementer(IWriter)
class _JournaledFile(_FolderFile):
    """A file of a resumable directory offer: once verified, a line in the
    offer's journal says so; an interrupted one keeps its bytes."""

    def __init__(self, path, expected, journal, **kw):
        super().__init__(path, expected, **kw)
        self._journal = journal

    def commit(self):
        super().commit()
        self._journal(self.received, self.digest())

    def suspend(self):
        self._f.close()


class _Stale(Exception):
    """What an earlier session left cannot be used."""


@implementer(IResumableSink)
class ResumableDirectorySink(DirectorySink):
    """One offered directory, resumable (docs/transfer-v2.md "Resume"): its
    files go to the fixed hidden folder ``.wormhole-partial-BASE.resume``
    beside the target, in offered order, and each verified file adds a
    line (size, BLAKE2b) to the journal ``...resume.json`` whose first
    line names the offer (its base and the digest of its file list). When
    an earlier session left a journal and a folder for the same offer,
    every kept file is hashed again and checked against the journal, the
    folder must hold nothing else (no links, no other names), and
    ``resume`` is the ``Held`` to ask for the rest; anything else is
    discarded and ``discarded`` says why. Both are known after
    ``check_kept(cancelled)``, which does that hashing: run it with a
    runner of ``_hashing``, away from the reactor. Every hidden name, and
    every file inside the folder, is read, written and removed without
    following a link (``_nofollow``)."""

    def __init__(self, offer, directory, free_space=_landing.default_free_space, name=None):
        self._prepare(offer, directory, free_space, name)
        folder, base = os.path.split(self.final_path)
        self._tmp = kept_path(folder, base, RESUME_SUFFIX)
        self._folder = _landing.TemporaryFolder(self.final_path, self._tmp)
        self._journal_path = kept_path(folder, base, STATE_SUFFIX)
        self._journal_temp = kept_path(folder, base, STATE_TEMP_SUFFIX)
        listing = M.encode_record(M.DirectoryOffer(offer.base, offer.size, offer.files))
        self._identity = {"base": offer.base, "offer": M.files_digest([listing]).hex()}
        self.discarded = None
        self.resume = None
        self._journal_next = 0  # journal lines written (a prefix of the offer)
        self._kept_later = {}  # index: (size, digest) of kept files journaled later

    def check_kept(self, cancelled=_hashing.never):
        if any(os.path.lexists(p) for p in (self._tmp, self._journal_path, self._journal_temp)):
            try:
                self.resume = self._held(cancelled)
            except (_Stale, OSError, ValueError, Refused) as e:
                self.discarded = (f"the files kept from an earlier transfer of this folder "
                                  f"cannot be used ({e}): discarded, receiving it in full")
        if self.resume is None:
            self._start_over()
        else:
            _nofollow.remove(self._journal_temp)  # stale: the journal is whole

    # -- what an earlier session left ------------------------------------------
    def _read_journal(self):
        limit = 1024 + 200 * (len(self._offer.files) + 1)
        raw = _nofollow.read(self._journal_path, limit)
        if len(raw) > limit:
            raise _Stale("its journal is too long")
        lines = raw.split(b"\n")[:-1]  # a last line without its newline was cut
        if not lines or json.loads(lines[0]) != self._identity:
            raise _Stale("they belong to another version of it")
        done = []
        for line in lines[1:]:
            entry = json.loads(line)
            if (not isinstance(entry, dict) or set(entry) != {"bytes", "hash"}
                    or not isinstance(entry["bytes"], int) or entry["bytes"] < 0
                    or not isinstance(entry["hash"], str) or len(entry["hash"]) != 64):
                raise _Stale("its journal is damaged")
            done.append((entry["bytes"], bytes.fromhex(entry["hash"])))
        if len(done) > len(self._offer.files):
            raise _Stale("its journal lists more files than the offer")
        return done

    def _check_listing(self, expected):
        """The folder holds only folders and regular files of ``expected``."""
        if not _nofollow.is_real_folder(self._tmp):
            raise _Stale("the kept folder is not a folder")
        folders = {p[:i] for p in expected for i in range(1, len(p))}
        made = set()
        for root, dirs, names in os.walk(self._tmp):
            rel = os.path.relpath(root, self._tmp)
            prefix = () if rel == "." else tuple(rel.split(os.sep))
            for n in dirs + names:
                mode = os.lstat(os.path.join(root, n)).st_mode
                ok = (stat.S_ISDIR(mode) and prefix + (n,) in folders
                      or stat.S_ISREG(mode) and prefix + (n,) in expected)
                if not ok:
                    raise _Stale(f"it holds '{os.path.join(rel, n)}', which we did not write")
                if stat.S_ISDIR(mode):
                    made.add(prefix + (n,))
        self._made = made  # the folders that exist (checked: none a link)

    def _held(self, cancelled):
        done = self._read_journal()
        files = self._offer.files
        # files past the journal's next one may be there too (kept files
        # whose line was not written yet: cut while changed ones came
        # again); not proven, they are received again over themselves
        self._check_listing(set(files))
        for (size, digest), path in zip(done, files):
            target = os.path.join(self._tmp, *path)
            if (os.lstat(target).st_size != size
                    or _hashing.hash_file(target, None, cancelled, follow=False)[0].digest() != digest):
                raise _Stale(f"'{'/'.join(path)}' changed since it was received")
        if len(done) == len(files):
            # interrupted after the last file: ask for its (empty) rest
            done.pop()
        partial = os.path.join(self._tmp, *files[len(done)])
        offset = os.lstat(partial).st_size if os.path.lexists(partial) else 0
        if not done and not offset:
            self._forget()
            return None
        kept = sum(size for size, _ in done)
        hasher = _hashing.hash_file(partial, offset, cancelled, follow=False)[0] if offset else M.new_hash()
        return Held(offset, hasher, kept + offset, len(done), tuple(d for _, d in done),
                    tuple(size for size, _ in done))

    def _forget(self):
        for path in (self._tmp, self._journal_path, self._journal_temp):
            _nofollow.remove(path)
        self._made = set()

    def _start_over(self):
        self._forget()
        _nofollow.make_folder(self._tmp)
        self._write_journal([])
        self._journal_next = 0

    def _write_journal(self, done):
        _write_state(self._journal_path, self._journal_temp, [self._identity] + [
            {"bytes": size, "hash": digest.hex()} for size, digest in done])

    def _journal_file(self, size, digest):
        # one short append per verified file: no rewrite, no fsync (a kill
        # loses at most this line, and that file is then asked for again);
        # kept files that wait behind one that came again follow it
        done = [(size, digest)]
        self._journal_next += 1
        while self._journal_next in self._kept_later:
            done.append(self._kept_later.pop(self._journal_next))
            self._journal_next += 1
        _nofollow.append(self._journal_path, "".join(
            json.dumps({"bytes": size, "hash": digest.hex()}) + "\n"
            for size, digest in done).encode())

    # -- writing ---------------------------------------------------------------
    def open_file(self, path, header):
        """A file of the offer from byte 0 (over a kept copy that changed
        at the sender), or the partly kept one continued at
        ``header.offset``, which must be where we asked to resume."""
        offset = header.offset or 0
        hasher = M.new_hash()
        if offset:
            held = self.resume
            if (held is None or held.offset != offset
                    or tuple(path) != self._offer.files[held.files]):
                raise Refused(f"the sender resumes {'/'.join(path)!r} at byte {offset}, "
                              "which we did not ask for")
            hasher = held.hasher.copy()
        target = self._folder_for(path)
        f = os.fdopen(_nofollow.open_or_create(target, mode=FILE_MODE), "r+b")
        f.seek(offset)
        f.truncate()
        return _JournaledFile(target, header.bytes, self._journal_file, f=f, hasher=hasher,
                              received=offset)

    def open_resumed(self, header):
        """The offering side's answer to our resume request: continue
        after ``header.skip`` files at ``header.offset`` (sending again
        first the kept files in ``header.resend``), or start over."""
        held = self.resume
        if header.resend is not None:
            return self._keep_matching(header)
        path = self._offer.files[header.skip]
        if header.skip == 0 and header.offset == 0:
            self.discarded = ("the sender's folder no longer matches the files kept from an "
                              "earlier transfer: discarded, receiving it in full")
            self._start_over()
            return self.open_file(path, header)
        if (header.skip, header.offset) != (held.files, held.offset):
            raise Refused(f"the sender resumes after {header.skip} files at byte "
                          f"{header.offset}, which we did not ask for")
        self._write_journal(self._read_journal()[:held.files])
        self._journal_next = held.files
        return self.open_file(path, header)

    def _keep_matching(self, header):
        """The sender kept the files that still match: the others are
        deleted and come first; the journal stays a prefix of the offer
        (a kept file's line follows the last changed one before it)."""
        held = self.resume
        if header.skip != held.files:
            raise Refused(f"the sender resumes after {header.skip} files, "
                          f"where we kept {held.files}")
        again = set(header.resend)
        for i in header.resend:
            _nofollow.remove(os.path.join(self._tmp, *self._offer.files[i]))
        first = header.resend[0] if header.resend else held.files
        kept = self._read_journal()[:held.files]
        self._write_journal(kept[:first])
        self._journal_next = first
        self._kept_later = {i: kept[i] for i in range(first, held.files) if i not in again}
        why = []
        if again:
            why.append(f"{len(again)} of the files kept from an earlier transfer changed "
                       "at the sender")
        if header.offset != held.offset:
            why.append(f"the start kept of '{'/'.join(self._offer.files[held.files])}' "
                       "is not the sender's")
        if why:
            self.discarded = "; ".join(why) + ": received again"
        return self.open_file(self._offer.files[first], header)

    @property
    def kept_bytes(self):
        """The bytes of the whole files kept from an earlier session."""
        return self.resume.bytes - self.resume.offset if self.resume else 0

    def complete(self):
        super().complete()
        _nofollow.remove(self._journal_path)

    def abort(self):
        self._forget()

    def suspend(self):
        # the folder and its journal stay for a later session, unless
        # nothing arrived at all
        try:
            if not os.listdir(self._tmp):
                self._forget()
        except OSError:
            pass


def sink_for(offer, directory, free_space=_landing.default_free_space, name=None,
             resumable=False):
    """The sink for an accepted offer (an ISink; an IResumableSink with
    ``resumable``), or Refused (the reason goes to the peer): BadName for
    a name or a path of the offer that the receiving rules refuse, as
    classic receive refuses it. ``name`` replaces the offered name
    (``wormhole receive -o``); ``resumable`` when both peers declared the
    "resume" feature."""
    if isinstance(offer, M.DirectoryOffer):
        if resumable and offer.files:
            return ResumableDirectorySink(offer, directory, free_space, name)
        return DirectorySink(offer, directory, free_space, name)
    if resumable:
        return ResumableFileSink(offer, directory, free_space, name)
    return FileSink(offer, directory, free_space, name)
