"""What we offer: a file or a directory as the spec's FileOffer or
DirectoryOffer, with the stat facts remembered at offer time
(Dilated File Transfer, "Making an Offer": peers MUST compare size and
modification time when sending), and the streamer that sends the bytes.

Symbolic links (Dilated File Transfer, "Symbolic Links"; our choice in
docs/transfer-v2.md): a link given on the command line is followed (its
target's bytes under the link's name, like classic); inside a directory
the walk is classic's (``_outgoing_tree``: links followed, a link to a
directory walked like one, a loop refused), and what cannot be sent is
reported through ``skipped``, never left out in silence.
"""
import os
import stat

import attr
from twisted.internet import interfaces
from zope.interface import implementer

from .._landing import PERMISSION_BITS
from .._outgoing_tree import regular_file, walk
from ..errors import TransferError
from . import _framing, _hashing
from . import _messages as M

# "A good default to choose in 2022 is 16KiB": we take nearly the largest
# the spec allows (65535), fewer records per byte (docs/transfer-v2.md
# "Message size"): 30 bytes less, so that the framed record and the
# Dilation DATA record around it are one Noise message
# (_framing.ONE_MESSAGE): the largest made every record two, two AEAD
# calls on each side and a 64 KiB copy to join them at the receiver
DATA_CHUNK = _framing.ONE_MESSAGE - _framing.HEADER - 1
# bytes sent in one reactor turn before the streamer lets others run
TURN_BUDGET = 4 * 1024 * 1024
# a data record is cut short to fill the batch a burst gathers (a header,
# the end of the previous file) when at least this much still fits
MIN_FILL = 1024


class SourceChanged(TransferError):
    """A file of the offer changed, grew, shrank or vanished after the offer."""


@attr.s(frozen=True)
class OutgoingFile:
    path = attr.ib()        # where to read it
    segments = attr.ib()    # its path relative to the offer ((name,) for a file)
    size = attr.ib()
    mtime_ns = attr.ib()
    # its permission bits (the "file-modes" feature), None for a peer without it
    mode = attr.ib(default=None)

    @property
    def header(self):
        return M.FileOffer(self.segments[-1], self.mtime_ns // 10 ** 9, self.size,
                           mode=self.mode)


@attr.s(frozen=True)
class Outgoing:
    """One offer: the record we send first and the files behind it."""
    offer = attr.ib()   # M.FileOffer or M.DirectoryOffer
    files = attr.ib()   # [OutgoingFile], in offered order
    skipped = attr.ib(default=())  # paths we could not offer, with why

    @property
    def is_directory(self):
        return isinstance(self.offer, M.DirectoryOffer)

    @property
    def size(self):
        return sum(f.size for f in self.files)


def _name_of(path):
    return os.path.basename(os.path.normpath(os.path.abspath(path)))


def _permissions(st):
    """What the "file-modes" feature sends of a file's mode: its permission
    bits, never set-uid, set-gid or sticky (no receiver of ours keeps
    them: ``_landing.landed_mode``)."""
    return stat.S_IMODE(st.st_mode) & PERMISSION_BITS


def prepare(path):
    """The Outgoing for ``path`` (a file or a directory), or TransferError."""
    if not os.path.exists(path):
        raise TransferError(f"Cannot send: no file or directory named '{path}'")
    st = os.stat(path)
    name = _name_of(path)
    if stat.S_ISREG(st.st_mode):
        f = OutgoingFile(path, (name,), st.st_size, st.st_mtime_ns, _permissions(st))
        return Outgoing(f.header, [f])
    if not stat.S_ISDIR(st.st_mode):
        raise TransferError(f"Cannot send '{path}': it is neither a file nor a directory")
    files, skipped, folders, folder_modes = [], [], [], []

    def unsendable(local, reason):
        skipped.append((local, reason))
    for entry in walk(path, unsendable):
        if entry.is_dir:
            folders.append(entry.segments)
            folder_modes.append((entry.segments, _permissions(os.stat(entry.local))))
            continue
        try:
            st = regular_file(entry.local)
        except OSError as e:
            unsendable(entry.local, e.strerror or str(e))
            continue
        files.append(OutgoingFile(entry.local, entry.segments, st.st_size, st.st_mtime_ns,
                                  _permissions(st)))
    offer = M.DirectoryOffer(name, sum(f.size for f in files),
                             [list(f.segments) for f in files], _empty(folders, files),
                             folder_modes)
    return Outgoing(offer, files, tuple(skipped))


def _empty(folders, files):
    """The folders no file or other folder is created inside (the
    "empty-folders" feature sends only these: the rest appear anyway)."""
    holding = {p[:i] for p in folders for i in range(1, len(p))}
    holding.update(f.segments[:i] for f in files for i in range(1, len(f.segments)))
    return [list(p) for p in folders if p not in holding]


def without_folders(outgoing):
    """``outgoing`` for a peer without the "empty-folders" feature
    (Dilated File Transfer, "Version Negotiation": we send no attribute
    the peer did not declare)."""
    if not outgoing.is_directory or not outgoing.offer.folders:
        return outgoing
    return attr.evolve(outgoing, offer=attr.evolve(outgoing.offer, folders=()))


