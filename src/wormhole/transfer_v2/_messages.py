"""Sans-I/O codecs of transfer-v2
(Dilated File Transfer, "Protocol Details").

Two encodings:

- control messages: a msgpack map with a string ``kind``
  (Dilated File Transfer, "Control Channel Messages"; only ``text`` exists);
- offer-subchannel records: one kind byte, then a kind-dependent payload
  (FileOffer 1, DirectoryOffer 2, OfferAccept 3, OfferReject 4, file data
  5, FileAcknowledge 6; all others reserved: Dilated File Transfer,
  "Making an Offer").

Everything a peer sends is checked here, before any machine sees it:
unknown kinds, missing or ill-typed fields, paths that repeat or collide,
and sizes beyond the limits below raise ``MessageError``. Unknown *extra*
map keys are ignored (the spec's "features" may add some). Whether a name
may be written is not a matter of the record's shape: the receiving rules
(``wormhole._landing``, classic receive's too) decide it when the offer is
accepted, so that a name is refused the same way whatever protocol
carried it.
"""
import hashlib

import attr
import msgpack

from .._escape import excerpt
from ..errors import TransferError

# Dilated File Transfer, "Making an Offer": "A single data message MUST
# NOT exceed 65536 bytes ... including the single byte for kind"
MAX_DATA_PAYLOAD = 65535
# our own bounds (docs/transfer-v2.md "Limits"): a control message, one
# msgpack record other than data, and what a DirectoryOffer may list
MAX_CONTROL_MESSAGE = 64 * 1024
MAX_OFFER_RECORD = 16 * 1024 * 1024
MAX_FILES = 200_000
# "empty-folders" feature: the empty folders a DirectoryOffer may list
MAX_FOLDERS = 200_000
MAX_DEPTH = 64
# kept files a resumed directory's answer may list as sent again; when
# more changed, the whole directory is sent (docs/transfer-v2.md "Resume")
MAX_RESEND = 4096
HASH_SIZE = 32  # "32-byte Blake2b": BLAKE2b with digest_size=32
# "file-modes" feature: a FileOffer's mode is permission bits (with set-uid,
# set-gid and sticky at most): no file type, nothing above
MAX_MODE = 0o7777

KIND_FILE_OFFER = 1
KIND_DIRECTORY_OFFER = 2
KIND_OFFER_ACCEPT = 3
KIND_OFFER_REJECT = 4
KIND_FILE_DATA = 5
KIND_FILE_ACK = 6


class MessageError(TransferError):
    """The peer sent something this protocol does not allow."""


def new_hash():
    """The file hash of FileAcknowledge: BLAKE2b, 32-byte digest."""
    return hashlib.blake2b(digest_size=HASH_SIZE)


def files_digest(digests):
    """The "resume" feature's proof of whole files held (docs/transfer-v2.md
    "Resume"): BLAKE2b-32 of their 32-byte digests, concatenated in
    offered order."""
    hasher = new_hash()
    for d in digests:
        hasher.update(d)
    return hasher.digest()


def _check_hash(name, value):
    if not isinstance(value, bytes) or len(value) != HASH_SIZE:
        raise MessageError(f"{name} must be {HASH_SIZE} bytes")


