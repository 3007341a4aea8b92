"""Links planted in the receive folder (docs/security.md, "Hidden files
(`wormhole._landing._nofollow`)"): someone who can write in the folder we receive into
plants a symbolic link under every hidden name the receiver uses, and
under the final name, pointing outside; whatever the receiver then does
(receive, refuse, resume, start over), nothing outside the folder is
written, created, truncated or changed in mode.

The hidden names are not picked by hand: transfer-v2's fixed ones are
``_landing.kept_name(base, suffix)`` for every suffix in
``_resumable.KEPT_SUFFIXES`` (``test_every_fixed_name_is_listed`` proves, by
recording every name the receiver makes beside the target through a
whole interrupted-and-resumed transfer, that no other fixed name exists);
the others are tempfile's random names (created ``O_EXCL``). Classic
receive uses only random names, so its planted link is the final name.
"""
import io
import json
import os
import zipfile

from twisted.trial import unittest

from wormhole import _landing
from wormhole._landing import Refused
from wormhole.cli import cmd_receive
from wormhole.cli._config import Config
from wormhole.transfer_v2 import _messages as M
from wormhole.transfer_v2 import _resumable, _sink
from wormhole.transfer_v2._receiving import Received

from ...cli.fakes import FakeFactory, FakeReactor, FakeTransits
from ..transfer_v2 import _machines as machines
from ._outside import Outside


def digest(data):
    h = M.new_hash()
    h.update(data)
    return h.digest()


def plenty(path):
    return 10 ** 12


class _Peer:
    """An honest transfer-v2 sender of ``files`` ({path: bytes}; one
    file offer when ``directory`` is None), record by record into an
    OfferReceiver with the real sink; it answers a resume request the
    way our sender does when its files did not change."""

    def __init__(self, folder, files, directory=None):
        self.folder = folder
        self.files = files
        self.order = list(files)
        if directory is None:
            [(path, data)] = files.items()
            self.offer = M.FileOffer(path[-1], 1700000000, len(data))
        else:
            self.offer = M.DirectoryOffer(directory, sum(map(len, files.values())),
                                          [list(p) for p in self.order])
        self.answers = []
        self.results = []
        self.r = machines.receiver(lambda b: self.answers.append(M.parse_record(b)),
                               lambda: None, lambda offer: None, lambda n: None,
                               self.results.append)
        self.send(self.offer)

    def send(self, record):
        self.r.got_record(M.encode_record(record))

    def accept(self):
        """Accept (refusals raise Refused, as IncomingOffer sees them)."""
        self.r.accept(_sink.sink_for(self.offer, self.folder, plenty, resumable=True))
        return self.answers[0]

    def run(self, stop_after=None):
        """Answer our accept and send everything (``stop_after`` bytes of
        data at most, then the subchannel is lost)."""
        accept = self.accept()
        resuming = accept.resume_offset is not None
        skip = accept.resume_files or 0
        folder = isinstance(self.offer, M.DirectoryOffer)
        budget = stop_after
        for i, path in enumerate(self.order[skip:], skip):
            data = self.files[path]
            start = 0
            if i == skip and resuming:
                start = accept.resume_offset
                self.send(M.FileOffer(path[-1], 1700000000, len(data), start,
                                      skip if folder else None))
            elif folder:
                self.send(M.FileOffer(path[-1], 1700000000, len(data)))
            rest = data[start:]
            if budget is not None:
                rest, budget = rest[:budget], budget - len(rest[:budget])
            if rest:
                self.send(M.FileData(rest))
            if budget == 0:
                break
            self.send(M.FileAcknowledge(len(data), digest(data)))
        self.r.lost()


