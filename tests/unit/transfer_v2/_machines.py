"""Support for the transfer-v2 machine tests: an OfferReceiver or an
OfferSender wired to neighbours made of plain callables (a recording
list, a lambda), each neighbour providing its interface (checked with
verifyObject by ``test_receiving.Interfaces``)."""
from zope.interface import implementer

from wormhole.transfer_v2 import _hashing
from wormhole.transfer_v2._interfaces import (
    IOfferChannel,
    IOfferReceiverDelegate,
    IOfferSenderDelegate,
)
from wormhole.transfer_v2._receiving import OfferReceiver
from wormhole.transfer_v2._sending import OfferSender


def _nothing(*args):
    return None


@implementer(IOfferChannel)
class Channel:
    def __init__(self, write, close):
        self.write = write
        self.close = close


@implementer(IOfferReceiverDelegate)
class ReceiverSide:
    def __init__(self, ask, progress, finished, accepted=None, file_started=None,
                 resumed=None):
        self.ask = ask
        self.progress = progress
        self.finished = finished
        self.accepted = accepted or _nothing
        self.file_started = file_started or _nothing
        self.resumed = resumed or _nothing


@implementer(IOfferSenderDelegate)
class SenderSide:
    def __init__(self, start_streaming, finished, check_resume=None):
        self.start_streaming = start_streaming
        self.finished = finished
        self.check_resume = check_resume or _nothing


def receiver(write, close, ask, progress, finished, accepted=None,
             run_hashing=_hashing.synchronous, file_started=None, resumed=None):
    """An OfferReceiver wired to these callables."""
    r = OfferReceiver(run_hashing)
    r.wire(Channel(write, close),
           ReceiverSide(ask, progress, finished, accepted, file_started, resumed))
    return r


def sender(offer, write, close, start_streaming, finished, check_resume=None):
    """An OfferSender wired to these callables (resumable with ``check_resume``)."""
    s = OfferSender(offer, resumable=check_resume is not None)
    s.wire(Channel(write, close), SenderSide(start_streaming, finished, check_resume))
    return s
