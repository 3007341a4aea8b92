"""transfer-v2 version negotiation
(Dilated File Transfer, "Version Negotiation"): highest common version,
classic fallback, modes that cannot work together."""
from twisted.trial import unittest

from wormhole.errors import TransferError
from wormhole.transfer_v2 import _versions as V


class Negotiate(unittest.TestCase):
    def test_app_versions(self):
        """Our app_versions entry carries mode and features."""
        self.assertEqual(V.app_versions("connect"),
                         {"transfer-v2": {"mode": "connect",
                                          "features": {"resume": {}, "empty-folders": {},
                                                       "session-totals": {},
                                                       "framed-records": {},
                                                       "file-modes": {},
                                                       "stream": {}}}})
        self.assertRaises(ValueError, V.app_versions, "both")

    def test_classic_peer(self):
        """No transfer-vN (reference 0.24, wormhole-william: empty
        app_versions) means the classic protocol."""
        for theirs in [{}, None, {"transfer": {}}, {"transfer-v1": {"mode": "send"}},
                       {"transfer-v02": {"mode": "send"}}, {"transfer-v3x": {}}]:
            self.assertRaises(V.PeerUsesClassic, V.negotiate, "receive", theirs)

    def test_highest_common_version(self):
        """Unknown higher versions are ignored; v2 is chosen."""
        n = V.negotiate("receive", {"transfer-v2": {"mode": "send", "features": {}},
                                    "transfer-v7": {"mode": "send"}})
        self.assertEqual(n.version, 2)
        self.assertEqual(n.their_mode, "send")

    def test_incompatible_modes(self):
        """Two receivers or two senders end the session."""
        self.assertRaises(V.IncompatibleModes, V.negotiate, "receive",
                          {"transfer-v2": {"mode": "receive", "features": {}}})
        self.assertRaises(V.IncompatibleModes, V.negotiate, "send",
                          {"transfer-v2": {"mode": "send", "features": {}}})
        self.assertRaises(TransferError,
                          V.negotiate, "send", {"transfer-v2": {"mode": "shout"}})

    def test_who_may_offer(self):
        """send offers, receive never; connect offers unless the peer only sends."""
        cases = [("send", "receive", True, False), ("send", "connect", True, False),
                 ("receive", "send", False, True), ("receive", "connect", False, True),
                 ("connect", "connect", True, True), ("connect", "send", False, True),
                 ("connect", "receive", True, False)]
        for ours, theirs, we, they in cases:
            n = V.negotiate(ours, {"transfer-v2": {"mode": theirs, "features": {}}})
            self.assertEqual((n.we_may_offer, n.they_may_offer), (we, they), (ours, theirs))

    def test_unknown_features(self):
        """Features we do not know are not shared; lists and dicts both read."""
        n = V.negotiate("receive", {"transfer-v2": {"mode": "send",
                                                    "features": {"thumbnails": {}}}})
        self.assertEqual(n.features, frozenset())
        n = V.negotiate("receive", {"transfer-v2": {"mode": "send",
                                                    "features": {"resume": {}}}})
        self.assertEqual(n.features, frozenset({"resume"}))
        n = V.negotiate("receive", {"transfer-v2": {"mode": "send", "features": ["x", "y"]}},
                        our_features={"y": {}})
        self.assertEqual(n.features, frozenset({"y"}))
