"""Which addresses Transit listens on and advertises (Transit protocol)."""

import ipaddress

from twisted.trial import unittest

from wormhole._transit import _addresses


class Addresses(unittest.TestCase):
    def test_argument_wins(self):
        """listen_addresses beats the environment variable."""
        self.assertEqual(_addresses.configured_addresses(
            ["127.0.0.1"], environ={_addresses.ADDRESSES_ENV: "10.0.0.1"}), ["127.0.0.1"])

    def test_environment(self):
        """WORMHOLE_TRANSIT_ADDRESSES is a comma-separated list."""
        self.assertEqual(_addresses.configured_addresses(
            None, environ={_addresses.ADDRESSES_ENV: " 127.0.0.1, ::1 "}), ["127.0.0.1", "::1"])

    def test_unrestricted(self):
        """No argument and no variable: None, meaning every address."""
        self.assertIsNone(_addresses.configured_addresses(None, environ={}))
        self.assertIsNone(_addresses.configured_addresses(
            None, environ={_addresses.ADDRESSES_ENV: "  "}))

    def test_invalid(self):
        """Names, empty lists and a bare string are refused with a reason."""
        self.assertRaises(ValueError, _addresses.configured_addresses, ["localhost"], environ={})
        self.assertRaises(ValueError, _addresses.configured_addresses, [], environ={})
        self.assertRaises(TypeError, _addresses.configured_addresses, "127.0.0.1", environ={})
        self.assertRaises(ValueError, _addresses.configured_addresses, None,
                          environ={_addresses.ADDRESSES_ENV: "nope"})

    def test_discover(self):
        """Discovery returns IPv4 addresses, loopback only when alone
        (nothing is bound or advertised by this test)."""
        found = _addresses.discover_addresses()
        self.assertTrue(found)
        for a in found:
            ipaddress.IPv4Address(a)
        if found != ["127.0.0.1"]:
            self.assertFalse([a for a in found if a.startswith("127.")])
