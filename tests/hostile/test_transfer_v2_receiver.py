"""Our ``wormhole receive`` (a real process) against a hostile
transfer-v2 sender built on our library (``_v2_peer``): one case per
class of refusal (a name, a directory's
entries, a count, a size, a record over the limits, a malformed record, a
protocol error after the accept), each asserting the one ``ERROR:`` line
and the exit status (1: a failure; 3: declined), that nothing outside the
receive folder changed though a link was planted at every hidden name the
receiver uses, bounded memory (``/proc``) and time (``timeout``,
``--peer-timeout``); and the honest-but-awkward cases (a file list over
1 MiB, a resume answered "from 0" with ``--hide-progress``) that must
simply work, with no traceback."""
import os

import msgpack
from twisted.internet import defer

from wormhole.transfer_v2 import _framing
from wormhole.transfer_v2 import _messages as M

from ..cli._json_schema import lines_of
from ._json_victim import JSONVictim
from ._v2_peer import V2PeerCase, digest, first_of
from ._victim import assert_clean_terminal, assert_memory_bounded

UNUSABLE = "the sender offered an unusable name"
BEFORE_KNOWN = "refused an offer from the peer before it was known: protocol error"


class HostileSender(V2PeerCase):

    @defer.inlineCallbacks
    def offer(self, first, base="f", then=None, again=None, end=True):
        """The victim receives; our peer opens an offer subchannel and
        writes ``first`` (a record, or raw bytes with ``raw=``); ``then``
        (given the RawOffer) goes on. When the victim answered (a record)
        or closed the subchannel, the peer ends the session. Fires with
        the victim once it ended."""
        peer, victim = self.pair("receive", "send", base=base, again=again)
        yield peer.start()
        offer = yield peer.offer()
        if isinstance(first, bytes):
            offer.send_raw(first)
        else:
            offer.send(first)
        if then is not None:
            yield then(offer)
        else:
            yield first_of(offer.next_record(), offer.lost)
        offer.close()
        if end:
            peer.end_session()
        yield victim.ended
        return victim

    # -- names the receiving rules refuse (at accept: the IncomingOffer) --
    @defer.inlineCallbacks
    def refused_name(self, name, shown):
        victim = yield self.offer(M.FileOffer(name, 0, 10))
        line = self.assert_error(victim, f"{UNUSABLE} '{shown}'")
        self.assert_outside_untouched(victim)
        return line

    def test_dot_dot(self):
        return self.refused_name("..", "..")

    def test_absolute(self):
        return self.refused_name("/etc/passwd", "/etc/passwd")

    def test_nul(self):
        return self.refused_name("a\x00b", "a\\x00b")

    def test_backslash(self):
        return self.refused_name("a\\b", "a\\\\b")

    @defer.inlineCallbacks
    def test_directory_entry_escapes(self):
        victim = yield self.offer(M.DirectoryOffer("d", 1, [["..", "x"]]), base="d")
        self.assert_error(victim, f"{UNUSABLE} '../x'")
        self.assert_outside_untouched(victim)

    # -- offers refused before they are known (the session's on_refused) --
    @defer.inlineCallbacks
    def refused_record(self, raw, words, base="d"):
        victim = yield self.offer(raw, base=base)
        self.assert_error(victim, f"{BEFORE_KNOWN} from the offering side: {words}")
        self.assert_outside_untouched(victim)

    def directory(self, files, size=1):
        """A DirectoryOffer's raw record, built without the checks of
        ``M.DirectoryOffer`` (a hostile peer skips them)."""
        return bytes([M.KIND_DIRECTORY_OFFER]) + msgpack.packb(
            {"base": "d", "size": size, "files": files})

    def framed(self, raw):
        return _framing.frame(raw)

    def test_directory_entries_repeat(self):
        return self.refused_record(self.framed(self.directory([["a"], ["a"]])),
                                   "the same path is offered twice")

    def test_directory_entries_collide(self):
        return self.refused_record(self.framed(self.directory([["a"], ["a", "b"]])),
                                   "'a' is offered as a file or an empty folder")

    def test_directory_over_the_count_limit(self):
        files = [[str(i)] for i in range(M.MAX_FILES + 1)]
        return self.refused_record(self.framed(self.directory(files)),
                                   f"files must be a list of at most {M.MAX_FILES} paths")

    def test_record_over_the_limit(self):
        """A frame announcing more than any record may hold: refused with
        its header, before any of the announced bytes."""
        return self.refused_record((_framing.MAX_RECORD + 1).to_bytes(4, "big"),
                                   f"a record of {_framing.MAX_RECORD + 1} bytes "
                                   f"(at most {_framing.MAX_RECORD})")

    def test_malformed_record(self):
        return self.refused_record(self.framed(b"\x63not a record"), "unknown record kind 99")

    @defer.inlineCallbacks
    def test_refused_then_silent(self):
        """The peer keeps the session open after its refused offer: the
        victim gives up after --peer-timeout, and the refusal is still
        its ERROR line (the silence is said above it)."""
        victim = yield self.offer(self.framed(b"\x63not a record"), end=False)
        self.assert_error(victim, f"{BEFORE_KNOWN} from the offering side: unknown record kind")
        self.assert_silence_said(victim)
        self.assert_outside_untouched(victim)

    def assert_silence_said(self, victim):
        self.assertIn(b"\ngave up waiting for the sender's next offer: nothing came for "
                      b"5 seconds (--peer-timeout)\nERROR", victim.stderr, victim.describe())

    def assert_received_said(self, victim, size_shown):
        """The victim said the offer arrived (``size_shown``: its size as
        the summary line shows it)."""
        self.assertIn(b"Received file written to", victim.stderr, victim.describe())
        self.assertIn(b"\nReceived " + size_shown + b" in ", victim.stderr, victim.describe())

    # -- a size: our rules decline it (exit 3) -----------------------------
    @defer.inlineCallbacks
    def test_no_room(self):
        victim = yield self.offer(M.FileOffer("f", 0, 2 ** 62))
        self.assert_error(victim, "not enough free space", status=3)
        self.assert_outside_untouched(victim)

    # -- protocol errors after the accept (the offer's when_done) ---------
    @defer.inlineCallbacks
    def test_more_data_than_announced(self):
        @defer.inlineCallbacks
        def then(offer):
            yield offer.next_record()  # the accept
            offer.send(M.FileData(b"x" * 20))
            yield offer.lost
        victim = yield self.offer(M.FileOffer("f", 0, 10), then=then)
        self.assert_error(victim, "sent more than the 10 bytes it announced")
        self.assert_outside_untouched(victim)

    @defer.inlineCallbacks
    def test_wrong_hash(self):
        @defer.inlineCallbacks
        def then(offer):
            yield offer.next_record()  # the accept
            offer.send(M.FileData(b"x" * 10))
            offer.send(M.FileAcknowledge(10, digest(b"y" * 10)))
            yield offer.lost
        victim = yield self.offer(M.FileOffer("f", 0, 10), then=then)
        self.assert_error(victim, "the received bytes do not match")
        self.assert_outside_untouched(victim)

    # -- honest offers among the planted links -----------------------------
    @defer.inlineCallbacks
    def send_file(self, offer, data):
        """``data`` as file "f" once the victim accepted; fires with its
        answer to the accept."""
        accept = yield offer.next_record()
        if accept.resume_offset is not None:  # answered "from 0": the whole file again
            offer.send(M.FileOffer("f", 1700000000, len(data), 0))
        offer.send(M.FileData(data))
        offer.send(M.FileAcknowledge(len(data), digest(data)))
        yield offer.next_record()  # the victim's acknowledgement
        return accept

    @defer.inlineCallbacks
    def test_honest_file_among_planted_links(self):
        """Item 1: a link at every hidden name; the file arrives whole,
        nothing outside changes, exit 0."""
        data = b"honest bytes" * 100
        victim = yield self.offer(M.FileOffer("f", 1700000000, len(data)),
                                  then=lambda offer: self.send_file(offer, data))
        self.assertEqual(victim.status, 0, victim.describe())
        self.assert_received_said(victim, b"1.2 kB")
        assert_memory_bounded(self, victim)
        self.assert_outside_untouched(victim, "f")
        with open(f"{victim.out}/f", "rb") as f:
            self.assertEqual(f.read(), data)
        assert_clean_terminal(self, victim)

    @defer.inlineCallbacks
    def test_file_list_over_one_mib(self):
        """Item 3: 4,500 files with 240-byte names (a file list over
        1 MiB, so over one Dilation record) arrive whole."""
        names = [f"{i:05d}".ljust(240, "n") for i in range(4500)]
        offer_record = M.DirectoryOffer("d", 0, [[n] for n in names])
        self.assertGreater(len(M.encode_record(offer_record)), 1024 * 1024)

        @defer.inlineCallbacks
        def then(offer):
            accept = yield offer.next_record()
            self.assertEqual(accept, M.OfferAccept())
            for n in names:
                offer.send(M.FileOffer(n, 0, 0))
                offer.send(M.FileAcknowledge(0, digest(b"")))
            for _ in names:
                yield offer.next_record()
        victim = yield self.offer(offer_record, base="d", then=then)
        self.assertEqual(victim.status, 0, victim.describe())
        self.assert_outside_untouched(victim, "d")
        self.assertEqual(len(os.listdir(f"{victim.out}/d")), 4500)
        assert_memory_bounded(self, victim)

    @defer.inlineCallbacks
    def test_resume_answered_from_zero(self):
        """Item 6: a first session leaves 1000 of 2000 bytes (kept under
        the hidden resumable name); in the second the victim asks to
        resume and the sender answers "start from 0": with
        --hide-progress the bar must not raise (it raised AttributeError
        inside Dilation's dataReceived); the file arrives whole."""
        data = bytes(range(256)) * 8
        first = M.FileOffer("f", 1700000000, 2000)

        def half(offer):
            d = offer.next_record()
            d.addCallback(lambda accept: offer.send(M.FileData(data[:1000])))
            return d
        victim = yield self.offer(first, then=half)
        self.assert_error(victim, "the sender went away")
        victim2 = yield self.offer(first, then=lambda offer: self.send_file(offer, data[:2000]),
                                   again=victim)
        self.assertEqual(victim2.status, 0, victim2.describe())
        assert_clean_terminal(self, victim2)
        self.assertNotIn(b"display callback", victim2.stderr, victim2.describe())
        self.assert_received_said(victim2, b"2.0 kB")
        assert_memory_bounded(self, victim2)
        with open(f"{victim2.out}/f", "rb") as f:
            self.assertEqual(f.read(), data[:2000])
        self.assert_outside_untouched(victim2, "f")


class HostileSenderJSON(JSONVictim, HostileSender):
    """The same attacks on ``wormhole receive --json`` (the library's
    ``Transfer`` behind JSON lines): the same ERROR line and status, and
    stdout holds JSON lines only, the last error line of the documented
    schema saying the same."""

    def assert_silence_said(self, victim):
        """The refusal is the one error; the silence after it ended the
        session (bounded by --peer-timeout) without a line of its own."""

    def assert_received_said(self, victim, size_shown):
        [received] = [e for e in lines_of(victim.run) if e["type"] == "received"]
        self.assertEqual(received["path"], os.path.join(victim.out, "f"), victim.describe())
        self.assertEqual(lines_of(victim.run)[-1]["type"], "finished", victim.describe())
