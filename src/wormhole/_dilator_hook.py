"""The Boss's Dilation socket without Dilation (Dilation protocol).

The Boss always talks to an IDilator; without ``create(dilation=True)``
it is this one, which ignores the wormhole's events, so the Boss needs no
"is Dilation there?" flag. Its ``_manager`` is always ``None``, which is
how applications written for the reference tell that Dilation is off
(``w._boss._D._manager``, docs/api.md).
"""

from zope.interface import implementer

from ._interfaces import IDilator


class DilationNotEnabledError(ValueError, NotImplementedError):
    """dilate() on a wormhole made without ``dilation=True``. The
    reference raises NotImplementedError here, earlier versions of this
    library ValueError: both ``except`` clauses catch it."""


@implementer(IDilator)
class NullDilator:
    _manager = None

    def got_key(self, key):
        pass

    def got_wormhole_versions(self, their_versions):
        pass

    def received_dilate(self, plaintext):
        pass

    def dilate(self, transit_relay_location=None, no_listen=False, on_status_update=None,
               ping_interval=None, expected_subprotocols=None, listen_addresses=None,
               **limits):
        raise DilationNotEnabledError("dilate() needs wormhole.create(..., dilation=True)")

    def stop(self):
        pass
