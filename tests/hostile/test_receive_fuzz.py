"""Random and mutated archives fed to the receiver's unpacker
(``_unzip.receive_directory_into``): whatever the archive holds, the
result is a clean refusal or a tree inside the target; nothing is ever
made outside it, no link resolves outside it, memory stays bounded, and
no error but ``TransferError`` (one readable line) comes out."""
import io
import os
import shutil
import stat
import tempfile
import tracemalloc
import warnings
import zipfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole.errors import TransferError
from wormhole.transfer import _unzip

# names and link targets are built from the parts that make trouble
_PARTS = st.sampled_from(["a", "b", "c", "..", ".", "", "é", "x" * 256, "\x1b[2J", "C:",
                          "\\", "etc", "passwd", "\u202e", "\x00"])
_PATHS = st.lists(_PARTS, min_size=1, max_size=5).map("/".join)
_ENTRY = st.tuples(st.sampled_from(["file", "dir", "link"]), _PATHS,
                   st.one_of(_PATHS, st.binary(max_size=64)),
                   st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
_SETTINGS = settings(max_examples=150, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])
# the unpacker's own allocations (Python objects, zlib buffers) stay well
# under this whatever the archive says: it reads in 1 MiB chunks, link
# targets at most 4 KiB
MEMORY_BOUND = 8 * 2**20


def build_zip(entries):
    buf = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w") as zf:
        warnings.simplefilter("ignore")  # duplicate names are part of the game
        for kind, name, data, method in entries:
            info = zipfile.ZipInfo(name + ("/" if kind == "dir" else ""))
            info.compress_type = method
            if kind == "link":
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            if isinstance(data, str):
                data = data.encode("utf-8", "surrogatepass")
            zf.writestr(info, b"" if kind == "dir" else data)
    return buf.getvalue()


def _mutate(data, edits):
    data = bytearray(data)
    for where, what, byte in edits:
        if not data:
            break
        i = where % len(data)
        if what == "flip":
            data[i] ^= byte or 1
        elif what == "cut":
            del data[i:]
        else:
            data[i:i] = bytes([byte])
    return bytes(data)


_EDITS = st.lists(st.tuples(st.integers(min_value=0), st.sampled_from(["flip", "cut", "insert"]),
                            st.integers(min_value=0, max_value=255)), max_size=4)


class UnpackerFuzz(unittest.TestCase):

    def unpack_checked(self, data, max_bytes=10**4, max_files=20):
        """Unpack ``data``; assert the invariants; return the outcome."""
        base = tempfile.mkdtemp(prefix="fuzz-", dir=self.root)
        outside = os.path.join(base, "outside")
        os.mkdir(outside)
        zip_path = os.path.join(outside, "in.zip")
        with open(zip_path, "wb") as f:
            f.write(data)
        target = os.path.join(outside, "out")
        tracemalloc.start()
        try:
            _unzip.receive_directory_into(zip_path, target, max_bytes, max_files)
            outcome = "unpacked"
        except TransferError as e:
            outcome = str(e)
            # one line, nothing raw from the archive's bytes beyond names
            self.assertLess(len(outcome), 10_000)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        self.assertLess(peak, MEMORY_BOUND)
        # nothing was made beside the target, nor above it
        self.assertEqual(sorted(os.listdir(base)), ["outside"])
        made = sorted(os.listdir(outside))
        self.assertIn(made, (["in.zip"], ["in.zip", "out"]))
        self.assertEqual(made == ["in.zip", "out"], outcome == "unpacked")
        if outcome == "unpacked":
            self.assertInside(target)
        shutil.rmtree(base)
        return outcome

    def assertInside(self, target):
        """Every path under ``target``, links resolved by the kernel,
        stays under ``target``; the bytes written add up to the bound."""
        real = os.path.realpath(target)
        total = 0
        for folder, dirs, files in os.walk(target):
            for name in dirs + files:
                path = os.path.join(folder, name)
                resolved = os.path.realpath(path)
                self.assertTrue(resolved == real or resolved.startswith(real + os.sep),
                                f"{path} -> {resolved}")
                if not os.path.islink(path) and os.path.isfile(path):
                    total += os.path.getsize(path)
        self.assertLessEqual(total, 10**4)

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="i11-fuzz-")
        self.addCleanup(shutil.rmtree, self.root, True)

    @_SETTINGS
    @given(st.lists(_ENTRY, max_size=8))
    def test_random_archives(self, entries):
        """Archives of random entries (files, folders, links) with
        troublesome names and targets: zipfile wrote them, so a refusal
        names what is wrong, never "damaged" (which would hide a bug of
        ours behind the catch-all for zipfile's failures)."""
        self.assertNotIn("damaged", self.unpack_checked(build_zip(entries)))

    @_SETTINGS
    @given(st.lists(_ENTRY, min_size=1, max_size=5), _EDITS)
    def test_mutated_archives(self, entries, edits):
        """Valid archives with flipped, cut or inserted bytes."""
        self.unpack_checked(_mutate(build_zip(entries), edits))

    @_SETTINGS
    @given(st.binary(max_size=512))
    def test_random_bytes(self, data):
        """Bytes that are hardly a zipfile at all."""
        self.unpack_checked(b"PK\x03\x04" + data if data[:1] == b"\x00" else data)

    def test_inflating_entries(self):
        """Entries whose deflated bytes expand far beyond numbytes (a zip
        bomb, also as a link) are refused within the memory bound."""
        zeros = b"\x00" * (32 * 2**20)
        for kind in ("file", "link"):
            outcome = self.unpack_checked(build_zip([(kind, "bomb", zeros,
                                                      zipfile.ZIP_DEFLATED)]))
            self.assertRegex(outcome, "more than the 10000 bytes|longer than 4096 bytes")
