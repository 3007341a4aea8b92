"""Our receiving CLI against a sender scripted in the test (our library's
wormhole and TransitSender, on our servers) that misbehaves: it breaks the
connection halfway, or sends a zipfile whose entries climb out of the
target. The receiver exits 1 and leaves nothing: no file under the final
name, no temporary file, nothing outside the target."""
import io
import json
import os
import zipfile

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole import create
from wormhole.transit import TransitSender

from . import _support as s

APPID = "lothar.com/wormhole/text-or-file-xfer"


class HostileSender(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def setUp(self):
        self.servers = yield s.Servers.start(self)
        self.base = os.path.abspath(self.mktemp())
        self.out = os.path.join(self.base, "inbox")
        os.makedirs(self.out)

    @defer.inlineCallbacks
    def scripted_send(self, code, offer, payload, upto, hang_up=True):
        """Offer ``offer``; once accepted, send ``payload[:upto]`` over
        Transit and hang up (or return the open pipe)."""
        w = create(APPID, self.servers.url, reactor)
        self.addCleanup(lambda: w.close().addErrback(lambda f: None))
        w.set_code(code)
        t = TransitSender(self.servers.transit, reactor=reactor,
                          listen_addresses=["127.0.0.1"])
        hints = yield t.get_connection_hints()
        w.send_message(json.dumps({"transit": {
            "abilities-v1": t.get_connection_abilities(), "hints-v1": hints}}).encode())
        w.send_message(json.dumps({"offer": offer}).encode())
        while True:
            msg = json.loads((yield w.get_message()))
            if "transit" in msg:
                t.add_connection_hints(msg["transit"].get("hints-v1", []))
            if "answer" in msg:
                break
        self.assertEqual(msg["answer"], {"file_ack": "ok"})
        t.set_transit_key(w.derive_key(APPID + "/transit-key", 32))
        pipe = yield t.connect()
        if upto:
            pipe.send_record(payload[:upto])
        if not hang_up:
            self.addCleanup(pipe.close)
            return pipe
        yield pipe.close()

    def receiver(self, code):
        return s.spawn(self, s.our_argv(self.servers, "receive", "--accept-file",
                                        "--hide-progress", code),
                       "receiver", env=s.OUR_ENV, cwd=self.out)

    @defer.inlineCallbacks
    def test_connection_broken_halfway(self):
        """Half the announced bytes, then the sender hangs up: exit 1, an
        error saying the sender closed the connection and how much came,
        no file at all in the target directory."""
        data = os.urandom(200000)
        recv = self.receiver("21-broken-halfway")
        yield self.scripted_send("21-broken-halfway",
                                 {"file": {"filename": "half.bin", "filesize": len(data)}},
                                 data, len(data) // 2)
        yield recv.ended
        self.assertEqual(recv.status, 1, recv.describe())
        self.assertIn(b"the sender closed the connection after 100.0 kB of 200.0 kB "
                      b"arrived", recv.stderr)
        self.assertNotIn(b"Traceback", recv.stderr)
        self.assertEqual(os.listdir(self.out), [])

    @defer.inlineCallbacks
    def test_ctrl_c_mid_transfer(self):
        """Ctrl-C (SIGINT) while bytes are arriving: the receiver stops and
        removes its temporary file; nothing is left in the directory."""
        from twisted.internet.task import deferLater
        data = os.urandom(300000)
        recv = self.receiver("24-ctrl-c")
        yield self.scripted_send("24-ctrl-c",
                                 {"file": {"filename": "big.bin", "filesize": len(data)}},
                                 data, 100000, hang_up=False)
        # wait (no time limit but the test's) until the partial file holds
        # what was sent: the transfer is then certainly under way
        while not any(os.path.getsize(os.path.join(self.out, n)) >= 100000
                      for n in os.listdir(self.out)):
            yield deferLater(reactor, 0.05, lambda: None)
        self.assertFalse(os.path.exists(os.path.join(self.out, "big.bin")))
        recv.transport.signalProcess("INT")
        yield recv.ended
        self.assertNotIn(b"Traceback", recv.stderr)
        self.assertEqual(os.listdir(self.out), [])

    @defer.inlineCallbacks
    def test_zip_slip(self):
        """A directory whose zipfile has an entry '../../escaped.txt':
        refused, nothing unpacked anywhere, no directory left behind."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("fine.txt", b"ok")
            zf.writestr("../../escaped.txt", b"gotcha")
        z = buf.getvalue()
        recv = self.receiver("22-zip-slip")
        yield self.scripted_send("22-zip-slip",
                                 {"directory": {"mode": "zipfile/deflated", "dirname": "d",
                                                "zipsize": len(z), "numbytes": 8,
                                                "numfiles": 2}},
                                 z, len(z))
        yield recv.ended
        self.assertEqual(recv.status, 1, recv.describe())
        self.assertIn(b"climbs out of the target", recv.stderr)
        self.assertNotIn(b"Traceback", recv.stderr)
        self.assertEqual(os.listdir(self.out), [])
        self.assertEqual(os.listdir(self.base), ["inbox"])
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(self.base),
                                                     "escaped.txt")))

    @defer.inlineCallbacks
    def test_zip_bigger_than_announced(self):
        """A zipfile that unpacks to more than the offer's numbytes is
        refused before anything is written."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("bomb.bin", b"\x00" * 5_000_000)
        z = buf.getvalue()
        recv = self.receiver("23-zip-bomb")
        yield self.scripted_send("23-zip-bomb",
                                 {"directory": {"mode": "zipfile/deflated", "dirname": "d",
                                                "zipsize": len(z), "numbytes": 1000,
                                                "numfiles": 1}},
                                 z, len(z))
        yield recv.ended
        self.assertEqual(recv.status, 1, recv.describe())
        self.assertIn(b"more than the 1000", recv.stderr)
        self.assertEqual(os.listdir(self.out), [])
