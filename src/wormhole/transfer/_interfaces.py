"""Interfaces of the classic file-transfer protocol's machines (spec 004
chapter 9)."""
from zope.interface import Interface


class IOfferSender(Interface):
    """The sending side of any transfer: text, file or directory
    (spec 004 9.1)."""

    def send_offer(offer, transit=None):
        """Send our ``transit`` message (files and directories), then
        ``{"offer": offer}``."""

    def reject_verification():
        """The human said the verifiers differ: tell the peer, give up."""

    def got_message(body):
        """A (decrypted) message body arrived from the peer."""


class IReceiver(Interface):
    """The receiving side of any transfer: text, file or directory
    (spec 004 9.2)."""

    def got_message(body):
        """A (decrypted) message body arrived from the peer."""

    def accept():
        """The file or directory offered may come: answer ``file_ack``."""

    def decline(reason):
        """We will not take the offer: tell the peer, give up."""