def _check_int(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value >= 2 ** 63:
        raise MessageError(f"{name} must be a non-negative integer, not {value!r}")
    return value


def check_segment(value):
    """A name is a string (msgpack decoded it from valid UTF-8); which
    names may be written is ``_landing.check_name``'s, at accept."""
    if not isinstance(value, str):
        raise MessageError(f"a name must be a string, not {excerpt(value)}")
    return value


@attr.s(frozen=True)
class Text:
    """Control message ``{"kind": "text", "message": str}``."""
    message = attr.ib(validator=attr.validators.instance_of(str))


@attr.s(frozen=True)
class SessionTotals:
    """Control message ``{"kind": "session-totals", "offers": int, "bytes":
    int}`` ("session-totals" feature, docs/transfer-v2.md "Session
    totals"): what the sender is about to offer, for a session-wide
    progress display. Only a display hint: offers are still decided and
    checked one by one."""
    offers = attr.ib()
    bytes = attr.ib()

    def __attrs_post_init__(self):
        _check_int("offers", self.offers)
        _check_int("bytes", self.bytes)


@attr.s(frozen=True)
class FileOffer:
    filename = attr.ib()
    timestamp = attr.ib()
    bytes = attr.ib()
    # "resume" feature (docs/transfer-v2.md "Resume"): on the header the
    # offering side sends after an OfferAccept that asked to resume, the
    # byte the data starts at (0: the whole file); None: absent
    offset = attr.ib(default=None)
    # the same answer inside a directory offer: how many of its files the
    # receiver keeps and are not sent (0: the whole directory follows)
    skip = attr.ib(default=None)
    # ... except these (indexes below ``skip``, increasing): kept files
    # that changed and are sent again first; only to a receiver that sent
    # its files' digests (OfferAccept.resume_digests)
    resend = attr.ib(default=None)
    # "file-modes" feature (docs/transfer-v2.md "File modes"): the file's
    # permission bits at the sender, on a file offer and on each header of
    # a directory offer; None: absent (only sent to a peer that declared
    # the feature). What the receiver keeps of them is the receiving
    # rules' (``_landing.landed_mode``)
    mode = attr.ib(default=None)

    def __attrs_post_init__(self):
        check_segment(self.filename)
        if self.mode is not None:
            _check_mode(self.mode)
        _check_int("timestamp", self.timestamp)
        _check_int("bytes", self.bytes)
        if self.offset is not None and _check_int("offset", self.offset) > self.bytes:
            raise MessageError("offset beyond the end of the file")
        if self.skip is not None:
            _check_int("skip", self.skip)
            if self.offset is None:
                raise MessageError("a header that skips files needs an offset")
        if self.resend is not None:
            if self.skip is None:
                raise MessageError("files sent again need a skip")
            if (not isinstance(self.resend, (list, tuple)) or len(self.resend) > MAX_RESEND
                    or any(_check_int("resent file", i) >= self.skip for i in self.resend)
                    or list(self.resend) != sorted(set(self.resend))):
                raise MessageError(f"files sent again must be at most {MAX_RESEND} "
                                   "increasing indexes below skip")
            object.__setattr__(self, "resend", tuple(self.resend))


def _check_paths(paths, limit, what):
    if not isinstance(paths, (list, tuple)) or len(paths) > limit:
        raise MessageError(f"{what} must be a list of at most {limit} paths")
    for path in paths:
        if not isinstance(path, (list, tuple)) or not 1 <= len(path) <= MAX_DEPTH:
            raise MessageError(f"a path must be a list of 1 to {MAX_DEPTH} names: {path!r}")
        for segment in path:
            check_segment(segment)
    return tuple(tuple(p) for p in paths)


def _check_files(files):
    return _check_paths(files, MAX_FILES, "files")


def _check_folders(folders):
    return _check_paths(folders, MAX_FOLDERS, "folders")


def _check_mode(mode):
    if _check_int("mode", mode) > MAX_MODE:
        raise MessageError(f"a mode is permission bits (at most 0o7777), not {mode!r}")
    return mode


def _check_folder_modes(pairs):
    """The "file-modes" feature's ``folder_modes``: [path, mode] pairs."""
    if not isinstance(pairs, (list, tuple)) or len(pairs) > MAX_FOLDERS:
        raise MessageError(f"folder modes must be a list of at most {MAX_FOLDERS} pairs")
    if not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
        raise MessageError("a folder mode must be a [path, mode] pair")
    paths = _check_paths([p[0] for p in pairs], MAX_FOLDERS, "folder modes")
    return tuple(zip(paths, (_check_mode(p[1]) for p in pairs), strict=False))


@attr.s(frozen=True)
class StreamOffer:
    """The "stream" feature's offer (docs/transfer-v2.md "Streams"): a
    FileOffer record (kind 1) with ``"stream": true`` and no ``bytes``:
    data of a length nobody knows yet, ended by the sender's
    FileAcknowledge. Only sent to a peer that declared the feature.
    ``text``: the stream is a text message (UTF-8) to be shown as one,
    not data to be written (``wormhole send --text -`` of a long text)."""
    filename = attr.ib()
    timestamp = attr.ib()
    text = attr.ib(default=False)

    def __attrs_post_init__(self):
        check_segment(self.filename)
        _check_int("timestamp", self.timestamp)
        if not isinstance(self.text, bool):
            raise MessageError(f"a stream's \"text\" is true or false, not {self.text!r}")


@attr.s(frozen=True)
class DirectoryOffer:
    base = attr.ib()
    size = attr.ib()
    files = attr.ib(converter=_check_files)
    # "empty-folders" feature (docs/transfer-v2.md "Empty folders"): the
    # folders that hold nothing, so that no file creates them; only sent
    # to a peer that declared the feature
    folders = attr.ib(default=(), converter=_check_folders)
    # "file-modes" feature (docs/transfer-v2.md "File modes"): the
    # permission bits of the offer's folders, ((path, mode), ...); only
    # sent to a peer that declared the feature
    folder_modes = attr.ib(default=(), converter=_check_folder_modes)

    def __attrs_post_init__(self):
        check_segment(self.base)
        _check_int("size", self.size)
        entries = set(self.files) | set(self.folders)
        if len(entries) != len(self.files) + len(self.folders):
            raise MessageError("the same path is offered twice")
        moded = [path for path, _ in self.folder_modes]
        if len(set(moded)) != len(moded) or set(moded) & set(self.files):
            raise MessageError("a folder mode is given twice, or for a file")
        # a file cannot also be a folder, and an empty folder holds nothing
        for path in entries:
            for i in range(1, len(path)):
                if path[:i] in entries:
                    raise MessageError(f"{'/'.join(path[:i])!r} is offered as a file or "
                                       "an empty folder, and as a folder with content")


@attr.s(frozen=True)
class OfferAccept:
    # "resume" feature: the receiver holds the first ``resume_offset``
    # bytes, whose BLAKE2b is ``resume_hash``; None: a plain accept
    resume_offset = attr.ib(default=None)
    resume_hash = attr.ib(default=None)
    # for a directory offer: the receiver holds its first ``resume_files``
    # files whole (``resume_files_hash``: BLAKE2b of their digests, in
    # order) and the first ``resume_offset`` bytes of the next one
    resume_files = attr.ib(default=None)
    resume_files_hash = attr.ib(default=None)
    # and those files' digests, concatenated (32 bytes each): the offering
    # side can then keep the ones that still match (FileOffer.resend)
    resume_digests = attr.ib(default=None)

    def __attrs_post_init__(self):
        if (self.resume_offset is None) != (self.resume_hash is None):
            raise MessageError("a resume needs both an offset and a hash")
        if (self.resume_files is None) != (self.resume_files_hash is None):
            raise MessageError("a resume of files needs both a count and a hash")
        if self.resume_files is not None and self.resume_offset is None:
            raise MessageError("a resume of files needs an offset and a hash")
        if self.resume_offset is not None:
            _check_int("resume offset", self.resume_offset)
            _check_hash("a resume hash", self.resume_hash)
        if self.resume_files is not None:
            _check_int("resumed files", self.resume_files)
            _check_hash("a resumed files' hash", self.resume_files_hash)
        if self.resume_digests is not None:
            if (self.resume_files is None or not isinstance(self.resume_digests, bytes)
                    or len(self.resume_digests) != HASH_SIZE * self.resume_files):
                raise MessageError("a resume's digests must be 32 bytes per resumed file")
            if files_digest(self.digests) != self.resume_files_hash:
                raise MessageError("a resume's digests do not match its files' hash")

    @property
    def digests(self):
        """``resume_digests`` as one 32-byte digest per kept file."""
        raw = self.resume_digests
        return [raw[i:i + HASH_SIZE] for i in range(0, len(raw), HASH_SIZE)]


@attr.s(frozen=True)
class OfferReject:
    reason = attr.ib(validator=attr.validators.instance_of(str))


@attr.s(frozen=True)
class FileData:
    data = attr.ib()

    def __attrs_post_init__(self):
        if len(self.data) > MAX_DATA_PAYLOAD:
            raise MessageError(f"a data record carries at most {MAX_DATA_PAYLOAD} bytes")


@attr.s(frozen=True)
class FileAcknowledge:
    bytes = attr.ib()
    hash = attr.ib()

    def __attrs_post_init__(self):
        _check_int("bytes", self.bytes)
        _check_hash("hash", self.hash)


def _pack(fields):
    return msgpack.packb(fields, use_bin_type=True)


def _unpack(payload, limit):
    if len(payload) > limit:
        raise MessageError(f"message of {len(payload)} bytes (limit {limit})")
    try:
        value = msgpack.unpackb(bytes(payload), raw=False, strict_map_key=True,
                                use_list=True)
    except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError,
            msgpack.StackError) as e:
        raise MessageError(f"not a msgpack message: {e}") from None
    if not isinstance(value, dict):
        raise MessageError("a message must be a msgpack map")
    return value


