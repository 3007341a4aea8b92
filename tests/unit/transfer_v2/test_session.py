"""The session machine (transfer_v2._session) with recording fakes:
negotiation outcomes, opening, closing by either side, close before open."""
from twisted.internet import defer, task
from twisted.trial import unittest
from zope.interface import implementer
from zope.interface.verify import verifyObject

from wormhole.errors import TransferError
from wormhole.transfer_v2 import _api
from wormhole.transfer_v2._interfaces import ISession, ISessionDelegate
from wormhole.transfer_v2._session import Session
from wormhole.transfer_v2._versions import IncompatibleModes, PeerUsesClassic


def v2(mode, features=None):
    return {"transfer-v2": {"mode": mode, "features": features or {}}}


@implementer(ISessionDelegate)
class Recording:
    """The session's neighbour, recording what it is told to do."""

    def __init__(self, events):
        self.events = events

    def start_dilation(self, negotiated):
        self.events.append(("dilate", negotiated.their_mode))

    def opened(self, negotiated):
        self.events.append("opened")

    def start_failed(self, error):
        self.events.append(("failed", error))

    def cancel_offers(self, reason):
        self.events.append(("cancel", reason))

    def close_control(self):
        self.events.append("close")

    def closed(self, reason):
        self.events.append("closed")


class SessionMachine(unittest.TestCase):
    def setUp(self, mode="connect"):
        self.events = []
        self.s = Session(mode)
        self.s.wire(Recording(self.events))

    def test_interfaces(self):
        """The machine and its neighbour provide their interfaces; the
        TransferSession wires its own side, which does too."""
        self.assertTrue(verifyObject(ISession, self.s))
        self.assertTrue(verifyObject(ISessionDelegate, Recording([])))
        session = _api.TransferSession(task.Clock(), None, "connect")
        self.assertTrue(verifyObject(ISessionDelegate, session._session_side()))
        self.assertRaises(TypeError, Session("connect").wire, object())

    def test_open_and_close(self):
        """transfer-v2 peer: dilate, open when our control is up; close()
        cancels offers, closes our control, and is closed when it is."""
        self.s.got_versions(v2("receive"))
        self.s.control_connected()
        self.assertEqual(self.events, [("dilate", "receive"), "opened"])
        self.s.close()
        self.assertEqual(self.events[2:], [("cancel", "the session was closed"), "close"])
        self.s.our_control_closed()
        self.assertEqual(self.events[4:], ["closed"])

    def test_peer_closes(self):
        """Their control closing: offers cancelled, ours closed, then closed."""
        self.s.got_versions(v2("connect"))
        self.s.control_connected()
        self.s.their_control_closed()
        self.assertEqual(self.events[2:], [("cancel", "the peer ended the session"), "close"])
        self.s.our_control_closed()
        self.s.close()
        self.assertEqual(self.events[4:], ["closed"])

    def test_classic_and_incompatible(self):
        """No transfer-v2: start fails with PeerUsesClassic (no dilation);
        both receive: IncompatibleModes; unknown features are not an error."""
        self.s.got_versions({})
        self.assertIsInstance(self.events[0][1], PeerUsesClassic)
        self.setUp("receive")
        self.s.got_versions(v2("receive"))
        self.assertIsInstance(self.events[0][1], IncompatibleModes)
        self.setUp("receive")
        self.s.got_versions(v2("send", {"compression-zstd": {"level": 3}}))
        self.assertEqual(self.events, [("dilate", "send")])

    def test_close_before_open(self):
        """close() while connecting: closed at once, start fails, and our
        control is closed when it comes up."""
        self.s.got_versions(v2("connect"))
        self.s.close()
        self.assertEqual([e if isinstance(e, str) else e[0] for e in self.events],
                         ["dilate", "cancel", "failed", "closed"])
        self.s.control_connected()
        self.assertEqual(self.events[-1], "close")
        self.s.our_control_closed()

    def test_versions_after_close(self):
        """Closed before the peer's versions came (the wormhole's
        get_versions() fires later): whatever they say changes nothing.
        Found while auditing the refusals (docs/state-machines/refusals.md):
        ``_got_transfer_v2``/``_got_classic`` in ``S4_closed`` raised
        NoTransition inside the versions Deferred, an unhandled error."""
        for versions in (v2("receive"), {"transfer-v2": "nonsense"}, {}):
            s, events = Session("send"), []
            s.wire(Recording(events))
            s.close()
            s.got_versions(versions)
            self.assertEqual([e if isinstance(e, str) else e[0] for e in events],
                             ["failed", "closed"])

    def test_a_second_start_is_refused(self):
        """``TransferSession.start()`` twice: the second raises TransferError
        saying so, and the first goes on (the peer's versions reach the
        machine once). Found while auditing the refusals
        (docs/state-machines/refusals.md): the second start's versions came
        to ``_got_transfer_v2`` in ``S1_connecting``, a NoTransition."""
        versions = defer.Deferred()

        class Wormhole:
            asked = 0

            def get_versions(self):
                self.asked += 1
                return versions

            def dilate(self, **kwargs):
                return defer.Deferred()

        w = Wormhole()
        session = _api.TransferSession(task.Clock(), w, "connect")
        opened = session.start()
        with self.assertRaises(TransferError) as e:
            session.start()
        self.assertIn("started already", str(e.exception))
        self.assertEqual(w.asked, 1)
        self.assertFalse(opened.called)
        session.close()
        versions.callback({})
        self.assertFalse(self.flushLoggedErrors())

    def test_peer_unreachable(self):
        """peer_unreachable while open: offers cancelled, closed without
        waiting for our control channel; while connecting: start fails too."""
        self.s.got_versions(v2("connect"))
        self.s.control_connected()
        self.s.peer_unreachable(60)
        self.assertEqual(self.events[2:], [("cancel", "the peer has been unreachable for 60 s"),
                                           "closed"])
        self.s.our_control_closed()
        self.setUp()
        self.s.got_versions(v2("connect"))
        self.s.peer_unreachable(5)
        self.assertEqual([e if isinstance(e, str) else e[0] for e in self.events],
                         ["dilate", "cancel", "failed", "closed"])

    def test_wormhole_failed(self):
        """The wormhole failing before versions: start fails, closed."""
        self.s.connect_failed(ValueError("wrong code"))
        self.assertEqual(self.events[1:], ["closed"])
        self.assertIsInstance(self.events[0][1], ValueError)