class TransferV2(unittest.TestCase):
    def setUp(self):
        self.outside = Outside(self)
        self.inbox = os.path.abspath(self.mktemp())
        os.makedirs(self.inbox)

    def assertOutsideUntouched(self):
        self.assertEqual(self.outside.snapshot(), self.outside.before)

    def hidden(self, base):
        return [os.path.join(self.inbox, _landing.kept_name(base, suffix))
                for suffix in _resumable.KEPT_SUFFIXES]

    # the same bytes in every session (a resumed peer sends what it sent)
    BYTES = bytes(range(256)) * 20

    def file_peer(self):
        return _Peer(self.inbox, {("big.bin",): self.BYTES[:5000]})

    def folder_peer(self):
        return _Peer(self.inbox, {("a",): self.BYTES[:3000], ("sub", "b"): self.BYTES[7:3007],
                                  ("c",): self.BYTES[:10]}, directory="tree")

    def plant(self, path, target):
        _sink_remove(path)
        os.symlink(target, path)

    def finish_and_check(self, make_peer, base):
        """A fresh peer sends everything: it arrives whole (the planted
        link went, never followed) or is refused; outside is untouched."""
        peer = make_peer()
        try:
            peer.run()
        except Refused:
            pass
        self.assertOutsideUntouched()
        return peer

    def test_every_fixed_name_is_listed(self):
        """Every name the receiver makes beside the target, through an
        interrupted transfer and its resume, file and folder, is a random
        temporary one or kept_name(base, s) for s in KEPT_SUFFIXES."""
        made = []
        real_open, real_mkdir, real_replace = os.open, os.mkdir, os.replace

        def record(path):
            path = os.path.abspath(os.fspath(path))
            if os.path.dirname(path) == self.inbox:
                made.append(os.path.basename(path))

        def opening(path, *a, **kw):
            if kw.get("dir_fd") is None:
                record(path)
            return real_open(path, *a, **kw)

        def mkdir(path, *a, **kw):
            record(path)
            return real_mkdir(path, *a, **kw)

        def replace(src, dst, *a, **kw):
            record(src)
            record(dst)
            return real_replace(src, dst, *a, **kw)
        self.patch(os, "open", opening)
        self.patch(os, "mkdir", mkdir)
        self.patch(os, "replace", replace)
        for make_peer, base in ((self.file_peer, "big.bin"), (self.folder_peer, "tree")):
            make_peer().run(stop_after=4000)
            peer = make_peer()
            peer.run()
            self.assertIsInstance(peer.results[0], Received)
            fixed = {_landing.kept_name(base, s) for s in _resumable.KEPT_SUFFIXES} | {base}
            for name in made:
                self.assertTrue(name in fixed or name.startswith(
                    _landing.temporary_prefix(base)), name)
            self.assertTrue(fixed - {base} <= set(made))
            made.clear()

    def test_links_at_hidden_names_fresh(self):
        """A link at each hidden name before the first session: the offer
        is received whole, nothing outside changes."""
        for make_peer, base in ((self.file_peer, "big.bin"), (self.folder_peer, "tree")):
            for hidden in self.hidden(base):
                for target in self.outside.targets():
                    self.plant(hidden, target)
                    peer = self.finish_and_check(make_peer, base)
                    self.assertIsInstance(peer.results[0], Received)
                    self.assertEqual(sorted(os.listdir(self.inbox)), [base])
                    _sink_remove(os.path.join(self.inbox, base))

    def test_links_at_hidden_names_on_resume(self):
        """A first session is interrupted (its bytes, state or journal
        kept); a link then replaces each hidden name, or is added at the
        temporary one: the next session discards or resumes, receives the
        offer whole, and nothing outside changes."""
        for make_peer, base in ((self.file_peer, "big.bin"), (self.folder_peer, "tree")):
            for hidden in self.hidden(base):
                for target in self.outside.targets():
                    make_peer().run(stop_after=4000)
                    self.plant(hidden, target)
                    peer = self.finish_and_check(make_peer, base)
                    self.assertIsInstance(peer.results[0], Received)
                    self.assertEqual(sorted(os.listdir(self.inbox)), [base])
                    _sink_remove(os.path.join(self.inbox, base))

    def test_links_inside_the_kept_folder(self):
        """Links planted inside an interrupted folder's kept folder (at a
        file and at a subfolder): the kept folder is discarded, the
        folder received whole, nothing outside changes."""
        kept = self.hidden("tree")[0]
        for inside in ("a", "sub", os.path.join("sub", "b")):
            for target in self.outside.targets() + (self.outside.path,):
                self.folder_peer().run(stop_after=4000)
                self.plant(os.path.join(kept, inside), target)
                peer = self.finish_and_check(self.folder_peer, "tree")
                self.assertIsInstance(peer.results[0], Received)
                _sink_remove(os.path.join(self.inbox, "tree"))

    def test_link_at_the_final_name(self):
        """A link at the final name: refused before anything is accepted
        when it is there first, and when it appears while the bytes come
        the verified bytes are not given that name; nothing outside
        changes."""
        for make_peer, base in ((self.file_peer, "big.bin"), (self.folder_peer, "tree")):
            final = os.path.join(self.inbox, base)
            for target in self.outside.targets():
                self.plant(final, target)
                e = self.assertRaises(Refused, make_peer().accept)
                self.assertIn("refusing to overwrite existing", str(e))
                os.unlink(final)
                peer = make_peer()
                peer.accept()
                self.plant(final, target)
                peer.send(M.FileOffer(peer.order[0][-1], 0, len(peer.files[peer.order[0]]))
                          if isinstance(peer.offer, M.DirectoryOffer) else M.FileData(b""))
                for path in peer.order:
                    data = peer.files[path]
                    if path != peer.order[0]:
                        peer.send(M.FileOffer(path[-1], 0, len(data)))
                    peer.send(M.FileData(data))
                    peer.send(M.FileAcknowledge(len(data), digest(data)))
                self.assertIn("overwrite", str(peer.results[0]))
                self.assertOutsideUntouched()
                self.assertTrue(os.path.islink(final))
                os.unlink(final)
                for name in os.listdir(self.inbox):  # kept for a later session
                    _sink_remove(os.path.join(self.inbox, name))