def _field(fields, name):
    try:
        return fields[name]
    except KeyError:
        raise MessageError(f"message lacks {name!r}") from None


# -- control messages ------------------------------------------------------
def encode_control(message):
    if isinstance(message, Text):
        return _pack({"kind": "text", "message": message.message})
    if isinstance(message, SessionTotals):
        return _pack({"kind": "session-totals", "offers": message.offers,
                      "bytes": message.bytes})
    raise TypeError(f"not a control message: {message!r}")


def parse_control(payload):
    fields = _unpack(payload, MAX_CONTROL_MESSAGE)
    kind = fields.get("kind")
    if kind == "text":
        message = _field(fields, "message")
        if not isinstance(message, str):
            raise MessageError("a text message must be a string")
        return Text(message)
    if kind == "session-totals":
        return SessionTotals(_field(fields, "offers"), _field(fields, "bytes"))
    raise MessageError(f"unknown control message kind {kind!r}")


# -- offer-subchannel records ----------------------------------------------
def encode_record(record):
    """The bytes of one subchannel record (one write, one record)."""
    if isinstance(record, FileData):
        return bytes((KIND_FILE_DATA,)) + bytes(record.data)
    if isinstance(record, FileOffer):
        fields = {"filename": record.filename, "timestamp": record.timestamp,
                  "bytes": record.bytes}
        if record.offset is not None:
            fields["offset"] = record.offset
        if record.skip is not None:
            fields["skip"] = record.skip
        if record.resend is not None:
            fields["resend"] = list(record.resend)
        if record.mode is not None:
            fields["mode"] = record.mode
        return bytes((KIND_FILE_OFFER,)) + _pack(fields)
    if isinstance(record, StreamOffer):
        fields = {"filename": record.filename, "timestamp": record.timestamp, "stream": True}
        if record.text:
            fields["text"] = True
        return bytes((KIND_FILE_OFFER,)) + _pack(fields)
    if isinstance(record, DirectoryOffer):
        fields = {"base": record.base, "size": record.size,
                  "files": [list(p) for p in record.files]}
        if record.folders:
            fields["folders"] = [list(p) for p in record.folders]
        if record.folder_modes:
            fields["folder_modes"] = [[list(p), m] for p, m in record.folder_modes]
        return bytes((KIND_DIRECTORY_OFFER,)) + _pack(fields)
    if isinstance(record, OfferAccept):
        if record.resume_offset is None:
            return bytes((KIND_OFFER_ACCEPT,))
        resume = {"offset": record.resume_offset, "hash": record.resume_hash}
        if record.resume_files is not None:
            resume.update(files=record.resume_files, files_hash=record.resume_files_hash)
        if record.resume_digests is not None:
            resume["digests"] = record.resume_digests
        return bytes((KIND_OFFER_ACCEPT,)) + _pack({"resume": resume})
    if isinstance(record, OfferReject):
        return bytes((KIND_OFFER_REJECT,)) + _pack({"reason": record.reason})
    if isinstance(record, FileAcknowledge):
        return bytes((KIND_FILE_ACK,)) + _pack({"bytes": record.bytes, "hash": record.hash})
    raise TypeError(f"not a transfer-v2 record: {record!r}")


