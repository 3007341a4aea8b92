"""The Dilation limits an application may tune as keyword options of
``w.dilate()`` (our additions, docs/api.md "Dilation"; what each bounds is
in docs/security.md "Dilation"): wired at construction into L4 and L5,
defaults equal to the module constants, bad values refused at dilate()."""

import io

from twisted.internet.task import Clock
from twisted.trial import unittest

import wormhole
from wormhole._dilation._inbound import DEFAULT_MAX_BACKLOG, DEFAULT_MAX_PEER_SUBCHANNELS
from wormhole._dilation._outbound import DEFAULT_MAX_UNACKED
from wormhole._dilation._subchannel import CLOSE_TIMEOUT
from wormhole._dilator_hook import DilationNotEnabledError

from ...client.fakes import FakeServer

APPID = "example.com/test"
URL = "ws://127.0.0.1:1/v1"


class DilateOptions(unittest.TestCase):
    def create(self, **kwargs):
        self.clock = Clock()
        server = FakeServer(self.clock)
        w = wormhole.create(APPID, URL, self.clock, stderr=io.StringIO(),
                            _endpoint_factory=server.endpoint_factory, **kwargs)
        return w

    def limits(self, w):
        d = w._boss._D
        # L4 inbound ACKs late on the wormhole's clock (a window smaller
        # than ACK_EVERY still gets its ACK)
        self.assertIs(d._inbound._clock, self.clock)
        return (d._inbound._max_peer_subchannels, d._inbound._max_refused_opens,
                d._inbound._max_backlog, d._outbound._max_unacked,
                d._registry._close_timeout)

    def test_defaults_are_the_module_limits(self):
        """Without the options, dilate() builds L4 and L5 with today's
        limits: 1024 subchannels (and refused OPENs), 4 MiB waiting for a
        listener, 16 MiB unacknowledged, 300 s for an answer to CLOSE."""
        w = self.create(dilation=True)
        w.dilate()
        self.assertEqual(self.limits(w), (DEFAULT_MAX_PEER_SUBCHANNELS,
                                          DEFAULT_MAX_PEER_SUBCHANNELS,
                                          DEFAULT_MAX_BACKLOG, DEFAULT_MAX_UNACKED,
                                          CLOSE_TIMEOUT))
        self.assertEqual(self.limits(w), (1024, 1024, 4 * 1024 * 1024, 16 * 1024 * 1024, 300.0))

    def test_options_reach_the_layers(self):
        """Each option is the value the layer it bounds was built with; the
        registry's clock is the wormhole's reactor."""
        w = self.create(dilation=True)
        w.dilate(max_peer_subchannels=10, max_backlog=1000, max_unacked=5 * 2 ** 20,
                 close_timeout=7.5)
        self.assertEqual(self.limits(w), (10, 10, 1000, 5 * 2 ** 20, 7.5))
        self.assertIs(w._boss._D._registry._clock, self.clock)

    def test_bad_values_refused(self):
        """Zero, negative, booleans and strings are refused with ValueError
        naming the option; an unknown option is a TypeError."""
        for name in ("max_peer_subchannels", "max_backlog", "max_unacked", "close_timeout"):
            for bad in (0, -1, True, "5"):
                w = self.create(dilation=True)
                with self.assertRaises(ValueError) as cm:
                    w.dilate(**{name: bad})
                self.assertEqual(str(cm.exception),
                                 f"{name} must be a positive number, not {bad!r}")
        self.assertRaises(ValueError, self.create(dilation=True).dilate, max_backlog=1.5)

        self.assertRaises(TypeError, self.create(dilation=True).dilate, max_frames=3)

    def test_without_dilation(self):
        """Without create(dilation=True) the options change nothing: dilate()
        still says Dilation is not enabled."""
        w = self.create()
        self.assertRaises(DilationNotEnabledError, w.dilate, close_timeout=5)

    def test_max_phases_reaches_the_mailbox(self):
        """create(_max_phases=) is the Mailbox machine's bound on the peer's
        phases it remembers (docs/security.md "Mailbox client")."""
        self.assertEqual(self.create()._boss._M._max_processed, 100_000)
        self.assertEqual(self.create(_max_phases=7)._boss._M._max_processed, 7)
