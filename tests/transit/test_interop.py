"""Our Transit against the reference 0.24 Transit, on the wire.

The reference peer runs in its own venv (tests/transit/ref_transit.py) with
``no_listen``: it would otherwise listen on and advertise every interface,
and these tests touch 127.0.0.1 only. So the reference always dials: our
listener (direct) or the relay (relay-only runs).
"""

import os

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole.transit import TransitReceiver, TransitSender

from ._support import LOOPBACK, ReferenceTransit, start_reference_relay

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
        d_ours = ours.connect()
        yield theirs.connect(our_hints, key)
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
    def test_reference_closes_we_see_it(self):
        """When the reference closes its pipe, our pending receive_record
        fails instead of hanging."""
        pipe, theirs = yield self._exchange(TransitSender, "receiver")
        d = pipe.receive_record()
        yield theirs.close()
        yield self.assertFailure(d, Exception)
