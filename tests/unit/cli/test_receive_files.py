"""``wormhole receive`` of files and directories against a recording fake
wormhole and fake Transit: the answer on the wire, and the safety rules
(ask first, never overwrite, room on disk, temporary name until verified,
nothing left behind when interrupted)."""
import hashlib
import io
import json
import os
import zipfile

from twisted.trial import unittest

from wormhole._landing import PARTIAL_PREFIX, Refused
from wormhole.cli import cmd_receive
from wormhole.cli._config import Config
from wormhole.errors import TransferError

from ...cli.fakes import FakeFactory, FakeReactor, FakeTransits

DATA = b"0123456789" * 3000


def j(d):
    return json.dumps(d).encode("utf-8")


def zipped(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return buf.getvalue()


class ReceiveFiles(unittest.TestCase):

    def setUp(self):
        self.factory = FakeFactory()
        self.reactor = FakeReactor()
        self.answers = []
        self.transits = FakeTransits(self.factory.log)
        self.dir = os.path.abspath(self.mktemp())
        os.makedirs(self.dir)
        self.free = 10**12
        self.cfg = Config(relay_url="ws://example/v1", create=self.factory.create,
                          stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(),
                          read_line=self.read_line, code="4-purple-sausages",
                          transit_receiver=self.transits, cwd=self.dir,
                          free_space=lambda path: self.free, hide_progress=True)

    def read_line(self, reactor, prompt):
        self.cfg.stdout.write(prompt)
        return __import__("twisted.internet.defer").internet.defer.succeed(
            self.answers.pop(0))

    def sent(self):
        return [json.loads(e[1]) for e in self.factory.log if e[0] == "w.send_message"]

    def offer(self, offer, **kw):
        for k, v in kw.items():
            setattr(self.cfg, k, v)
        d = cmd_receive.receive(self.reactor, self.cfg)
        self.w = self.factory.wormholes[0]
        self.w.got_key()
        self.w.got_verifier()
        self.w.deliver(j({"transit": {"abilities-v1": [], "hints-v1": [
            {"type": "relay-v1", "hints": [{"hostname": "r", "port": 1}]}]}}))
        self.w.deliver(j({"offer": offer}))
        return d

    def file_offer(self, name="a.txt", size=len(DATA)):  # noqa: B008  DATA is a constant
        return {"file": {"filename": name, "filesize": size}}

    def leftovers(self):
        return sorted(n for n in os.listdir(self.dir) if n.startswith(PARTIAL_PREFIX))

    def test_accept_asked(self):
        """The human is asked 'ok? (Y/n): ' on stdout; on yes our transit
        message goes out, then the file_ack; the peer's hints reach
        Transit; the bytes land under the final name only after all of
        them arrived; the ack carries their sha256."""
        self.answers.append("y")
        d = self.offer(self.file_offer())
        self.assertEqual(self.cfg.stdout.getvalue(), "ok? (Y/n): ")
        sent = self.sent()
        self.assertEqual(list(sent[0]), ["transit"])
        self.assertEqual(sent[1], {"answer": {"file_ack": "ok"}})
        self.assertIn(("transit.add_connection_hints",
                       [{"type": "relay-v1", "hints": [{"hostname": "r", "port": 1}]}]),
                      self.factory.log)
        pipe = self.transits.made[0].pipe
        pipe.feed(DATA[:1000])
        target = os.path.join(self.dir, "a.txt")
        self.assertFalse(os.path.exists(target))
        self.assertEqual(len(self.leftovers()), 1)
        pipe.feed(DATA[1000:])
        self.successResultOf(d)
        with open(target, "rb") as f:
            self.assertEqual(f.read(), DATA)
        self.assertEqual(json.loads(pipe.sent[-1]),
                         {"ack": "ok", "sha256": hashlib.sha256(DATA).hexdigest()})
        self.assertEqual(self.leftovers(), [])
        self.assertIn(f"Received file written to: {target}", self.cfg.stderr.getvalue())

    def test_closes_wormhole_before_transit(self):
        """File-transfer protocol, "Transit": after our hints and file_ack
        are sent, the wormhole is closed before Transit connects, so the
        server frees the nameplate and mailbox while the bytes flow; the
        file still arrives whole and the close at the end is the same
        close again."""
        d = self.offer(self.file_offer(), accept_file=True)
        log = self.factory.log
        self.assertLess(log.index(("w.close",)), log.index(("transit.connect",)))
        self.transits.made[0].pipe.feed(DATA)
        self.successResultOf(d)
        with open(os.path.join(self.dir, "a.txt"), "rb") as f:
            self.assertEqual(f.read(), DATA)
        self.assertEqual(log.count(("w.close",)), 2)

    def test_accept_file_does_not_ask(self):
        """--accept-file: no question, the transfer goes ahead."""
        d = self.offer(self.file_offer(), accept_file=True)
        self.assertEqual(self.cfg.stdout.getvalue(), "")
        self.transits.made[0].pipe.feed(DATA)
        self.successResultOf(d)

    def test_declined(self):
        """Answering n sends {"error": "transfer rejected"}, no Transit
        is made, nothing is written, exit with an error."""
        self.answers.append("n")
        d = self.offer(self.file_offer())
        self.assertEqual(self.sent(), [{"error": "transfer rejected"}])
        self.failureResultOf(d, TransferError)
        self.assertEqual(self.transits.made, [])
        self.assertEqual(os.listdir(self.dir), [])

    def test_never_overwrites(self):
        """An existing file of the offered name is refused, even with
        --accept-file, and left untouched."""
        target = os.path.join(self.dir, "a.txt")
        with open(target, "wb") as f:
            f.write(b"precious")
        d = self.offer(self.file_offer(), accept_file=True)
        f = self.failureResultOf(d, Refused)
        self.assertIn("refusing to overwrite existing 'a.txt'", str(f.value))
        self.assertEqual(self.sent(), [{"error": "transfer rejected"}])
        with open(target, "rb") as f:
            self.assertEqual(f.read(), b"precious")

    def test_never_overwrites_output_file(self):
        """-o naming an existing file is refused too."""
        target = os.path.join(self.dir, "other")
        with open(target, "wb") as f:
            f.write(b"precious")
        d = self.offer(self.file_offer(), accept_file=True, output_file="other")
        self.failureResultOf(d, Refused)
        with open(target, "rb") as f:
            self.assertEqual(f.read(), b"precious")

    def test_output_file_existing_directory(self):
        """-o naming an existing directory puts the file inside it, under
        the offered name (as the reference does)."""
        os.makedirs(os.path.join(self.dir, "inbox"))
        d = self.offer(self.file_offer(), accept_file=True, output_file="inbox")
        self.transits.made[0].pipe.feed(DATA)
        self.successResultOf(d)
        self.assertEqual(os.listdir(os.path.join(self.dir, "inbox")), ["a.txt"])

    def test_output_file(self):
        """-o puts the file under the given name."""
        d = self.offer(self.file_offer(), accept_file=True, output_file="renamed.bin")
        self.transits.made[0].pipe.feed(DATA)
        self.successResultOf(d)
        self.assertEqual(os.listdir(self.dir), ["renamed.bin"])

    def test_disk_full(self):
        """Less free space than the offer needs: refused before asking or
        connecting."""
        self.free = len(DATA) - 1
        d = self.offer(self.file_offer())
        f = self.failureResultOf(d, Refused)
        self.assertIn("not enough free space", str(f.value))
        self.assertEqual(self.cfg.stdout.getvalue(), "")
        self.assertEqual(self.sent(), [{"error": "transfer rejected"}])
        self.assertEqual(self.transits.made, [])

    def test_directory_room_counts_unpacked(self):
        """A directory needs room for the zipfile and its unpacked bytes."""
        self.free = 150
        d = self.offer({"directory": {"mode": "zipfile/deflated", "dirname": "d",
                                      "zipsize": 100, "numbytes": 100, "numfiles": 1}},
                       accept_file=True)
        self.failureResultOf(d, Refused)

    def test_climbing_name(self):
        """A filename with a path is refused (one name, as transfer-v2's
        rule: docs/security.md "Names"), nothing is made."""
        d = self.offer(self.file_offer(name="../../etc/evil"), accept_file=True)
        f = self.failureResultOf(d, Refused)
        self.assertIn("unusable name '../../etc/evil'", str(f.value))
        self.assertEqual(os.listdir(self.dir), [])

    def test_unusable_name(self):
        """A filename of '..' is refused."""
        d = self.offer(self.file_offer(name=".."), accept_file=True)
        self.failureResultOf(d, Refused)

    def test_interrupted(self):
        """The connection breaks mid-transfer: an error, and no file under
        the final name nor a temporary one."""
        d = self.offer(self.file_offer(), accept_file=True)
        pipe = self.transits.made[0].pipe
        pipe.feed(DATA[:500])
        pipe.lose()
        f = self.failureResultOf(d, TransferError)
        self.assertEqual(str(f.value), "the sender closed the connection after 500 Bytes "
                         "of 30.0 kB arrived")
        self.assertEqual(os.listdir(self.dir), [])

    def test_sender_stalls(self):
        """The sender stops sending mid-transfer: after --peer-timeout
        seconds without a record (each record restarts the count) the
        transfer fails with one line, the connection is closed, and no
        file is left."""
        d = self.offer(self.file_offer(), accept_file=True, peer_timeout=30.0)
        pipe = self.transits.made[0].pipe
        for _ in range(3):
            self.reactor.advance(29)
            pipe.feed(DATA[:100])
        self.reactor.advance(29.9)
        self.assertNoResult(d)
        self.reactor.advance(0.1)
        f = self.failureResultOf(d, TransferError)
        self.assertEqual(str(f.value), "gave up waiting for the sender's data: nothing "
                         "came for 30 seconds (--peer-timeout)")
        self.assertTrue(pipe.closed)
        self.assertEqual(os.listdir(self.dir), [])
        self.assertEqual(self.reactor.getDelayedCalls(), [])

    def test_ctrl_c_removes_partial(self):
        """Ctrl-C (reactor shutdown) mid-transfer removes the partial file."""
        self.offer(self.file_offer(), accept_file=True)
        self.transits.made[0].pipe.feed(DATA[:500])
        self.assertEqual(len(self.leftovers()), 1)
        self.reactor.shut_down()
        self.assertEqual(os.listdir(self.dir), [])

    def test_only_text(self):
        """--only-text refuses file offers."""
        d = self.offer(self.file_offer(), only_text=True)
        f = self.failureResultOf(d, Refused)
        self.assertIn("--only-text", str(f.value))
        self.assertEqual(self.sent(), [{"error": "transfer rejected"}])

    def test_directory(self):
        """A directory offer: the zipfile arrives, is unpacked into a
        temporary directory and renamed to the offered dirname."""
        z = zipped([("a.txt", b"A"), ("sub/b.txt", b"BB"), ("sub/é/ü", b"")])
        d = self.offer({"directory": {"mode": "zipfile/deflated", "dirname": "tree",
                                      "zipsize": len(z), "numbytes": 3, "numfiles": 3}},
                       accept_file=True)
        self.transits.made[0].pipe.feed(z)
        self.successResultOf(d)
        self.assertEqual(os.listdir(self.dir), ["tree"])
        with open(os.path.join(self.dir, "tree", "sub", "b.txt"), "rb") as f:
            self.assertEqual(f.read(), b"BB")
        self.assertTrue(os.path.exists(os.path.join(self.dir, "tree", "sub", "é", "ü")))

    def test_directory_zip_slip(self):
        """A zipfile with an entry climbing out ('../x') fails, writes
        nothing outside (nor inside), and sends no ack."""
        z = zipped([("ok.txt", b"A"), ("../escaped.txt", b"evil")])
        d = self.offer({"directory": {"mode": "zipfile/deflated", "dirname": "tree",
                                      "zipsize": len(z), "numbytes": 5, "numfiles": 2}},
                       accept_file=True)
        pipe = self.transits.made[0].pipe
        pipe.feed(z)
        f = self.failureResultOf(d, Refused)
        self.assertIn("..", str(f.value))
        self.assertEqual(os.listdir(self.dir), [])
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(self.dir),
                                                     "escaped.txt")))
        self.assertEqual(pipe.sent, [])

    def test_disk_fills_up_during_the_transfer(self):
        """A write failing with ENOSPC mid-transfer: the connection is
        closed, the error says why, and no file is left."""
        import errno

        from wormhole import _landing
        real_write = _landing.PartialFile.write

        def failing_write(partial, data):
            if partial.size + len(data) > 1000:
                raise OSError(errno.ENOSPC, "No space left on device")
            real_write(partial, data)
        self.patch(_landing.PartialFile, "write", failing_write)
        d = self.offer(self.file_offer(), accept_file=True)
        pipe = self.transits.made[0].pipe
        pipe.feed(DATA[:500])
        pipe.feed(DATA[500:2000])
        self.assertTrue(pipe.closed)
        pipe.lose()
        f = self.failureResultOf(d, TransferError)
        self.assertIn("No space left on device", str(f.value))
        self.assertEqual(os.listdir(self.dir), [])
