"""The rule of the forwarder that orders wormhole-william's transit
handshakes (``_ww_gate.Hold``), without sockets."""
from twisted.trial import unittest

from ._ww_gate import Hold

HEADER = b"transit receiver 00 ready\n\n"


class HoldRule(unittest.TestCase):
    def setUp(self):
        self.delivered = []
        self.hold = Hold(self.delivered.append)

    def test_ok_passes_the_rest_waits_for_the_client(self):
        """ok\\n reaches the client at once; the partner's handshake in the
        same chunk waits until the client has spoken, then goes first,
        and later bytes go straight through."""
        self.hold.from_relay(b"ok\n" + HEADER)
        self.assertEqual(self.delivered, [b"ok\n"])
        self.hold.from_relay(b"go\n")
        self.assertEqual(self.delivered, [b"ok\n"])
        self.hold.from_client()
        self.assertEqual(self.delivered, [b"ok\n", HEADER, b"go\n"])
        self.hold.from_relay(b"records")
        self.assertEqual(self.delivered[-1], b"records")

    def test_ok_in_pieces(self):
        """ok\\n split over reads still passes whole before anything is
        held."""
        self.hold.from_relay(b"o")
        self.hold.from_relay(b"k\n" + HEADER)
        self.assertEqual(b"".join(self.delivered), b"ok\n")

    def test_speaking_before_ok_does_not_count(self):
        """Bytes the client sent before ok\\n (its relay handshake) do not
        release anything."""
        self.hold.from_client()
        self.hold.from_relay(b"ok\n" + HEADER)
        self.assertEqual(self.delivered, [b"ok\n"])

    def test_release_when_the_relay_closes(self):
        """When the relay closes, what is held is delivered (before the end
        of file is passed on)."""
        self.hold.from_relay(b"ok\n" + HEADER)
        self.hold.release()
        self.assertEqual(self.delivered, [b"ok\n", HEADER])
