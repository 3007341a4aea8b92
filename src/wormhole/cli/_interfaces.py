"""Interfaces of the CLI's protocol machines (the text part of the
file-transfer protocol, spec 004 chapter 9)."""
from zope.interface import Interface


class ITextSender(Interface):
    """The sending side of a text transfer (spec 004 9.1)."""

    def send_offer(text):
        """Send ``{"offer": {"message": text}}`` to the peer."""

    def reject_verification():
        """The human said the verifiers differ: tell the peer, give up."""

    def got_message(body):
        """A (decrypted) message body arrived from the peer."""


class ITextReceiver(Interface):
    """The receiving side of a text transfer (spec 004 9.2)."""

    def got_message(body):
        """A (decrypted) message body arrived from the peer."""
