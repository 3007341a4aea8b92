"""Our ``wormhole receive`` (a real process) against a hostile sender
built on our library (``_sender.HostileSender``), on our Mailbox server
in this reactor. Each case asserts what the victim did: exit status and
its one ``ERROR:`` line, every file it created (nothing outside the
target, nothing partial), the bytes it wrote to the terminal (no raw
control character from the peer), its peak RSS (``/proc``), and for the
stalls how long it waited before giving up."""
import io
import itertools
import stat
import zipfile

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole_mailbox.testing import start_mailbox_server

from ._sender import HostileSender, send_in_records
from ._victim import (
    Victim,
    assert_clean_terminal,
    assert_memory_bounded,
    assert_one_error_line,
)

_codes = itertools.count(1)
# the victims' --peer-timeout: short, so the stall cases are cheap
PEER_TIMEOUT = 2.0
# the upper bound shows it gave up at all; what is exact is the lower one
# (it cannot give up before its timer); the rest is process start-up and a
# loaded CI machine
SLACK = 30.0


def zipped(entries):
    """entries: (name, data) or (name, target, "link")."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for entry in entries:
            info = zipfile.ZipInfo(entry[0])
            info.compress_type = zipfile.ZIP_DEFLATED
            if len(entry) > 2:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, entry[1])
    return buf.getvalue()


def directory_offer(z, numbytes, numfiles, dirname="d"):
    return {"directory": {"mode": "zipfile/deflated", "dirname": dirname,
                          "zipsize": len(z), "numbytes": numbytes, "numfiles": numfiles}}


class HostileSenderCases(unittest.TestCase):
    timeout = 90

    @defer.inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(self.srv.stop)

    def pair(self, *victim_args, peer_timeout=None):
        code = f"{next(_codes)}-hostile-sender"
        victim = Victim.spawn(self, self.srv.url, code, *victim_args,
                              peer_timeout=peer_timeout)
        return HostileSender(self, self.srv.url, code), victim

    @defer.inlineCallbacks
    def send_directory(self, z, numbytes, numfiles):
        """Offer ``z`` as a directory; once accepted, send all of it and
        wait for the victim to end. Returns the victim."""
        sender, victim = self.pair()
        answer = yield sender.offer_with_transit(directory_offer(z, numbytes, numfiles))
        self.assertEqual(answer["answer"], {"file_ack": "ok"})
        pipe = yield sender.connect()
        send_in_records(pipe, z)
        yield victim.ended
        return victim

    @defer.inlineCallbacks
    def test_symlink_chain(self):
        """The issue's chain: 'a/b -> ..', then 'a/l1 -> b/..', 'a/l2 ->
        l1/..', ...: each link looks inside on its own (and lexically is),
        but each climbs one more level, up to '/', and 'pw ->
        a/l20/etc/passwd' would read the system's file. The victim
        refuses the archive and creates nothing at all."""
        entries = [("f.txt", b"ok"), ("a/b", "..", "link"), ("a/l1", "b/..", "link")]
        entries += [(f"a/l{i}", f"l{i - 1}/..", "link") for i in range(2, 21)]
        entries += [("root", "a/l20", "link"), ("pw", "a/l20/etc/passwd", "link")]
        victim = yield self.send_directory(zipped(entries), 2, 1)
        assert_one_error_line(self, victim, "is a link out of the target directory")
        self.assertEqual(victim.created(), ["inbox"])
        assert_memory_bounded(self, victim)

    @defer.inlineCallbacks
    def test_link_entry_bomb(self):
        """A half-megabyte zipfile whose one link entry inflates to 512
        MiB: refused from its header, read no further; memory stays at
        the CLI's own size and the error is one short line (it was 1.6 GB
        and a gigabyte of output)."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            info = zipfile.ZipInfo("l")
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            with zf.open(info, "w", force_zip64=True) as f:
                chunk = b"../" * (2**20 // 3 + 1)
                for _ in range(512):
                    f.write(chunk)
        z = buf.getvalue()
        self.assertLess(len(z), 1_000_000)
        victim = yield self.send_directory(z, 10, 1)
        assert_one_error_line(self, victim, "has a target longer than 4096 bytes")
        self.assertLess(len(victim.stderr), 1000)
        self.assertEqual(victim.created(), ["inbox"])
        assert_memory_bounded(self, victim)

    @defer.inlineCallbacks
    def test_file_bomb(self):
        """Entries whose headers claim little and whose bytes inflate to
        64 MiB, against numbytes=1000: refused, nothing left, memory
        bounded."""
        z = zipped([("a.bin", b"\x00" * (64 * 2**20))])
        victim = yield self.send_directory(z, 1000, 1)
        assert_one_error_line(self, victim, "more than the 1000 bytes")
        self.assertEqual(victim.created(), ["inbox"])
        assert_memory_bounded(self, victim)

    @defer.inlineCallbacks
    def test_many_tiny_entries(self):
        """150000 empty folder entries (a 14 MB zipfile) offered as one
        file: refused from the zipfile's end record before the entry list
        is built (which took 113 MB for 200000), nothing made."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for i in range(150_000):
                zf.writestr(f"{i}/", b"")
        victim = yield self.send_directory(buf.getvalue(), 0, 1)
        assert_one_error_line(self, victim, "the zipfile's directory is")
        self.assertEqual(victim.created(), ["inbox"])
        assert_memory_bounded(self, victim)

    @defer.inlineCallbacks
    def test_hostile_file_name(self):
        """A file name carrying terminal escapes and a forged line is
        refused before any byte is streamed; the sender is told 'transfer
        rejected'; the victim's terminal gets the name escaped."""
        sender, victim = self.pair()
        answer = yield sender.offer_with_transit(
            {"file": {"filename": "\x1b]0;owned\x07\nERROR: forged\u202etxt.exe",
                      "filesize": 10}})
        self.assertEqual(answer, {"error": "transfer rejected"})
        yield victim.ended
        line = assert_one_error_line(self, victim, "unusable name")
        self.assertIn(b"\\x1b]0;owned\\x07\\nERROR: forged\\u202etxt.exe", line)
        self.assertEqual(victim.created(), ["inbox"])

    @defer.inlineCallbacks
    def test_hostile_error_and_counts(self):
        """The sender's error string (escapes, CR, newlines) and a count
        that is not a number reach the victim's terminal escaped, in one
        line each."""
        sender, victim = self.pair()
        sender.send({"error": "\x1b[2J\r\nERROR: forged\x9b31m" + "x" * 100_000})
        yield victim.ended
        line = assert_one_error_line(self, victim, "the sender gave up: \\x1b[2J\\r\\n")
        self.assertLess(len(line), 400)
        sender, victim = self.pair()
        answer = yield sender.offer_with_transit(
            {"directory": {"mode": "zipfile/deflated", "dirname": "d", "zipsize": 1,
                           "numbytes": 1, "numfiles": "\x1b[31m"}})
        self.assertEqual(answer, {"error": "transfer rejected"})
        yield victim.ended
        assert_one_error_line(self, victim, "bad numfiles: \\x1b[31m")

    @defer.inlineCallbacks
    def test_garbage_hints_and_more_bytes_than_offered(self):
        """Unusable transit messages and hints are skipped (the transfer
        goes on over the good ones); a record that carries more than the
        offered filesize fails the transfer in one line, leaving nothing."""
        sender, victim = self.pair()
        sender.send({"transit": "junk"})
        sender.send({"transit": {"hints-v1": [1, "x", {"type": "direct-tcp-v1",
                                                        "hostname": "\x1b[2J", "port": 1},
                                               {"type": "relay-v1", "hints": "y"}]}})
        answer = yield sender.offer_with_transit({"file": {"filename": "f.bin",
                                                           "filesize": 5}})
        self.assertEqual(answer["answer"], {"file_ack": "ok"})
        pipe = yield sender.connect()
        pipe.send_record(b"0123456789")
        yield victim.ended
        assert_one_error_line(self, victim, "the sender sent 10 bytes, 5 were announced")
        self.assertEqual(victim.created(), ["inbox"])

    @defer.inlineCallbacks
    def test_deeply_nested_message(self):
        """A message nested 100000 deep (which a JSON decoder recurses
        into) is refused as garbage: one line, no RecursionError."""
        sender, victim = self.pair()
        sender.send(b"[" * 100_000)
        yield victim.ended
        assert_one_error_line(self, victim, "not a JSON object (or nests too deeply)")

    @defer.inlineCallbacks
    def test_long_names_and_empty_folders(self):
        """Legal names up to 255 bytes are received (the temporary name
        fits beside them), and a directory's empty folders arrive."""
        name = "n" * 251 + ".bin"
        sender, victim = self.pair()
        answer = yield sender.offer_with_transit({"file": {"filename": name,
                                                           "filesize": 5}})
        self.assertEqual(answer["answer"], {"file_ack": "ok"})
        pipe = yield sender.connect()
        pipe.send_record(b"12345")
        ack = yield pipe.receive_record()
        self.assertIn(b'"ok"', ack)
        yield victim.ended
        self.assertEqual(victim.status, 0, victim.describe())
        self.assertEqual(victim.created(), ["inbox", "inbox/" + name])
        z = zipped([("e/", b""), ("f/g/", b""), ("f/" + "m" * 255, b"x")])
        victim = yield self.send_directory(z, 1, 1)
        self.assertEqual(victim.status, 0, victim.describe())
        self.assertEqual(victim.created(), ["inbox", "inbox/d", "inbox/d/e", "inbox/d/f",
                                            "inbox/d/f/g", "inbox/d/f/" + "m" * 255])
        assert_clean_terminal(self, victim)

    @defer.inlineCallbacks
    def test_never_offers(self):
        """The sender confirms the key, then says nothing: the victim
        gives up --peer-timeout seconds later, one line, exit 1."""
        sender, victim = self.pair(peer_timeout=PEER_TIMEOUT)
        yield sender.confirmed()
        confirmed_at = reactor.seconds()
        yield victim.ended
        waited = victim.ended_at - confirmed_at
        assert_one_error_line(self, victim, "gave up waiting for the sender's offer: "
                              "nothing came for 2 seconds (--peer-timeout)")
        # the victim's timer starts a little before we see its confirmation
        self.assertGreater(waited, PEER_TIMEOUT - 1.0)
        self.assertLess(waited, PEER_TIMEOUT + SLACK)
        self.assertEqual(victim.created(), ["inbox"])

    @defer.inlineCallbacks
    def test_stalls_mid_transfer(self):
        """Half the file, then silence with the connection open: the
        victim gives up after --peer-timeout and leaves no partial file."""
        sender, victim = self.pair(peer_timeout=PEER_TIMEOUT)
        answer = yield sender.offer_with_transit({"file": {"filename": "f.bin",
                                                           "filesize": 200_000}})
        self.assertEqual(answer["answer"], {"file_ack": "ok"})
        pipe = yield sender.connect()
        pipe.send_record(b"x" * 100_000)
        sent_at = reactor.seconds()
        yield victim.ended
        waited = victim.ended_at - sent_at
        assert_one_error_line(self, victim, "gave up waiting for the sender's data: "
                              "nothing came for 2 seconds")
        self.assertGreater(waited, PEER_TIMEOUT - 0.5)
        self.assertLess(waited, PEER_TIMEOUT + SLACK)
        self.assertEqual(victim.created(), ["inbox"])


class NarrowTerminal(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def test_text_the_terminal_cannot_encode(self):
        """On an ASCII terminal, a text of non-ASCII letters and emoji is
        printed with backslash escapes, exit 0, no UnicodeEncodeError."""
        srv = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(srv.stop)
        victim = Victim.spawn(self, srv.url, "8-ascii-victim",
                              env={"PYTHONIOENCODING": "ascii"})
        sender = HostileSender(self, srv.url, "8-ascii-victim")
        sender.send({"offer": {"message": "Grüße 😀"}})
        yield victim.ended
        self.assertEqual(victim.status, 0, victim.describe())
        self.assertEqual(victim.stdout, b"Gr\\xfc\\xdfe \\U0001f600\n")
        assert_clean_terminal(self, victim)


class HostileServer(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def test_motd_escaped(self):
        """A message of the day with escape sequences and a forged line
        reaches the victim's stderr escaped, each of its own lines
        indented; the transfer itself works."""
        srv = yield start_mailbox_server(reactor, port=0,
                                         motd="hi\x1b[2J\x1b]0;t\x07\nsecond\u202e")
        self.addCleanup(srv.stop)
        victim = Victim.spawn(self, srv.url, "7-motd-victim")
        sender = HostileSender(self, srv.url, "7-motd-victim")
        sender.send({"offer": {"message": "text \x1b[31m"}})
        yield victim.ended
        self.assertEqual(victim.status, 0, victim.describe())
        self.assertIn(b"  hi\\x1b[2J\\x1b]0;t\\x07\n  second\\u202e\n", victim.stderr)
        self.assertEqual(victim.stdout, b"text \\x1b[31m\n")
        assert_clean_terminal(self, victim)
