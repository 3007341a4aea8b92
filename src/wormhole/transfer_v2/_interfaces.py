"""The zope Interfaces of transfer-v2's parts (docs/transfer-v2.md
"Modules"): what a machine is given at wiring time, so that a swapped or
incomplete neighbour fails at once (tests ``verifyObject`` each one),
and what an accepted offer is written to.

An optional ability is an interface of its own, asked with
``providedBy``, never found by probing attributes: a sink that can keep
an interrupted transfer for a later session provides ``IResumableSink``.
"""
from zope.interface import Attribute, Interface


class IWriter(Interface):
    """One file of an accepted offer, being received."""

    expected = Attribute("the bytes its header announced")
    received = Attribute("the bytes it holds so far (a resumed file starts above 0)")

    def write(data):
        """Add ``data`` (hashed on the way in); OSError when the disk fails."""

    def digest():
        """The BLAKE2b-32 of everything it holds (the FileAcknowledge hash)."""

    def commit():
        """Both acknowledgements matched: keep it (its final name, or its
        place in the offer's folder); OSError or Refused when it cannot."""

    def abort():
        """Delete what it holds."""

    def suspend():
        """The offer ended early: keep what it holds when a later session
        can continue it, else delete it."""


class ISink(Interface):
    """Where an accepted offer is written (``_sink.sink_for``)."""

    final_path = Attribute("where the offer is once complete")

    def open_file(path, header):
        """The IWriter for the offer's file at ``path`` (segments) whose
        header (a FileOffer) says its size; Refused or OSError when it
        cannot be written."""

    def complete():
        """The offer's last file was kept: put the offer in place."""

    def abort():
        """Delete everything the offer made."""

    def suspend():
        """The offer ended early (lost, cancelled): keep what a later
        session can continue, delete the rest."""


class IResumableSink(ISink):
    """A sink that keeps an interrupted offer for a later session (the
    "resume" feature, docs/transfer-v2.md "Resume")."""

    resume = Attribute("after check_kept: the Held to ask the sender for the rest, or None")
    discarded = Attribute("why what an earlier session left was discarded, or None")
    kept_bytes = Attribute("the bytes of whole files kept from an earlier session")

    def check_kept(cancelled):
        """Check (hash) what an earlier session left; sets ``resume`` and
        ``discarded``. Slow: run it away from the reactor (``_hashing``)."""

    def open_resumed(header):
        """The IWriter for the file the sender's answer to our resume
        request (a FileOffer header) begins with."""


class ISessionDelegate(Interface):
    """What the session machine (``_session``) makes happen around it."""

    def start_dilation(negotiated):
        """transfer-v2 was agreed: dilate, listen, open our control channel."""

    def opened(negotiated):
        """Both control channels can be used."""

    def start_failed(error):
        """The session will not open (classic peer, incompatible, closed early)."""

    def cancel_offers(reason):
        """End every offer under way, saying ``reason``."""

    def close_control():
        """Close our control channel (we are done)."""

    def closed(reason):
        """The session is over."""


class ISession(Interface):
    """The session machine."""

    def got_versions(their_app_versions):
        """The peer's app_versions."""

    def control_connected():
        """Our control channel is open."""

    def connect_failed(error):
        """Dilation or our control channel could not be had."""

    def their_control_closed():
        """The peer closed its control channel."""

    def our_control_closed():
        """Ours closed."""

    def peer_unreachable(seconds):
        """Dilation has had no connection to the peer for ``seconds``."""

    def close():
        """End the session."""


class IOfferChannel(Interface):
    """One offer subchannel, as a machine writes to it."""

    def write(record):
        """Send one encoded record."""

    def close():
        """Close the subchannel."""


class IOfferReceiverDelegate(Interface):
    """What the receiving side of one offer tells its application."""

    def ask(offer):
        """The peer offers ``offer``: the answer comes back as the
        machine's ``accept(sink)`` or ``reject(reason)``."""

    def accepted():
        """Our answer (accept) went out: the wait for the data begins."""

    def progress(nbytes):
        """``nbytes`` more of the offer were received."""

    def file_started(path, size, offset):
        """A file of a directory offer begins (its first ``offset`` bytes held)."""

    def resumed(nbytes):
        """The bytes of the offer we hold and will not receive again."""

    def finished(result):
        """The offer is over: Received, Rejected, or an exception."""


class IOfferReceiver(Interface):
    """The machine of one offer the peer makes (``_receiving``)."""

    def got_record(raw):
        """One record from the offer subchannel."""

    def bad_bytes(error):
        """The subchannel's bytes do not make records (the framed-records
        feature, ``_framing``): a protocol error, as a bad record."""

    def accept(sink):
        """The application accepts into ``sink`` (an ISink)."""

    def reject(reason):
        """The application refuses, saying ``reason`` to the peer."""

    def lost():
        """The subchannel closed."""

    def cancel(reason):
        """Give up the offer, saying ``reason`` to the peer."""


class IOfferSenderDelegate(Interface):
    """What the offering side of one offer is given."""

    def start_streaming(resume):
        """Accepted: start sending the data (from ``resume``, or whole
        when None); returns the streamer."""

    def check_resume(accept):
        """A Deferred of the resume point for the receiver's ``accept``
        (an OfferAccept that asks to resume)."""

    def finished(result):
        """The offer is over: an OfferResult or an exception."""


class IOfferSender(Interface):
    """The machine of one offer we make (``_sending``)."""

    def connected():
        """The subchannel is open: send the offer."""

    def got_record(raw):
        """One record from the offer subchannel."""

    def bad_bytes(error):
        """The subchannel's bytes do not make records (the framed-records
        feature, ``_framing``): a protocol error, as a bad record."""

    def file_sent(size, digest):
        """The streamer sent one file's data (its size and BLAKE2b)."""

    def all_sent():
        """The streamer sent everything."""

    def source_failed(error):
        """Reading what we offer failed."""

    def input_failed(error):
        """A stream's input failed or ended early: the receiver hears why."""

    def lost():
        """The subchannel closed."""

    def cancel(reason):
        """Give up the offer, saying ``reason`` to the peer."""