def _parse_file_offer(payload):
    f = _unpack(payload, MAX_CONTROL_MESSAGE)
    if "stream" in f:
        # the "stream" feature: no size; any other key of a FileOffer
        # (bytes, offset, skip, mode) makes no sense on it
        if f["stream"] is not True or f.keys() & {"bytes", "offset", "skip", "resend"}:
            raise MessageError("a stream offer has \"stream\": true and no size")
        return StreamOffer(_field(f, "filename"), _field(f, "timestamp"), f.get("text", False))
    return FileOffer(_field(f, "filename"), _field(f, "timestamp"), _field(f, "bytes"),
                     f.get("offset"), f.get("skip"), f.get("resend"), f.get("mode"))


def _parse_directory_offer(payload):
    f = _unpack(payload, MAX_OFFER_RECORD)
    return DirectoryOffer(_field(f, "base"), _field(f, "size"), _field(f, "files"),
                          f.get("folders", ()), f.get("folder_modes", ()))


def _parse_accept(payload):
    # "Accept messages are blank": a payload is a feature's extension; we
    # read the "resume" one and ignore anything else
    if not payload:
        return OfferAccept()
    # (up to 32 bytes per offered file: as large as a DirectoryOffer)
    resume = _unpack(payload, MAX_OFFER_RECORD).get("resume")
    if not isinstance(resume, dict):
        return OfferAccept()
    return OfferAccept(_field(resume, "offset"), _field(resume, "hash"),
                       resume.get("files"), resume.get("files_hash"),
                       resume.get("digests"))