def without_modes(outgoing):
    """``outgoing`` for a peer without the "file-modes" feature: no FileOffer
    (the offer, a directory's headers) carries a mode, no DirectoryOffer
    its folders' modes."""
    files = [attr.evolve(f, mode=None) for f in outgoing.files]
    offer = outgoing.offer
    if isinstance(offer, M.FileOffer):
        offer = attr.evolve(offer, mode=None)
    else:
        offer = attr.evolve(offer, folder_modes=())
    return attr.evolve(outgoing, offer=offer, files=files)


def _check_unchanged(f):
    try:
        st = os.stat(f.path)
    except OSError as e:
        raise SourceChanged(f"'{f.path}' cannot be read any more: {e.strerror}") from None
    if st.st_size != f.size or st.st_mtime_ns != f.mtime_ns:
        raise SourceChanged(f"'{f.path}' changed after it was offered")


def prefix_hasher(f, nbytes, cancelled=_hashing.never):
    """The BLAKE2b state after the first ``nbytes`` of OutgoingFile ``f``
    (the "resume" feature), or None when the file changed since the offer
    (before or while it was hashed) or is shorter. Raises HashCancelled
    when ``cancelled()`` says so between chunks."""
    if nbytes > f.size:
        return None
    try:
        _check_unchanged(f)
        hasher, seen = _hashing.hash_file(f.path, nbytes, cancelled)
        # the bytes just hashed must be the offered ones: a file written
        # meanwhile has another modification time
        _check_unchanged(f)
    except (OSError, SourceChanged):
        return None
    return hasher if seen == nbytes else None


def digest_of(f, cancelled=_hashing.never):
    """The whole BLAKE2b digest of OutgoingFile ``f``, or None when it
    changed since the offer."""
    hasher = prefix_hasher(f, f.size, cancelled)
    return None if hasher is None else hasher.digest()


@attr.s(frozen=True)
class ResumePoint:
    """Where a resumed offer's data starts: ``skip`` whole files are not
    sent, except those in ``resend`` (a tuple, when the receiver sent its
    files' digests: kept files that changed, sent first), then the next
    file from byte ``offset``; ``hasher`` has seen that file's first
    ``offset`` bytes. ``held`` counts the bytes not sent."""
    skip = attr.ib()
    offset = attr.ib()
    hasher = attr.ib()
    held = attr.ib()
    resend = attr.ib(default=None)

    @property
    def kept_files(self):
        return self.skip - len(self.resend or ())


FROM_START = ResumePoint(0, 0, None, 0)


def resume_point(outgoing, accept, cancelled=_hashing.never):
    """Check an OfferAccept asking to resume against our files: a
    ResumePoint where the receiver's bytes are ours, or (FROM_START, why).
    It reads and hashes what the receiver kept: run it with a runner of
    ``_hashing`` (``cancelled`` stops it between chunks)."""
    files = outgoing.files
    skip = accept.resume_files or 0
    if outgoing.is_directory != (accept.resume_files is not None):
        return FROM_START, "the receiver asked to resume something else"
    if skip >= len(files):
        return FROM_START, "the receiver claims more files than the offer has"
    digests = []
    for f in files[:skip]:
        digests.append(digest_of(f, cancelled))
        if digests[-1] is None:
            return FROM_START, f"'{f.path}' changed"
    hasher = prefix_hasher(files[skip], accept.resume_offset, cancelled)
    if hasher is not None and hasher.copy().digest() != accept.resume_hash:
        hasher = None
    if accept.resume_digests is not None:
        return _keeping_what_matches(files, accept, digests, hasher)
    if skip and M.files_digest(digests) != accept.resume_files_hash:
        return FROM_START, "the files the receiver kept are not the ones offered now"
    if hasher is None:
        return FROM_START, (f"the start of '{files[skip].path}' is not what the "
                            "receiver kept")
    held = sum(f.size for f in files[:skip]) + accept.resume_offset
    return ResumePoint(skip, accept.resume_offset, hasher, held), None


def _keeping_what_matches(files, accept, ours, hasher):
    """The answer to a receiver that sent its kept files' digests: those
    that differ from ours are sent again, and the next file from its
    offset when its start matches (else from 0); all at once only when
    more than MAX_RESEND changed."""
    skip = accept.resume_files
    resend = tuple(i for i, (mine, theirs) in enumerate(zip(ours, accept.digests, strict=False))
                   if mine != theirs)
    if len(resend) > M.MAX_RESEND:
        return FROM_START, f"{len(resend)} of the files the receiver kept changed"
    why = []
    if resend:
        why.append(f"{len(resend)} of the files the receiver kept changed (sent again)")
    offset = accept.resume_offset
    if hasher is None:
        offset = 0
        why.append(f"the start of '{files[skip].path}' is not what the receiver kept "
                   "(sent in full)")
    again = set(resend)
    held = sum(f.size for i, f in enumerate(files[:skip]) if i not in again) + offset
    return ResumePoint(skip, offset, hasher, held, resend), "; ".join(why) or None


