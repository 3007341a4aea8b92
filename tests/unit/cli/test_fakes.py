"""The CLI tests' fakes stand for the real API and cannot drift from it."""
import inspect

from twisted.trial import unittest
from zope.interface.verify import verifyObject

import wormhole
from wormhole._interfaces import IDeferredWormhole, IInputHelper

from ...cli.fakes import FakeFactory, FakeReactor


class Signatures(unittest.TestCase):

    def test_create_signature_matches(self):
        """Every public parameter of wormhole.create, in order and with the
        same defaults, is accepted by the fake (Client API, "Wormhole
        Parameters")."""
        real = [p for p in inspect.signature(wormhole.create).parameters.values()
                if not p.name.startswith("_")]
        fake = list(inspect.signature(FakeFactory().create).parameters.values())
        self.assertEqual([(p.name, p.default) for p in real],
                         [(p.name, p.default) for p in fake])

    def test_fake_wormhole_provides_interface(self):
        """The fake wormhole and its helper provide the real interfaces."""
        f = FakeFactory()
        w = f.create("appid", "ws://x/v1", FakeReactor())
        verifyObject(IDeferredWormhole, w)
        verifyObject(IInputHelper, w.input_code())

    def test_fake_transit_matches(self):
        """The fake Transit has the real Transit's methods
        (Transit protocol, "API") with the same parameters, and the
        positional/keyword arguments the CLI passes; its pipe provides the
        real IRecordPipe."""
        from wormhole.transit import IRecordPipe, TransitReceiver, TransitSender

        from ...cli.fakes import FakeTransit, FakeTransits
        for name in ("get_connection_abilities", "get_connection_hints",
                     "add_connection_hints", "set_transit_key", "connect"):
            for real in (TransitSender, TransitReceiver):
                self.assertEqual(
                    list(inspect.signature(getattr(real, name)).parameters),
                    list(inspect.signature(getattr(FakeTransit, name)).parameters), name)
        real_init = inspect.signature(TransitSender.__init__).parameters
        fake_init = inspect.signature(FakeTransits.__call__).parameters
        for p in ("no_listen", "reactor", "timing"):
            self.assertIn(p, real_init)
            self.assertIn(p, fake_init)
        verifyObject(IRecordPipe, FakeTransits([])("tcp:r:1").pipe)
