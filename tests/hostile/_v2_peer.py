"""A hostile transfer-v2 peer built on our library: a real
wormhole (our Mailbox server, Dilation over 127.0.0.1) whose session it
runs by hand, at the level of subchannels, so that nothing our own
``TransferSession`` checks stands in its way:

- its control subchannels carry nothing; closing ours ends the victim's
  session (docs/transfer-v2.md "Subchannels");
- ``offer()`` opens an offer subchannel (``RawOffer``) on which it writes
  hand-made records, or raw bytes, and reads the victim's records;
- as the receiving side, every offer subchannel the victim opens is a
  ``RawOffer`` too (``offers`` fires with each).

Records are framed by their length when the victim declared
"framed-records" (``_framing``: our own code frames them, the hostile
part is what they say). Everything it writes is bounded by the test.
"""
import itertools
import os

from twisted.internet import defer, reactor
from twisted.internet.protocol import Factory, Protocol
from twisted.trial import unittest

from wormhole import create
from wormhole import transfer_v2 as T
from wormhole.transfer_v2 import _framing, _versions
from wormhole.transfer_v2 import _messages as M
from wormhole_mailbox.testing import start_mailbox_server

from ..unit.hostile._outside import Outside
from ._victim import Victim, assert_memory_bounded, assert_one_error_line

APPID = "lothar.com/wormhole/text-or-file-xfer"
_codes = itertools.count(1)
WRONG_HASH = b"\x00" * 32


class RawOffer(Protocol):
    """One offer subchannel, either way. ``send(record)`` writes an
    ``M`` record (or a record's raw bytes: kind and payload) framed as
    negotiated; ``send_raw(data)`` writes bytes exactly as given.
    ``next_record()`` fires with the victim's next record (an ``M``
    record); ``lost`` fires when the subchannel closes."""

    def __init__(self, framed):
        self._framed = framed
        self._deframer = _framing.Deframer() if framed else None
        self._records = []
        self._waiting = []
        self.opened = defer.Deferred()
        self.lost = defer.Deferred()
        self.reading = True

    def connectionMade(self):
        self.opened.callback(self)

    def dataReceived(self, data):
        raws = self._deframer.feed(data) if self._framed else [data]
        for raw in raws:
            self._records.append(M.parse_record(raw))
        while self._waiting and self._records:
            self._waiting.pop(0).callback(self._records.pop(0))

    def next_record(self):
        if self._records:
            return defer.succeed(self._records.pop(0))
        d = defer.Deferred()
        self._waiting.append(d)
        return d

    def send(self, record):
        raw = record if isinstance(record, bytes) else M.encode_record(record)
        self.send_raw(_framing.frame(raw) if self._framed else raw)

    def send_raw(self, data):
        self.transport.write(data)

    @defer.inlineCallbacks
    def acknowledge_wrongly(self):
        """As the receiving side, once the offer came: accept, take the
        data, answer the sender's FileAcknowledge with a wrong hash
        (zeros); fires once the subchannel closed."""
        self.send(M.OfferAccept())
        while True:
            record = yield self.next_record()
            if isinstance(record, M.FileAcknowledge):
                break
        self.send(M.FileAcknowledge(record.bytes, WRONG_HASH))
        yield self.lost

    def stop_reading(self):
        """Take nothing more from the victim (Dilation's flow control
        then stops its writes)."""
        self.reading = False
        self.transport.pauseProducing()

    def close(self):
        self.transport.loseConnection()

    def connectionLost(self, reason=None):
        for d in self._waiting:
            d.errback(ConnectionError("the offer subchannel closed"))
        self._waiting = []
        self.lost.callback(None)


