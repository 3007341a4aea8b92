"""The sinks of offers a later session can continue (``IResumableSink``,
the "resume" feature, docs/transfer-v2.md "Resume"): a file's bytes and a
folder's files under fixed hidden names beside the target, with a state
file or journal naming the offer; what an earlier session left is
checked (hashed, away from the reactor) before it is used, and discarded
with the reason in ``discarded`` when it does not match. Every hidden
name is read, written and removed without following a link
(``_landing._nofollow``; docs/security.md "Hidden files")."""
import json
import os
import stat

import attr
from zope.interface import implementer

from .. import _landing
from .._landing import _nofollow
from . import _hashing
from . import _messages as M
from ._interfaces import IResumableSink
from ._plain_sinks import DirectorySink, check_target, mode_of, plain_target
from ._writers import FILE_MODE, JournaledFile, ResumablePartial

Refused = _landing.Refused


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


RESUME_SUFFIX = ".resume"
STATE_SUFFIX = ".resume.json"
# the temporary name a state file or journal is rewritten under
STATE_TEMP_SUFFIX = ".resume.json.new"
# every fixed hidden name a sink uses beside its target (the random ones
# come from tempfile, created O_EXCL): the hostile tests plant a link at
# each (tests/hostile/test_planted_links.py)
KEPT_SUFFIXES = (RESUME_SUFFIX, STATE_SUFFIX, STATE_TEMP_SUFFIX)
_STATE_MAX = 64 * 1024


def kept_path(folder, base, suffix):
    """The fixed hidden name beside ``folder``/``base`` where an interrupted
    offer's bytes (``RESUME_SUFFIX``) or their state (``STATE_SUFFIX``) are
    kept (``_landing.kept_name``: it fits NAME_MAX and stays the same for
    the same offer in the next session)."""
    return os.path.join(folder, _landing.kept_name(base, suffix))


def write_state(path, temporary, lines):
    """The state file or journal ``path``, rewritten whole (never through a
    link: ``_nofollow.replace``)."""
    _nofollow.replace(path, "".join(json.dumps(line) + "\n" for line in lines).encode(),
                      temporary)


def _new_file(path):
    """The new file ``path`` (exclusively, never through a link), or None
    when the name exists. A folder's next file nearly always is new: one
    create, not a failed reopen before it, and nothing to cut
    (docs/transfer-v2.md, "Per-record work")."""
    try:
        return _nofollow.create_file(path, FILE_MODE)
    except FileExistsError:
        return None


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
    modes = False  # the "file-modes" feature: the file gets the mode offered

    def __init__(self, offer, directory, free_space=_landing.default_free_space, name=None):
        self.final_path = plain_target(name or offer.filename, directory)
        check_target(self.final_path, directory, offer.bytes, free_space)
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
            write_state(self._state, self._state_temp, [self._identity])
            hasher = M.new_hash()
        else:
            hasher = self.resume.hasher
        return ResumablePartial(self.final_path, self._partial, self._state, header.bytes,
                                 offset, hasher, mode_of(self, header))

    def open_resumed(self, header):
        """The offering side's answer to our resume request."""
        return self.open_file((header.filename,), header)

    def complete(self):
        pass

    def abort(self):
        pass  # the writer keeps (suspend) or deletes (abort) its own bytes

    suspend = abort


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
        self._journal = None  # the journal, open for appending (_journal_file)

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
        for (size, digest), path in zip(done, files, strict=False):
            target = os.path.join(self._tmp, *path)
            if (os.lstat(target).st_size != size
                    or _hashing.hash_file(target, None, cancelled,
                                          follow=False)[0].digest() != digest):
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
        hasher = (_hashing.hash_file(partial, offset, cancelled, follow=False)[0] if offset
                  else M.new_hash())
        return Held(offset, hasher, kept + offset, len(done), tuple(d for _, d in done),
                    tuple(size for size, _ in done))

    def _forget(self):
        self._close_journal()
        for path in (self._tmp, self._journal_path, self._journal_temp):
            _nofollow.remove(path)
        self._made = set()

    def _close_journal(self):
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def _start_over(self):
        self._forget()
        _nofollow.make_folder(self._tmp)
        self._write_journal([])
        self._journal_next = 0

    def _write_journal(self, done):
        self._close_journal()  # it would append to the file this replaces
        write_state(self._journal_path, self._journal_temp, [self._identity] + [
            {"bytes": size, "hash": digest.hex()} for size, digest in done])

    def _journal_file(self, size, digest):
        # one short append per verified file: no rewrite, no fsync (a kill
        # loses at most this line, and that file is then asked for again);
        # kept files that wait behind one that came again follow it. The
        # journal stays open from its first line to the sink's end (opened
        # once without following a link, not once per file:
        # docs/transfer-v2.md, "Per-record work")
        done = [(size, digest)]
        self._journal_next += 1
        while self._journal_next in self._kept_later:
            done.append(self._kept_later.pop(self._journal_next))
            self._journal_next += 1
        if self._journal is None:
            self._journal = os.fdopen(_nofollow.reopen(
                self._journal_path, os.O_WRONLY | os.O_APPEND), "ab", buffering=0)
        # json.dumps's own text for these two fields, without its call;
        # unbuffered: the line is in the file before the next file starts
        view = memoryview("".join(f'{{"bytes": {size}, "hash": "{digest.hex()}"}}\n'
                                  for size, digest in done).encode())
        while view:
            view = view[self._journal.write(view):]

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
        f = None if offset else _new_file(target)
        if f is None:  # a kept file continued, or one received again over itself
            f = os.fdopen(_nofollow.reopen(target, os.O_RDWR), "r+b")
            f.seek(offset)
            f.truncate()
        return JournaledFile(target, header.bytes, self._journal_file, f=f, hasher=hasher,
                              received=offset, mode=mode_of(self, header))

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
        self._close_journal()
        _nofollow.remove(self._journal_path)

    def abort(self):
        self._forget()

    def suspend(self):
        # the folder and its journal stay for a later session, unless
        # nothing arrived at all
        self._close_journal()
        try:
            if not os.listdir(self._tmp):
                self._forget()
        except OSError:
            pass
