"""transfer-v2 codecs (Dilated File Transfer, "Protocol Details"): kind
bytes, round trips, and refusal of everything else."""
import hashlib

import msgpack
from hypothesis import given
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole.transfer_v2 import _messages as M

segment = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30).filter(
    lambda s: s not in (".", "..") and not set("/\\\x00") & set(s))
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=100)
sizes = st.integers(min_value=0, max_value=2 ** 63 - 1)
paths = st.lists(st.lists(segment, min_size=1, max_size=3), max_size=8, unique_by=tuple)


def _no_prefix_conflicts(files):
    seen = {tuple(p) for p in files}
    return not any(tuple(p[:i]) in seen for p in files for i in range(1, len(p)))


def _files_and_folders(entries):
    """Split conflict-free paths into files and (empty) folders."""
    return [p for i, p in enumerate(entries) if i % 2], [p for i, p in enumerate(entries)
                                                         if not i % 2]


records = st.one_of(
    st.builds(M.FileOffer, segment, sizes, sizes),
    st.builds(M.DirectoryOffer, segment, sizes, paths.filter(_no_prefix_conflicts)),
    paths.filter(_no_prefix_conflicts).map(_files_and_folders).flatmap(
        lambda ff: st.builds(M.DirectoryOffer, segment, sizes, st.just(ff[0]),
                             st.just(ff[1]))),
    st.builds(M.OfferAccept, sizes, st.binary(min_size=32, max_size=32), sizes,
              st.binary(min_size=32, max_size=32)),
    sizes.flatmap(lambda n: st.builds(M.FileOffer, segment, sizes, st.just(n),
                                      st.integers(min_value=0, max_value=n), sizes)),
    st.just(M.OfferAccept()),
    st.builds(M.OfferAccept, sizes, st.binary(min_size=32, max_size=32)),
    sizes.flatmap(lambda n: st.builds(M.FileOffer, segment, sizes, st.just(n),
                                      st.integers(min_value=0, max_value=n))),
    st.builds(M.OfferReject, text),
    st.builds(M.FileData, st.binary(max_size=2000)),
    st.builds(M.FileAcknowledge, sizes, st.binary(min_size=32, max_size=32)),
)


def _normal(record):
    if isinstance(record, M.FileData):
        return ("data", bytes(record.data))
    return record


class Layout(unittest.TestCase):
    def test_kind_bytes(self):
        """Each record starts with the spec's kind byte; accept is only the byte."""
        h = b"\x01" * 32
        self.assertEqual(M.encode_record(M.FileOffer("a", 1, 2))[0], 1)
        self.assertEqual(M.encode_record(M.DirectoryOffer("d", 0, [["a"]]))[0], 2)
        self.assertEqual(M.encode_record(M.OfferAccept()), b"\x03")
        self.assertEqual(M.encode_record(M.OfferReject("no"))[0], 4)
        self.assertEqual(M.encode_record(M.FileData(b"xyz")), b"\x05xyz")
        self.assertEqual(M.encode_record(M.FileAcknowledge(3, h))[0], 6)

    def test_msgpack_maps(self):
        """Payloads are msgpack maps with the spec's field names."""
        raw = M.encode_record(M.FileOffer("a.txt", 17, 42))
        self.assertEqual(msgpack.unpackb(raw[1:]),
                         {"filename": "a.txt", "timestamp": 17, "bytes": 42})
        raw = M.encode_record(M.DirectoryOffer("p", 5, [["README"], ["src", "x.py"]]))
        self.assertEqual(msgpack.unpackb(raw[1:]),
                         {"base": "p", "size": 5, "files": [["README"], ["src", "x.py"]]})
        raw = M.encode_record(M.FileAcknowledge(3, b"\x00" * 32))
        self.assertEqual(msgpack.unpackb(raw[1:]), {"bytes": 3, "hash": b"\x00" * 32})
        self.assertEqual(msgpack.unpackb(M.encode_control(M.Text("hi"))),
                         {"kind": "text", "message": "hi"})

    def test_hash_is_blake2b_32(self):
        """The file hash is BLAKE2b with a 32-byte digest."""
        h = M.new_hash()
        h.update(b"abc")
        self.assertEqual(len(h.digest()), 32)
        self.assertEqual(h.digest(), hashlib.blake2b(b"abc", digest_size=32).digest())


