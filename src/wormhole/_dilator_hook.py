"""The Boss's Dilation socket, empty until Dilation lands (spec 000).

The Boss always talks to an IDilator; without Dilation it is this one,
which ignores everything, so the Boss needs no "is Dilation there?" flag.
"""

from zope.interface import implementer

from ._interfaces import IDilator


@implementer(IDilator)
class NullDilator:
    def got_key(self, key):
        pass

    def got_wormhole_versions(self, their_versions):
        pass

    def received_dilate(self, plaintext):
        pass