def _parse_reject(payload):
    f = _unpack(payload, MAX_CONTROL_MESSAGE)
    reason = _field(f, "reason")
    if not isinstance(reason, str):
        raise MessageError("a reject reason must be a string")
    return OfferReject(reason)


def _parse_ack(payload):
    f = _unpack(payload, MAX_CONTROL_MESSAGE)
    return FileAcknowledge(_field(f, "bytes"), _field(f, "hash"))


_PARSERS = {
    KIND_FILE_OFFER: _parse_file_offer,
    KIND_DIRECTORY_OFFER: _parse_directory_offer,
    KIND_OFFER_ACCEPT: _parse_accept,
    KIND_OFFER_REJECT: _parse_reject,
    KIND_FILE_DATA: lambda payload: FileData(payload),
    KIND_FILE_ACK: _parse_ack,
}


def file_data(record):
    """The payload of ``record`` (a view, not a copy) when it is FileData,
    else None: parse_record's answer for the kind of nearly every record,
    without a message object (docs/transfer-v2.md, "Per-record work");
    MessageError as parse_record."""
    if not record or record[0] != KIND_FILE_DATA:
        return None
    if len(record) - 1 > MAX_DATA_PAYLOAD:
        raise MessageError(f"a data record carries at most {MAX_DATA_PAYLOAD} bytes")
    return memoryview(record)[1:]


def parse_record(record):
    """One received subchannel record -> a message object, or MessageError."""
    if not record:
        raise MessageError("empty record")
    parser = _PARSERS.get(record[0])
    if parser is None:
        raise MessageError(f"unknown record kind {record[0]}")
    try:
        return parser(memoryview(record)[1:] if record[0] == KIND_FILE_DATA
                      else bytes(record[1:]))
    except TypeError as e:  # attrs validators of wrong types
        raise MessageError(str(e)) from None