class RoundTrip(unittest.TestCase):
    @given(records)
    def test_records(self, record):
        """parse(encode(r)) == r for every record kind."""
        self.assertEqual(_normal(M.parse_record(M.encode_record(record))), _normal(record))

    @given(records)
    def test_file_data_agrees(self, record):
        """file_data (the receiver's shortcut for data) gives FileData's
        payload, None for every other kind."""
        payload = M.file_data(M.encode_record(record))
        if isinstance(record, M.FileData):
            self.assertEqual(bytes(payload), bytes(record.data))
        else:
            self.assertIsNone(payload)

    @given(text)
    def test_text(self, text):
        """parse_control(encode_control(Text)) round-trips any text."""
        self.assertEqual(M.parse_control(M.encode_control(M.Text(text))), M.Text(text))

    @given(st.binary(max_size=200))
    def test_garbage_only_raises_message_error(self, raw):
        """Arbitrary bytes parse or raise MessageError, nothing else."""
        for parse in (M.parse_record, M.parse_control):
            try:
                parse(raw)
            except M.MessageError:
                pass


class Refusals(unittest.TestCase):
    def test_unknown_kinds(self):
        """Reserved record kinds (0, 7..255), an empty record and unknown
        control kinds are refused."""
        for kind in [0, 7, 128, 255]:
            self.assertRaises(M.MessageError, M.parse_record, bytes([kind]) + b"\x80")
        self.assertRaises(M.MessageError, M.parse_record, b"")
        self.assertRaises(M.MessageError, M.parse_control,
                          msgpack.packb({"kind": "sticker", "message": "x"}))
        self.assertRaises(M.MessageError, M.parse_control, msgpack.packb([1, 2]))

    def test_names_are_strings(self):
        """A name that is not a string, or not UTF-8, is refused; a string
        is the receiving rules' to judge, at accept (test_receiving
        UnusableNames), so it parses."""
        for name in [3, b"x", None, ["a"]]:
            raw = b"\x01" + msgpack.packb({"filename": name, "timestamp": 0, "bytes": 0})
            self.assertRaises(M.MessageError, M.parse_record, raw)
        for name in ["", "..", "a/b", "a\\b", "x\x00", "a\x1b[2Jb", "n" * 1025]:
            raw = b"\x01" + msgpack.packb({"filename": name, "timestamp": 0, "bytes": 0})
            self.assertEqual(M.parse_record(raw).filename, name)
        # a msgpack str that is not UTF-8: {"filename": <0xff>, ...}
        bad_utf8 = (b"\x01\x83\xa8filename\xa1\xff\xa9timestamp\x00\xa5bytes\x00")
        self.assertRaises(M.MessageError, M.parse_record, bad_utf8)
        for files in [[[]], [["a"], ["a"]], [["a"], ["a", "b"]], "abc", [["a"] * 65],
                      [[7]]]:
            raw = b"\x02" + msgpack.packb({"base": "d", "size": 0, "files": files})
            self.assertRaises(M.MessageError, M.parse_record, raw)

    def test_bad_fields(self):
        """Missing fields, wrong types, negative sizes and short hashes are refused."""
        bad = [
            b"\x01" + msgpack.packb({"filename": "a", "bytes": 1}),
            b"\x01" + msgpack.packb({"filename": "a", "timestamp": 0, "bytes": -1}),
            b"\x01" + msgpack.packb({"filename": "a", "timestamp": True, "bytes": 1}),
            b"\x04" + msgpack.packb({"reason": 3}),
            b"\x06" + msgpack.packb({"bytes": 1, "hash": b"short"}),
            b"\x06" + msgpack.packb({"bytes": 1, "hash": "x" * 32}),
            b"\x01" + msgpack.packb([1, 2, 3]),
            b"\x01\xc1",
        ]
        for raw in bad:
            self.assertRaises(M.MessageError, M.parse_record, raw)

    def test_data_limit(self):
        """A data record carries at most 65535 bytes (65536 with the kind)."""
        self.assertEqual(len(M.encode_record(M.FileData(b"x" * 65535))), 65536)
        self.assertRaises(M.MessageError, M.FileData, b"x" * 65536)
        self.assertRaises(M.MessageError, M.parse_record, b"\x05" + b"x" * 65536)
        self.assertRaises(M.MessageError, M.file_data, b"\x05" + b"x" * 65536)
        self.assertIsNone(M.file_data(b""))

    def test_size_limits(self):
        """Control messages and offers beyond our limits are refused unparsed."""
        big = msgpack.packb({"kind": "text", "message": "x" * M.MAX_CONTROL_MESSAGE})
        self.assertRaises(M.MessageError, M.parse_control, big)

    def test_resume_extension(self):
        """The resume feature's fields: an accept with offset and hash, a
        header with an offset; bad ones refused, a plain accept unchanged."""
        self.assertEqual(M.encode_record(M.OfferAccept()), b"\x03")
        raw = M.encode_record(M.OfferAccept(10, b"\x07" * 32))
        self.assertEqual(msgpack.unpackb(raw[1:]),
                         {"resume": {"offset": 10, "hash": b"\x07" * 32}})
        raw = M.encode_record(M.FileOffer("f", 0, 20, 10))
        self.assertEqual(msgpack.unpackb(raw[1:])["offset"], 10)
        self.assertRaises(M.MessageError, M.FileOffer, "f", 0, 20, 21)
        self.assertRaises(M.MessageError, M.OfferAccept, 10, None)
        self.assertRaises(M.MessageError, M.parse_record,
                          b"\x03" + msgpack.packb({"resume": {"offset": 1, "hash": b"x"}}))
        # another feature's payload on an accept is ignored
        self.assertEqual(M.parse_record(b"\x03" + msgpack.packb({"sticker": 1})),
                         M.OfferAccept())

    def test_empty_folders_extension(self):
        """The "empty-folders" feature's field: sent only when there are
        folders, checked like file paths (strings, depth), bounded, and
        never a path that is also a file, a file's folder, or twice."""
        raw = M.encode_record(M.DirectoryOffer("p", 0, [["a"]]))
        self.assertNotIn("folders", msgpack.unpackb(raw[1:]))
        raw = M.encode_record(M.DirectoryOffer("p", 0, [["a"]], [["e"], ["f", "g"]]))
        self.assertEqual(msgpack.unpackb(raw[1:])["folders"], [["e"], ["f", "g"]])
        self.assertEqual(M.parse_record(raw).folders, (("e",), ("f", "g")))
        for files, folders in [([["a"]], [["a"]]),            # a file and a folder
                               ([["a", "b"]], [["a"]]),       # a folder that is not empty
                               ([["a"]], [["a", "b"]]),       # a file used as a folder
                               ([], [["e"], ["e", "f"]]),     # a folder that holds one
                               ([], [["e"], ["e"]]),          # twice
                               ([], [[7]]), ([], [[]]), ([], "e"),
                               ([], [["x"] * (M.MAX_DEPTH + 1)])]:
            self.assertRaises(M.MessageError, M.DirectoryOffer, "p", 0, files, folders)
            raw = b"\x02" + msgpack.packb({"base": "p", "size": 0, "files": files,
                                           "folders": folders})
            self.assertRaises(M.MessageError, M.parse_record, raw)
        self.patch(M, "MAX_FOLDERS", 3)
        self.assertRaises(M.MessageError, M.DirectoryOffer, "p", 0, [],
                          [["a"], ["b"], ["c"], ["d"]])
        self.assertEqual(len(M.DirectoryOffer("p", 0, [], [["a"], ["b"], ["c"]]).folders), 3)

    def test_directory_resume_extension(self):
        """The resume feature for folders: the accept's count and digest of
        whole files, the answering header's skip; incomplete ones refused."""
        raw = M.encode_record(M.OfferAccept(10, b"\x07" * 32, 3, b"\x08" * 32))
        self.assertEqual(msgpack.unpackb(raw[1:]),
                         {"resume": {"offset": 10, "hash": b"\x07" * 32, "files": 3,
                                     "files_hash": b"\x08" * 32}})
        self.assertEqual(M.parse_record(raw), M.OfferAccept(10, b"\x07" * 32, 3, b"\x08" * 32))
        raw = M.encode_record(M.FileOffer("f", 0, 20, 10, 2))
        self.assertEqual(msgpack.unpackb(raw[1:])["skip"], 2)
        self.assertRaises(M.MessageError, M.FileOffer, "f", 0, 20, None, 2)
        self.assertRaises(M.MessageError, M.FileOffer, "f", 0, 20, 0, -1)
        self.assertRaises(M.MessageError, M.OfferAccept, 10, b"\x07" * 32, 3, None)
        self.assertRaises(M.MessageError, M.OfferAccept, None, None, 3, b"\x08" * 32)
        self.assertRaises(M.MessageError, M.OfferAccept, 10, b"\x07" * 32, 3, b"short")
        self.assertEqual(M.files_digest([b"\x01" * 32, b"\x02" * 32]),
                         hashlib.blake2b(b"\x01" * 32 + b"\x02" * 32, digest_size=32).digest())

    def test_keeping_what_matches_extension(self):
        """The second step of the folder resume: the accept's digests of
        the kept files (32 bytes each, consistent with files_hash) and the
        answering header's resend list (increasing indexes below skip, at
        most MAX_RESEND); anything else refused."""
        digests = [b"\x01" * 32, b"\x02" * 32]
        accept = M.OfferAccept(10, b"\x07" * 32, 2, M.files_digest(digests), b"".join(digests))
        raw = M.encode_record(accept)
        self.assertEqual(msgpack.unpackb(raw[1:])["resume"]["digests"], b"".join(digests))
        self.assertEqual(M.parse_record(raw), accept)
        self.assertEqual(accept.digests, digests)
        for bad in (b"".join(digests)[:-1], digests[0], b"".join(reversed(digests))):
            self.assertRaises(M.MessageError, M.OfferAccept, 10, b"\x07" * 32, 2,
                              M.files_digest(digests), bad)
        self.assertRaises(M.MessageError, M.OfferAccept, 10, b"\x07" * 32, None, None, b"")
        header = M.FileOffer("f", 0, 20, 0, 5, [1, 3])
        raw = M.encode_record(header)
        self.assertEqual(msgpack.unpackb(raw[1:])["resend"], [1, 3])
        self.assertEqual(M.parse_record(raw), header)
        self.assertEqual(M.parse_record(M.encode_record(M.FileOffer("f", 0, 20, 0, 5, []))).resend,
                         ())
        for resend in ([3, 1], [1, 1], [5], [-1], ["a"], "ab"):
            self.assertRaises(M.MessageError, M.FileOffer, "f", 0, 20, 0, 5, resend)
        self.assertRaises(M.MessageError, M.FileOffer, "f", 0, 20, 0, M.MAX_RESEND + 2,
                          list(range(M.MAX_RESEND + 1)))
        self.assertRaises(M.MessageError, M.FileOffer, "f", 0, 20, 0, None, [1])

    def test_extra_keys_ignored(self):
        """Unknown extra keys (a feature's extension) do not break parsing."""
        raw = b"\x01" + msgpack.packb({"filename": "a", "timestamp": 0, "bytes": 1,
                                       "thumbnail": b"png"})
        self.assertEqual(M.parse_record(raw), M.FileOffer("a", 0, 1))

    def test_session_totals_extension(self):
        """The "session-totals" control message: a msgpack map with kind,
        offers and bytes, round-tripped; counts that are not non-negative
        integers (or absent) are refused."""
        raw = M.encode_control(M.SessionTotals(3, 6_000_000))
        self.assertEqual(msgpack.unpackb(raw),
                         {"kind": "session-totals", "offers": 3, "bytes": 6_000_000})
        self.assertEqual(M.parse_control(raw), M.SessionTotals(3, 6_000_000))
        for fields in [{"offers": -1, "bytes": 0}, {"offers": 1, "bytes": True},
                       {"offers": "2", "bytes": 0}, {"offers": 1}, {"bytes": 1},
                       {"offers": 1, "bytes": 2 ** 63}]:
            raw = msgpack.packb({"kind": "session-totals", **fields})
            self.assertRaises(M.MessageError, M.parse_control, raw)
