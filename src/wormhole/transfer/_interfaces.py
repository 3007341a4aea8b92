"""Interfaces of the classic protocol's machines (File-transfer
protocol)."""
from zope.interface import Interface


class IOfferSender(Interface):
    """The sending side of any transfer: text, file or directory
    (File-transfer protocol, "Sender")."""

    def send_offer(offer, transit=None):
        """Send our ``transit`` message (files and directories), then
        ``{"offer": offer}``."""

    def reject_verification():
        """The human said the verifiers differ: tell the peer, give up."""

    def got_message(body):
        """A (decrypted) message body arrived from the peer."""


class IReceiver(Interface):
    """The receiving side of any transfer: text, file or directory
    (File-transfer protocol, "Recipient")."""

    def got_message(body):
        """A (decrypted) message body arrived from the peer."""

    def accept():
        """The file or directory offered may come: answer ``file_ack``."""

    def decline(reason):
        """We will not take the offer: tell the peer, give up."""
