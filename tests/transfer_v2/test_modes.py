"""File modes over transfer-v2: the "file-modes" feature (docs/transfer-v2.md
"File modes"). A FileOffer (a file offer, and each
header of a directory offer) carries the file's permission bits to a
peer that declared the feature; the receiver gives each file what the
receiving rules allow (``_landing.landed_mode``: never set-uid, set-gid
or sticky, never more than its umask); a mode that is not permission
bits is a protocol error. End to end: two ``wormhole`` processes against
our Mailbox server on 127.0.0.1."""
import os
import stat

from twisted.internet import defer
from twisted.trial import unittest

from wormhole import transfer_v2 as T
from wormhole._landing import BadOffer
from wormhole.cli.ui.wording import V2_USED
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2 import _sink
from wormhole.transfer_v2 import _source as S
from wormhole.transfer_v2 import _versions as V

from ..files._modes import MODES, make_moded_tree, modes_of
from ._support import _Base, _CLIBase

# the folders of make_moded_tree, given modes of their own here
FOLDER_MODES = {"sub": 0o750, "sub/deeper": 0o700}


def chmod_folders(root):
    for rel, mode in FOLDER_MODES.items():
        os.chmod(os.path.join(root, *rel.split("/")), mode)
    return root


def folder_modes_of(root):
    """{relative path: permission bits} of every folder under ``root``."""
    out = {}
    for dirpath, dirs, _ in os.walk(root):
        for name in dirs:
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            out[rel] = mode_of(os.path.join(dirpath, name))
    return out


def plenty(path):
    return 1 << 40


