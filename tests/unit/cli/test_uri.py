"""The wormhole-transfer: URI (wormhole.cli._uri; URI scheme)."""
from hypothesis import given
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole.cli import _uri
from wormhole.cli.public_relay import RENDEZVOUS_RELAY


class TransferURI(unittest.TestCase):

    def test_default_server_is_the_bare_code(self):
        """On the public Mailbox server the URI is the code alone, as the
        spec's first example."""
        self.assertEqual(_uri.transfer_uri("4-hurricane-equipment", RENDEZVOUS_RELAY),
                         "wormhole-transfer:4-hurricane-equipment")

    def test_other_server_names_its_rendezvous(self):
        """Another server goes in rendezvous=, without its /v1 endpoint,
        percent-encoded as in the spec's expanded example."""
        uri = _uri.transfer_uri("4-a-b", "ws://127.0.0.1:4000/v1")
        self.assertEqual(uri, "wormhole-transfer:4-a-b?rendezvous=ws%3A%2F%2F127.0.0.1%3A4000")
        self.assertEqual(_uri.parse_transfer_uri(uri),
                         _uri.TransferURI("4-a-b", "ws://127.0.0.1:4000/v1"))

    def test_expanded_example(self):
        """The spec's expanded example parses to the code on the public
        server, role follower."""
        u = _uri.parse_transfer_uri(
            "wormhole-transfer:4-hurricane-equipment?version=0&rendezvous="
            "ws%3A%2F%2Frelay.magic-wormhole.io%3A4000&role=follower")
        self.assertEqual(u, _uri.TransferURI("4-hurricane-equipment", RENDEZVOUS_RELAY,
                                             "follower"))

    def test_leader_role_is_parsed(self):
        """role=leader is understood (the receive command refuses it)."""
        self.assertEqual(_uri.parse_transfer_uri("wormhole-transfer:4-x?role=leader").role,
                         "leader")

    def test_rejections(self):
        """Unknown fields, versions and roles, a repeated field, a
        missing code and a non-WebSocket rendezvous are refused, saying
        which."""
        for uri, words in [
                ("wormhole-transfer:4-x?colour=red", "unknown field 'colour'"),
                ("wormhole-transfer:4-x?version=1", "unsupported URI version '1'"),
                ("wormhole-transfer:4-x?role=boss", "unknown role 'boss'"),
                ("wormhole-transfer:4-x?role=leader&role=leader", "appears twice"),
                ("wormhole-transfer:?version=0", "no code"),
                ("wormhole-transfer:4-x?rendezvous=http%3A%2F%2Fh", "not a ws://"),
                ("https://example.com/4-x", "not a wormhole-transfer: URI")]:
            e = self.assertRaises(_uri.URIError, _uri.parse_transfer_uri, uri)
            self.assertIn(words, str(e))

    @given(st.text(min_size=1), st.sampled_from(
        [RENDEZVOUS_RELAY, "ws://127.0.0.1:4000/v1", "wss://example.org/x/v1"]))
    def test_round_trip(self, code, relay_url):
        """Any code (spaces, '?', '%', '#', controls, non-ASCII) and server
        survive transfer_uri -> parse_transfer_uri."""
        u = _uri.parse_transfer_uri(_uri.transfer_uri(code, relay_url))
        self.assertEqual(u.code, code)
        self.assertEqual(u.relay_url, None if relay_url == RENDEZVOUS_RELAY else relay_url)
