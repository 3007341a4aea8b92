"""Our Transit against the reference 0.24 Transit, on the wire.

The reference peer runs in its own venv (tests/transit/ref_transit.py) with
``no_listen``: it would otherwise listen on and advertise every interface,
and these tests touch 127.0.0.1 only. So the reference always dials: our
listener (direct) or the relay (relay-only runs).
"""

import json
import os
import shutil

from twisted.internet import defer, reactor
from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial import unittest

from wormhole.transit import TransitReceiver, TransitSender

from ._support import (
    LOOPBACK,
    REPO_ROOT,
    ReferenceTransit,
    start_reference_relay,
    start_relay,
)

TIMEOUT = 60


class Interop(unittest.TestCase):
    timeout = TIMEOUT

    @defer.inlineCallbacks
    def _exchange(self, our_cls, their_role, relay=None, our_no_listen=False):
        key = os.urandom(32)
        ours = our_cls(relay, no_listen=our_no_listen, reactor=reactor,
                       listen_addresses=LOOPBACK)
        theirs = yield ReferenceTransit.start(self, their_role, relay=relay)
        our_hints = yield ours.get_connection_hints()
        ours.add_connection_hints(theirs.hints)
        ours.set_transit_key(key)
        yield theirs.start_connecting(our_hints, key)
        d_ours = ours.connect()
        yield theirs.connected()
        pipe = yield d_ours
        self.addCleanup(pipe.close)
        # records both ways, several in a row, including empty and large
        out = [b"first record", b"", os.urandom(200000), b"last"]
        for r in out:
            pipe.send_record(r)
        got = yield theirs.receive_records(len(out))
        self.assertEqual(got, out)
        back = [b"from the reference", os.urandom(70000)]
        for r in back:
            theirs.send_record(r)
        for r in back:
            self.assertEqual((yield pipe.receive_record()), r)
        return pipe, theirs

    @defer.inlineCallbacks
    def test_we_send_direct(self):
        """Our TransitSender and the reference TransitReceiver connect
        directly (it dials our 127.0.0.1 hint) and trade records both ways."""
        pipe, theirs = yield self._exchange(TransitSender, "receiver")
        self.assertTrue(pipe.describe().startswith("<-tcp:127.0.0.1:"), pipe.describe())
        yield theirs.close()

    @defer.inlineCallbacks
    def test_we_receive_direct(self):
        """Our TransitReceiver and the reference TransitSender, direct."""
        pipe, theirs = yield self._exchange(TransitReceiver, "sender")
        self.assertTrue(pipe.describe().startswith("<-tcp:127.0.0.1:"), pipe.describe())
        yield theirs.close()

    @defer.inlineCallbacks
    def test_we_send_via_reference_relay(self):
        """Relay only (nobody listens): our sender and the reference
        receiver meet on the reference relay 0.5 (token and side lines)."""
        relay = yield start_reference_relay(self)
        pipe, theirs = yield self._exchange(TransitSender, "receiver", relay=relay,
                                            our_no_listen=True)
        self.assertTrue(pipe.describe().startswith("->relay:tcp:127.0.0.1:"), pipe.describe())
        yield theirs.close()

    @defer.inlineCallbacks
    def test_we_receive_via_reference_relay(self):
        """Relay only: our receiver and the reference sender on its relay."""
        relay = yield start_reference_relay(self)
        pipe, theirs = yield self._exchange(TransitReceiver, "sender", relay=relay,
                                            our_no_listen=True)
        self.assertTrue(pipe.describe().startswith("->relay:tcp:127.0.0.1:"), pipe.describe())
        yield theirs.close()

    @defer.inlineCallbacks
    def test_we_send_via_our_relay(self):
        """Relay only, on our relay: our sender, the reference receiver."""
        relay = yield start_relay(self)
        pipe, theirs = yield self._exchange(TransitSender, "receiver", relay=relay,
                                            our_no_listen=True)
        self.assertTrue(pipe.describe().startswith("->relay:tcp:127.0.0.1:"), pipe.describe())
        yield theirs.close()

    @defer.inlineCallbacks
    def test_we_receive_via_our_relay(self):
        """Relay only, on our relay: our receiver, the reference sender."""
        relay = yield start_relay(self)
        pipe, theirs = yield self._exchange(TransitReceiver, "sender", relay=relay,
                                            our_no_listen=True)
        self.assertTrue(pipe.describe().startswith("->relay:tcp:127.0.0.1:"), pipe.describe())
        yield theirs.close()

    @defer.inlineCallbacks
    def test_reference_closes_we_see_it(self):
        """When the reference closes its pipe, our pending receive_record
        fails instead of hanging."""
        pipe, theirs = yield self._exchange(TransitSender, "receiver")
        d = pipe.receive_record()
        yield theirs.close()
        yield self.assertFailure(d, Exception)


class InteropListeningReference(unittest.TestCase):
    """The reference listens and advertises its addresses; we dial them."""

    timeout = TIMEOUT

    @defer.inlineCallbacks
    def _in_namespace(self, our_role):
        unshare = shutil.which("unshare")
        ip = shutil.which("ip")
        # a failure, not a skip: without a namespace this path goes untested
        self.assertTrue(unshare and ip, "needs unshare(1) and ip(8), and root, "
                        "to run the listening reference in a loopback-only namespace")
        script = (f"ip link set lo up && {os.path.join(REPO_ROOT, '.venv', 'bin', 'python')} "
                  f"-m tests.transit.netns_peer {our_role}")
        out, err, code = yield getProcessOutputAndValue(
            unshare, ["-n", "--", "sh", "-c", script], path=REPO_ROOT,
            env=dict(os.environ), reactor=reactor)
        self.assertEqual(code, 0, err.decode(errors="replace"))
        result = json.loads(out.decode().strip().splitlines()[-1])
        self.assertTrue(result["ok"], result.get("error"))
        # in a loopback-only namespace the reference advertises 127.0.0.1
        self.assertEqual({h["hostname"] for h in result["their_hints"]}, {"127.0.0.1"})
        self.assertTrue(result["describe"].startswith("->tcp:127.0.0.1:"), result)

    def test_we_send_to_listening_reference(self):
        """Our sender dials the reference receiver's advertised hint; it
        accepts our handshake and go, records flow both ways."""
        return self._in_namespace("sender")

    def test_we_receive_from_listening_reference(self):
        """Our receiver dials the reference sender, which sends us go."""
        return self._in_namespace("receiver")