class HostileV2Peer:
    """The hostile end of a transfer-v2 session in ``mode`` ("send",
    "receive" or "connect") with the victim that uses ``code``."""

    def __init__(self, testcase, url, code, mode):
        self.mode = mode
        self.w = create(APPID, url, reactor, dilation=True, versions=T.app_versions(mode))
        testcase.addCleanup(lambda: self.w.close().addErrback(lambda f: None))
        self.w.set_code(code)
        self.framed = None
        self._dilated = None
        self._control = None
        self._offers = defer.DeferredQueue()

    @defer.inlineCallbacks
    def start(self):
        """Dilate and open the control subchannels: the victim's session opens."""
        versions = yield self.w.get_versions()
        negotiated = _versions.negotiate(self.mode, versions)
        self.framed = _versions.FRAMED_RECORDS in negotiated.features
        self._dilated = self.w.dilate(_listen_addresses=["127.0.0.1"])
        self._dilated.listener_for(T.CONTROL_SUBPROTOCOL).listen(Factory.forProtocol(Protocol))
        self._dilated.listener_for(T.OFFER_SUBPROTOCOL).listen(
            Factory.forProtocol(self._theirs))
        self._control = yield self._dilated.connector_for(T.CONTROL_SUBPROTOCOL).connect(
            Factory.forProtocol(Protocol))

    def _theirs(self):
        offer = RawOffer(self.framed)
        offer.opened.addCallback(self._offers.put)
        return offer

    def offer(self):
        """Open an offer subchannel: fires with its RawOffer."""
        factory = Factory.forProtocol(lambda: RawOffer(self.framed))
        return self._dilated.connector_for(T.OFFER_SUBPROTOCOL).connect(factory)

    def next_offer(self):
        """The next offer subchannel the victim opens (a RawOffer)."""
        return self._offers.get()

    def end_session(self):
        """Close our control subchannel: the session is over for the victim."""
        self._control.transport.loseConnection()


def first_of(*ds):
    """Fires with the result of whichever of ``ds`` fires first."""
    return defer.DeferredList(list(ds), fireOnOneCallback=True,
                              consumeErrors=True).addCallback(lambda r: r[0])


def digest(data):
    h = M.new_hash()
    h.update(data)
    return h.digest()


def plant_links(folder, base, outside):
    """A symbolic link at every fixed hidden name the receiver uses for an
    offer called ``base`` (``_landing.kept_name`` with each of
    ``_resumable.KEPT_SUFFIXES``: tests/hostile/test_planted_links proves
    there are no others), pointing outside (an existing file, and a name
    that does not exist yet, in turn). Returns their paths."""
    from wormhole import _landing
    from wormhole.transfer_v2 import _resumable
    planted = []
    targets = outside.targets()
    for i, suffix in enumerate(_resumable.KEPT_SUFFIXES):
        path = os.path.join(folder, _landing.kept_name(base, suffix))
        os.symlink(targets[i % len(targets)], path)
        planted.append(path)
    return planted


class V2PeerCase(unittest.TestCase):
    """The hostile transfer-v2 tests' frame: our Mailbox server in this
    reactor, a folder outside the victim's that nothing may change, the
    victim (a real ``wormhole`` process, ``_victim``) and its hostile peer.
    Every victim is bounded in time (``timeout``, and ``--peer-timeout``)
    and memory (``assert_memory_bounded``); every peer writes a bounded
    number of bytes, chosen by the test."""

    timeout = 90
    PEER_TIMEOUT = 5

    @defer.inlineCallbacks
    def setUp(self):
        self.srv = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(self.srv.stop)
        self.outside = Outside(self)

    def pair(self, command, peer_mode, *args, base="f", again=None):
        """The victim running ``command`` (its links planted, for a
        receiving command, at every hidden name of an offer called
        ``base``) and its hostile peer in ``peer_mode``."""
        code = f"{next(_codes)}-hostile-v2"
        victim = Victim.spawn(self, self.srv.url, code, *args, command=command,
                              peer_timeout=self.PEER_TIMEOUT, again=again)
        if again is None:
            self.planted = []
        if command != "send" and again is None:
            self.planted = plant_links(victim.out, base, self.outside)
        return HostileV2Peer(self, self.srv.url, code, peer_mode), victim

    def assert_outside_untouched(self, victim, *made):
        """Nothing outside the victim's folder changed (no write through
        a planted link), and in it only the planted links (still links,
        or removed) and ``made`` (relative to the folder)."""
        self.assertEqual(self.outside.snapshot(), self.outside.before, victim.describe())
        inbox = os.path.basename(victim.out)
        found = set(victim.created()) - {inbox}
        links = {os.path.relpath(p, victim.base) for p in self.planted}
        for path in found & links:
            self.assertTrue(os.path.islink(os.path.join(victim.base, path)), path)
        made = {os.path.join(inbox, m) for m in made}
        self.assertEqual({p for p in found - links
                          if not any(p.startswith(m + os.sep) for m in made)}, made,
                         victim.describe())

    def assert_error(self, victim, words, status=1):
        """The victim's one ``ERROR:`` line holds ``words``; its exit
        status; a clean terminal; bounded memory."""
        line = assert_one_error_line(self, victim, words, status)
        assert_memory_bounded(self, victim)
        return line
