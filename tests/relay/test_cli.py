"""The reference ``wormhole`` CLI (0.24) sends a file through our relay:
with ``--no-listen`` on both sides there are no direct hints, so the
whole transfer (Transit handshake, records, the ack) crosses the relay.
The Mailbox server is ours, in-process; everything is on 127.0.0.1."""

import hashlib
import os

from twisted.internet import reactor
from twisted.internet.defer import gatherResults, inlineCallbacks
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial import unittest

from wormhole_relay.testing import start_transit_relay

from ._subprocess import reference_venv


class ReferenceCLI(unittest.TestCase):
    timeout = 180

    @inlineCallbacks
    def test_file_through_our_relay(self):
        """A 3 MB file goes from the reference sender to the reference
        receiver through our relay, unchanged; the relay writes one happy
        record that counts at least the file's bytes."""
        from wormhole_mailbox.testing import start_mailbox_server
        wormhole = os.path.join(reference_venv(), "bin", "wormhole")
        if not os.path.exists(wormhole):
            self.fail(f"no reference CLI at {wormhole}: run ./dev test")
        mailbox = yield start_mailbox_server(reactor)
        self.addCleanup(mailbox.stop)
        relay = yield start_transit_relay(reactor)
        self.addCleanup(relay.stop)

        base = os.path.abspath(self.mktemp())
        os.makedirs(os.path.join(base, "in"))
        os.makedirs(os.path.join(base, "out"))
        data = os.urandom(3 * 1000 * 1000)
        src = os.path.join(base, "in", "payload.bin")
        with open(src, "wb") as f:
            f.write(data)
        dst = os.path.join(base, "out", "payload.bin")
        common = ["--relay-url", mailbox.url, "--transit-helper", relay.hint]
        code = "7-guitarist-revenge"
        env = {"PATH": os.environ.get("PATH", ""), "HOME": base,
               "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        send = getProcessOutputAndValue(
            wormhole, common + ["send", "--no-listen", "--hide-progress",
                                "--code", code, src],
            env=env, path=base)
        receive = getProcessOutputAndValue(
            wormhole, common + ["receive", "--no-listen", "--hide-progress",
                                "--accept-file", "-o", dst, code],
            env=env, path=base)
        (s_out, s_err, s_code), (r_out, r_err, r_code) = \
            yield gatherResults([send, receive])
        self.assertEqual((s_code, r_code), (0, 0),
                         (s_out, s_err, r_out, r_err))
        with open(dst, "rb") as f:
            got = f.read()
        self.assertEqual(hashlib.sha256(got).hexdigest(),
                         hashlib.sha256(data).hexdigest())
        records = yield relay.when_mood("happy")
        happy = [r for r in records if r["mood"] == "happy"]
        self.assertEqual(len(happy), 1)
        self.assertGreater(happy[0]["total_bytes"], len(data))
