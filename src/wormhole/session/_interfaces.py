"""The two things an application gives a ``Transfer`` (docs/api.md
"Sessions"): an observer that is told everything, and a policy that
decides about the peer's offers."""
from zope.interface import Interface


class ITransferObserver(Interface):
    def event(event):
        """One of ``wormhole.session``'s events (``ProtocolChosen``,
        ``OfferArrived``, ``Progress``, ...). An exception it raises is
        logged and never reaches the transfer."""


class IReceivePolicy(Interface):
    def decide(offer):
        """``offer``: the ``OfferArrived`` the observer was just given (it
        passed the receiving rules). Return True to accept, False to
        decline, or a Deferred firing with either."""


class IStreamPolicy(IReceivePolicy):
    """A policy that takes streams too (the "stream" feature,
    docs/transfer-v2.md "Streams"): ``decide`` is asked about an
    ``OfferArrived`` of kind "stream" (no size, no target) as about any
    offer; a policy without this interface has every stream refused."""

    def consumer_for(offer):
        """The ``IConsumer`` an accepted stream ``offer`` (its
        ``OfferArrived``) is written to, as it comes; its pauses pace the
        sender."""
