"""The CLI tests' fakes stand for the real API and cannot drift from it."""
import inspect

from twisted.trial import unittest
from zope.interface.verify import verifyObject

import wormhole
from wormhole._interfaces import IDeferredWormhole, IInputHelper

from .fakes import FakeFactory, FakeReactor


class Signatures(unittest.TestCase):

    def test_create_signature_matches(self):
        """Every public parameter of wormhole.create, in order and with the
        same defaults, is accepted by the fake (spec 004 5.4)."""
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