def mode_of(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


class _Umask:
    def umask(self, mask):
        old = os.umask(mask)
        self.addCleanup(os.umask, old)


class Records(unittest.TestCase):

    def test_mode_travels(self):
        header = M.FileOffer("run.sh", 1, 10, mode=0o755)
        self.assertEqual(M.parse_record(M.encode_record(header)), header)
        # without it, no key at all (a peer without the feature sees none)
        plain = M.FileOffer("run.sh", 1, 10)
        self.assertNotIn(b"mode", M.encode_record(plain))
        self.assertIsNone(M.parse_record(M.encode_record(plain)).mode)

    def test_special_bits_are_still_permission_bits(self):
        """set-uid, set-gid, sticky: a well-formed mode (the receiving
        rules drop them: Landing below)."""
        self.assertEqual(M.FileOffer("x", 1, 1, mode=0o7777).mode, 0o7777)

    def test_hostile_modes_refused(self):
        for bad in (0o10000, stat.S_IFREG | 0o755, -1, "755", 7.5, True, [0o755], 2 ** 64 - 1):
            raw = bytes((M.KIND_FILE_OFFER,)) + M._pack(
                {"filename": "x", "timestamp": 1, "bytes": 1, "mode": bad})
            self.assertRaises(M.MessageError, M.parse_record, raw)


    def test_folder_modes_travel(self):
        offer = M.DirectoryOffer("d", 1, [["a", "f"]], (), [[["a"], 0o750],
                                                           [["a", "b"], 0o700]])
        self.assertEqual(M.parse_record(M.encode_record(offer)), offer)
        self.assertEqual(offer.folder_modes, ((("a",), 0o750), (("a", "b"), 0o700)))
        self.assertNotIn(b"folder_modes", M.encode_record(M.DirectoryOffer("d", 1, [["f"]])))

    def test_hostile_folder_modes_refused(self):
        for bad in ([[["a"], 0o10000]], [[["a"], "755"]], [[["a"], 0o755, 1]],
                    [[["a"], 0o755], [["a"], 0o700]], [[["f"], 0o755]], "x", [[[], 0o755]],
                    [[["a"], -1]]):
            raw = bytes((M.KIND_DIRECTORY_OFFER,)) + M._pack(
                {"base": "d", "size": 1, "files": [["f"]], "folder_modes": bad})
            self.assertRaises(M.MessageError, M.parse_record, raw)


class Sending(unittest.TestCase):

    def setUp(self):
        self.root = os.path.join(os.path.abspath(self.mktemp()), "moded")
        chmod_folders(make_moded_tree(self.root))
        os.chmod(os.path.join(self.root, "run.sh"), 0o4755)

    def test_headers_carry_the_permission_bits(self):
        out = S.prepare(self.root)
        got = {"/".join(f.segments): f.header.mode for f in out.files}
        self.assertEqual(got, MODES)  # run.sh: 0o4755 less set-uid
        self.assertEqual({"/".join(p): m for p, m in out.offer.folder_modes}, FOLDER_MODES)
        one = S.prepare(os.path.join(self.root, "sub", "secret.key"))
        self.assertEqual(one.offer.mode, 0o600)

    def test_none_to_a_peer_without_the_feature(self):
        for path in (self.root, os.path.join(self.root, "run.sh")):
            out = S.without_modes(S.prepare(path))
            self.assertEqual({f.header.mode for f in out.files}, {None})
            if isinstance(out.offer, M.FileOffer):
                self.assertIsNone(out.offer.mode)
            else:
                self.assertEqual(out.offer.folder_modes, ())


class Landing(_Umask, unittest.TestCase):
    """The sinks give each file the receiving rules' mode (both the plain
    and the resumable ones, which the CLI uses)."""

    def setUp(self):
        self.dir = os.path.abspath(self.mktemp())
        os.makedirs(self.dir)

    def receive_folder(self, modes_sent, resumable, modes=True):
        files = [[n] for n in modes_sent]
        offer = M.DirectoryOffer("d", len(files), files)
        sink = _sink.sink_for(offer, self.dir, plenty, resumable=resumable, modes=modes)
        if resumable:
            sink.check_kept()
        for name, mode in modes_sent.items():
            writer = sink.open_file((name,), M.FileOffer(name, 1, 1, mode=mode))
            writer.write(b"x")
            writer.commit()
        sink.complete()
        return {n: mode_of(os.path.join(self.dir, "d", n)) for n in modes_sent}

    def receive_file(self, mode, resumable, modes=True):
        offer = M.FileOffer("f", 1, 1, mode=mode)
        sink = _sink.sink_for(offer, self.dir, plenty, resumable=resumable, modes=modes)
        if resumable:
            sink.check_kept()
        writer = sink.open_file(("f",), offer)
        writer.write(b"x")
        writer.commit()
        return mode_of(os.path.join(self.dir, "f"))

    def test_modes_of_a_folder_s_files(self):
        """Each file of a folder gets the sender's bits less the umask;
        set-uid/set-gid/sticky dropped."""
        self.umask(0o022)
        sent = {"a": 0o755, "b": 0o644, "c": 0o600, "d": 0o700, "e": 0o4755, "f": 0o7777,
                "g": 0o444}
        expected = {"a": 0o755, "b": 0o644, "c": 0o600, "d": 0o700, "e": 0o755, "f": 0o755,
                    "g": 0o444}
        for resumable in (False, True):
            self.assertEqual(self.receive_folder(sent, resumable), expected)
            _clear(self.dir)

    def test_file_modes(self):
        self.umask(0o022)
        for resumable in (False, True):
            for sent, expected in ((0o755, 0o755), (0o600, 0o600), (0o6755, 0o755),
                                   (None, 0o644)):
                self.assertEqual(self.receive_file(sent, resumable), expected)
                os.unlink(os.path.join(self.dir, "f"))

    def test_folder_modes(self):
        """Folders get theirs once filled, deepest first: a read-only one
        still receives its file; set-uid/set-gid/sticky dropped; a folder
        that was not made is skipped; without the feature, 0777 less the
        umask."""
        self.umask(0o022)
        for resumable, modes, expected in (
                (False, True, {"ro": 0o555, "ro/in": 0o700, "s": 0o755}),
                (True, True, {"ro": 0o555, "ro/in": 0o700, "s": 0o755}),
                (False, False, {"ro": 0o755, "ro/in": 0o755, "s": 0o755})):
            folder = os.path.abspath(self.mktemp())
            os.makedirs(folder)
            offer = M.DirectoryOffer("d", 2, [["ro", "in", "f"], ["s", "g"]], (), [
                [["ro"], 0o555], [["ro", "in"], 0o700], [["s"], 0o3777], [["gone"], 0o700]])
            sink = _sink.sink_for(offer, folder, plenty, resumable=resumable, modes=modes)
            if resumable:
                sink.check_kept()
            for path in offer.files:
                writer = sink.open_file(path, M.FileOffer(path[-1], 1, 1))
                writer.write(b"x")
                writer.commit()
            sink.complete()
            root = os.path.join(folder, "d")
            self.addCleanup(os.chmod, os.path.join(root, "ro"), 0o755)
            self.assertEqual(folder_modes_of(root), expected)
            with open(os.path.join(root, "ro", "in", "f"), "rb") as f:
                self.assertEqual(f.read(), b"x")

    def test_umask_limits(self):
        self.umask(0o077)
        self.assertEqual(self.receive_folder({"a": 0o755, "b": 0o644}, False),
                         {"a": 0o700, "b": 0o600})
        self.assertEqual(self.receive_file(0o755, True), 0o700)

    def test_feature_off_gives_the_default(self):
        """Both peers did not declare "file-modes": a mode the peer sends anyway
        is ignored, like any attribute of an undeclared feature."""
        self.umask(0o022)
        self.assertEqual(self.receive_folder({"a": 0o700}, True, modes=False), {"a": 0o644})
        self.assertEqual(self.receive_file(0o755, False, modes=False), 0o644)

    def test_not_an_integer_is_a_bad_offer(self):
        """What the codec refuses, the rule refuses too (a header made by
        hand, past the codec)."""
        offer = M.FileOffer("f", 1, 1)
        sink = _sink.sink_for(offer, self.dir, plenty, modes=True)
        writer = sink.open_file(("f",), offer)
        writer.mode = "0755"
        writer.write(b"x")
        self.assertRaises(BadOffer, writer.commit)


def _clear(folder):
    for dirpath, dirs, names in os.walk(folder, topdown=False):
        for n in names:
            os.unlink(os.path.join(dirpath, n))
        for n in dirs:
            os.rmdir(os.path.join(dirpath, n))


class CLIModes(_Umask, _CLIBase):
    """Two of our ``wormhole`` processes over transfer-v2 (the CLI declares
    "file-modes"): a tree of 0755, 0644, 0600 and 0700 files (in folders
    of 0750 and 0700) and an executable file on its own keep their modes
    (umask 022 for both: it takes nothing from these modes)."""

    @defer.inlineCallbacks
    def test_tree_and_file(self):
        self.umask(0o022)  # the children inherit it
        tree = chmod_folders(make_moded_tree(os.path.join(self.src, "moded")))
        tool = os.path.join(self.src, "tool.sh")
        with open(tool, "w") as f:
            f.write("#!/bin/sh\necho hi\n")
        os.chmod(tool, 0o755)
        send, recv = yield self.run_pair(self.ours("send", tree, tool),
                                         self.ours("receive", "--accept-file"))
        self.assertExit(send, 0)
        self.assertExit(recv, 0)
        self.assertIn(V2_USED.encode(), recv.stderr)
        self.assertEqual(modes_of(os.path.join(self.dst, "moded")), MODES)
        self.assertEqual(folder_modes_of(os.path.join(self.dst, "moded")), FOLDER_MODES)
        self.assertEqual(mode_of(os.path.join(self.dst, "tool.sh")), 0o755)


def _accept_into(incoming, folder):
    incoming.accept(folder)
    return incoming.when_done()


class Sessions(_Umask, _Base):
    """The library between two wormholes on our Mailbox server: the
    feature is used when both declare it, and only then."""

    @defer.inlineCallbacks
    def offer_tree(self, receiver_features):
        self.umask(0o022)
        src = make_moded_tree(os.path.join(os.path.abspath(self.mktemp()), "moded"))
        dst = os.path.abspath(self.mktemp())
        os.makedirs(dst)
        w1, w2 = yield self.pair("send", "receive", versions2=T.app_versions(
            "receive", receiver_features))
        landed = []
        sessions = [self.session(w1, "send"),
                    self.session(w2, "receive", features=receiver_features,
                                 on_offer=lambda incoming: landed.append(
                                     _accept_into(incoming, dst)))]
        yield defer.gatherResults([s.start() for s in sessions])
        yield sessions[0].offer(src)
        received = yield landed[0]
        yield defer.gatherResults([sessions[1].when_closed(), sessions[0].close()])
        return modes_of(received.path)

    @defer.inlineCallbacks
    def test_both_declare(self):
        got = yield self.offer_tree(None)  # all we have, "file-modes" included
        self.assertEqual(got, MODES)

    @defer.inlineCallbacks
    def test_receiver_without_the_feature(self):
        """No mode travels: every file gets 0666 less the umask."""
        features = {k: v for k, v in V.OUR_FEATURES.items() if k != V.FILE_MODES}
        got = yield self.offer_tree(features)
        self.assertEqual(got, {name: 0o644 for name in MODES})
