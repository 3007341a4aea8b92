"""An offer restricted to the features both peers declared
(Dilated File Transfer, "Version Negotiation": a peer sends no attribute
of a feature the other did not declare, and an attribute of a feature we
did not declare is ignored, like any unknown key). Pure functions of the
offer and the ``Negotiated`` value."""
import attr

from . import _messages as M
from . import _source


def incoming(offer, negotiated):
    """The peer's offer as we take it: its empty folders only with
    "empty-folders", its modes only with "file-modes"."""
    if isinstance(offer, M.StreamOffer):
        return offer  # nothing of another feature on it
    if (isinstance(offer, M.DirectoryOffer) and offer.folders
            and not negotiated.empty_folders):
        offer = attr.evolve(offer, folders=())
    if not negotiated.file_modes:
        offer = attr.evolve(offer, **({"mode": None} if isinstance(offer, M.FileOffer)
                                      else {"folder_modes": ()}))
    return offer


def outgoing(prepared, negotiated):
    """Our prepared offer (an ``Outgoing``) as the peer may be sent it."""
    if isinstance(prepared.offer, M.StreamOffer):
        return prepared  # only ever made for a peer with "stream"
    if not negotiated.empty_folders:
        prepared = _source.without_folders(prepared)
    if not negotiated.file_modes:
        prepared = _source.without_modes(prepared)
    return prepared