@implementer(interfaces.IPushProducer)
class Streamer:
    """Sends the files of an accepted offer as records on ``transport``:
    for a directory a FileOffer header before each file, then data records;
    after each file ``file_sent(size, digest)`` (the sender's machine writes
    its FileAcknowledge there), after the last ``all_sent()``. A file that
    changed since the offer stops everything with ``failed(SourceChanged)``.
    ``resume`` (a ResumePoint): the offer was accepted with a resume; for a
    directory the first header carries its ``skip`` and ``offset`` (and
    ``resend``: those files go first, then the rest from file ``skip``,
    whose header carries the ``offset``). ``file_started(segments, size,
    offset)``: a directory's next file begins (its bytes from ``offset``
    on follow as ``progress``), for a display per file."""

    def __init__(self, clock, transport, outgoing, file_sent, all_sent, failed,
                 progress=lambda n: None, resume=None, file_started=None):
        self._clock = clock
        self._transport = transport
        self._room = _framing.room_of(transport)
        files = list(outgoing.files)
        self._files = files[resume.skip if resume else 0:]
        self._resumed_file = None  # the file whose data starts at resume.offset
        if resume is not None:
            self._resumed_file = files[resume.skip]
            self._resume_at = (resume.offset, resume.hasher)
            self._files[:0] = [files[i] for i in resume.resend or ()]
        self._headers = outgoing.is_directory
        self._file_sent = file_sent
        self._all_sent = all_sent
        self._failed = failed
        self._progress = progress
        self._file_started = file_started or (lambda segments, size, offset: None)
        self._paused = False
        self._stopped = False
        self._current = None  # (OutgoingFile, open file, hasher, bytes sent)
        self._pending_turn = None
        self._resume = resume

    def start(self):
        self._transport.registerProducer(self, True)
        self._turn()

    def pauseProducing(self):
        self._paused = True

    def resumeProducing(self):
        if self._stopped:
            return
        self._paused = False
        self._schedule()

    def stopProducing(self):
        self._stop()

    def _schedule(self):
        if self._pending_turn is None or not self._pending_turn.active():
            self._pending_turn = self._clock.callLater(0, self._turn)

    def _stop(self):
        self._stopped = True
        if self._pending_turn is not None and self._pending_turn.active():
            self._pending_turn.cancel()
        if self._current is not None:
            self._current[1].close()
            self._current = None

    def stop(self):
        """Stop sending (the machine decided the offer is over)."""
        if not self._stopped:
            self._stop()
            self._transport.unregisterProducer()

    def _turn(self):
        try:
            # one turn's records (headers, small files, FileAcknowledges)
            # leave as few subchannel writes (_framing.burst)
            with _framing.burst(self._transport):
                self._send_some()
        except SourceChanged as e:
            self.stop()
            self._failed(e)
        except OSError as e:
            self.stop()
            self._failed(SourceChanged(f"reading a file failed: {e}"))

    def _open_next(self):
        f = self._files.pop(0)
        _check_unchanged(f)
        answer, self._resume = self._resume, None  # only on the first file
        offset, hasher = (0, M.new_hash())
        resumed = f is self._resumed_file
        if resumed:
            self._resumed_file = None
            if self._resume_at[0]:
                offset, hasher = self._resume_at
        if self._headers:
            header = f.header
            if resumed or answer is not None:  # the answer to the receiver's resume
                header = attr.evolve(header, offset=offset)
            if answer is not None:
                header = attr.evolve(header, skip=answer.skip, resend=answer.resend)
            self._transport.write(M.encode_record(header))
            self._file_started(f.segments, f.size, offset)
        fh = open(f.path, "rb")
        fh.seek(offset)
        self._current = [f, fh, hasher, offset]

    def _send_some(self):
        budget = TURN_BUDGET
        write = self._transport.write
        while not self._paused and not self._stopped:
            if self._current is None:
                if not self._files:
                    self.stop()
                    self._all_sent()
                    return
                self._open_next()
            current = self._current
            f, fh, hasher = current[0], current[1], current[2]
            want = min(DATA_CHUNK, f.size - current[3])
            # what a burst gathered (a small file, a header) is topped up
            # to one full Noise message rather than sent as its own record
            # before a full frame (_framing.ONE_MESSAGE): small files
            # travel in fewer Dilation records
            room = self._room()
            if room is not None and MIN_FILL <= room < want:
                want = room
            chunk = fh.read(want)
            if chunk:
                hasher.update(chunk)
                current[3] += len(chunk)
                write(b"\x05" + chunk)  # M.KIND_FILE_DATA, without a copy through attrs
                self._progress(len(chunk))
                budget -= len(chunk)
                if budget <= 0:
                    self._schedule()
                    return
                continue
            # the announced size is sent: it must still be the offered file
            if fh.read(1):
                raise SourceChanged(f"'{f.path}' grew after it was offered")
            fh.close()
            self._current = None
            if current[3] != f.size:
                raise SourceChanged(f"'{f.path}' shrank after it was offered")
            _check_unchanged(f)
            self._file_sent(f.size, hasher.digest())
