"""What the handshake and the connection options settle (P2P-D6.2, 3.4,
3.5): p2pmesh._handshake, without a link."""

from twisted.trial.unittest import SynchronousTestCase

from p2pmesh import SubnetConfig
from p2pmesh._compression import NONE, ZLIB
from p2pmesh._config import ACK, NACK, OPT_COMPRESSION, OPT_PREFERRED, SET_CONNECTION_OPT
from p2pmesh._handshake import COMPRESS_THRESHOLD, Compression, is_option, subnet_matches


class Subnet(SynchronousTestCase):
    def test_same_values_and_types(self):
        """The seven values must be equal and of the same types: 20.0 or
        True for an int is another subnet."""
        subnet = SubnetConfig()
        setting = subnet.as_setting()
        self.assertTrue(subnet_matches(list(setting), subnet))
        self.assertFalse(subnet_matches([20.0] + setting[1:], subnet))
        self.assertFalse(subnet_matches(setting[:-1] + ["other"], subnet))

    def test_an_option_is_an_int_and_a_setting(self):
        self.assertTrue(is_option([2, []]))
        for bad in ([True, 1], [1], "x", [1, 2, 3], ["1", 2]):
            self.assertFalse(is_option(bad), bad)


class Methods(SynchronousTestCase):
    def test_agreed_method_compresses_large_bodies_only(self):
        """Before agreement, and for bodies up to 1 KiB, nothing is
        compressed; once the peer accepts ZLIB a large body is."""
        methods = Compression((ZLIB,))
        body = b"a" * (COMPRESS_THRESHOLD + 1)
        self.assertEqual(methods.choose(body), (NONE, body))
        self.assertEqual(methods.option(OPT_COMPRESSION, ZLIB),
                         (ACK, [SET_CONNECTION_OPT, OPT_COMPRESSION, ZLIB]))
        self.assertTrue(methods.accepts(ZLIB))
        self.assertEqual(methods.choose(body)[0], ZLIB)
        small = b"a" * COMPRESS_THRESHOLD
        self.assertEqual(methods.choose(small), (NONE, small))

    def test_unknown_method_and_preference_refused(self):
        """A method not in the local order, or a preference for one not
        agreed, gets NACK "unsupported"."""
        methods = Compression(())
        self.assertEqual(methods.option(OPT_COMPRESSION, ZLIB)[0], NACK)
        self.assertEqual(methods.option(OPT_PREFERRED, ZLIB),
                         (NACK, [SET_CONNECTION_OPT, OPT_PREFERRED, ZLIB, "unsupported"]))
        self.assertFalse(methods.accepts(ZLIB))
        self.assertTrue(methods.accepts(NONE))