def _sink_remove(path):
    from wormhole._landing import _nofollow
    _nofollow.remove(path)


class Classic(unittest.TestCase):
    """Classic receive's hidden names are all random (mkstemp, mkdtemp);
    a link at the final name is refused before anything is accepted, and
    nothing outside changes."""

    def setUp(self):
        self.outside = Outside(self)
        self.inbox = os.path.abspath(self.mktemp())
        os.makedirs(self.inbox)

    def receive(self, offer):
        factory = FakeFactory()
        cfg = Config(relay_url="ws://example/v1", create=factory.create,
                     stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(),
                     code="4-purple-sausages", transit_receiver=FakeTransits(factory.log),
                     cwd=self.inbox, free_space=plenty, hide_progress=True,
                     accept_file=True)
        d = cmd_receive.receive(FakeReactor(), cfg)
        w = factory.wormholes[0]
        w.got_key()
        w.got_verifier()
        w.deliver(json.dumps({"offer": offer}).encode())
        return d

    def test_link_at_the_final_name(self):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("a", b"A")
        z = buf.getvalue()
        offers = [("f", {"file": {"filename": "f", "filesize": 3}}),
                  ("d", {"directory": {"mode": "zipfile/deflated", "dirname": "d",
                                       "zipsize": len(z), "numbytes": 1, "numfiles": 1}})]
        for name, offer in offers:
            for target in self.outside.targets():
                final = os.path.join(self.inbox, name)
                os.symlink(target, final)
                f = self.failureResultOf(self.receive(offer), Refused)
                self.assertIn("refusing to overwrite existing", str(f.value))
                self.assertEqual(os.listdir(self.inbox), [name])
                self.assertEqual(self.outside.snapshot(), self.outside.before)
                os.unlink(final)
