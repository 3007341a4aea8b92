"""The library's whole-transfer API (``wormhole.session.Transfer``,
docs/api.md "Sessions") with no CLI of ours: nothing here imports
``wormhole.cli``. Our Mailbox server (and Transit relay) on 127.0.0.1;
the reference 0.24 as a subprocess stopped by PID in cleanup; every
wormhole closed at the end. ``Streams``: the "stream" feature
(docs/transfer-v2.md "Streams"): a Twisted application pipes a
process's output to a peer (``Transfer.send(stream=...)``, the process
transport as the push producer; the child is ours, waited for) and the
receiving ``Transfer``'s ``IStreamPolicy`` gives the consumer; a peer
without the feature and a policy that takes no streams refuse it."""
import hashlib
import os

from twisted.internet import defer, protocol, reactor
from twisted.internet.task import deferLater
from twisted.trial import unittest
from zope.interface import implementer

import wormhole
from wormhole import session as S
from wormhole import transfer_v2 as T
from wormhole.errors import NoPath, TransferError
from wormhole.util import dict_to_bytes

from .._ourmailbox import OurMailboxTestCase
from .._processes import free_port as closed_port  # bound, then released
from ..files import _support as files
from ..transfer_v2._support import _Attempts
from ..transit._support import HashingConsumer

APPID = "lothar.com/wormhole/text-or-file-xfer"  # the reference's commands use it
LOCAL = {"_listen_addresses": ["127.0.0.1"]}
# the bounds the library promises (docs/api.md "Sessions")
NO_PATH_WITHIN = 10.0
PEER_ERROR_WITHIN = 2.0


@implementer(S.ITransferObserver)
class Recorder:
    def __init__(self):
        self.events = []
        self._waiting = []  # (kind, Deferred)

    def event(self, event):
        self.events.append(event)
        for kind, d in list(self._waiting):
            if isinstance(event, kind):
                self._waiting.remove((kind, d))
                d.callback(event)

    def when(self, kind):
        """Fires with the first event of ``kind`` (at once if it came)."""
        seen = self.of(kind)
        if seen:
            return defer.succeed(seen[0])
        d = defer.Deferred()
        self._waiting.append((kind, d))
        return d

    def of(self, kind):
        return [e for e in self.events if isinstance(e, kind)]


@implementer(S.IReceivePolicy)
class Asked:
    """Records each question; answers ``answer`` a turn later (a Deferred)."""

    def __init__(self, answer=True):
        self.asked = []
        self._answer = answer

    def decide(self, offer):
        self.asked.append(offer)
        return deferLater(reactor, 0, lambda: self._answer)


def write(path, nbytes):
    with open(path, "wb") as f:
        f.write(os.urandom(nbytes))
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


class _Pair(OurMailboxTestCase):
    timeout = 60

    @defer.inlineCallbacks
    def pair(self, url=None):
        w1 = wormhole.create(APPID, url or self.srv.url, reactor, **S.wormhole_options("send"))
        w2 = wormhole.create(APPID, url or self.srv.url, reactor,
                             **S.wormhole_options("receive"))
        self.close_later(w1, w2)
        w1.allocate_code()
        code = yield w1.get_code()
        w2.set_code(code)
        return w1, w2

    def folder(self):
        path = os.path.abspath(self.mktemp())
        os.makedirs(path)
        return path


class Library(_Pair):
    @defer.inlineCallbacks
    def test_no_path_names_the_leg(self):
        """The relay cannot be reached and neither side listens: both
        transfers fail in seconds with the relay named, not after the
        60 s a transfer-v2 session waits for a peer."""
        relay = f"tcp:127.0.0.1:{closed_port()}"
        src = write(os.path.join(self.folder(), "f"), 1000)
        w1, w2 = yield self.pair()
        seen1, seen2 = Recorder(), Recorder()
        sending = S.Transfer(reactor, w1, APPID, seen1, transit_helper=relay,
                             listen=False).send([src])
        receiving = S.Transfer(reactor, w2, APPID, seen2, folder=self.folder(),
                               transit_helper=relay, listen=False).receive()
        for d, seen in ((sending, seen1), (receiving, seen2)):
            d.addTimeout(NO_PATH_WITHIN, reactor)
            e = yield self.assertFailure(d, NoPath)
            self.assertEqual(e.leg, "relay")
            [failed] = seen.of(S.Failed)
            self.assertEqual((failed.kind, failed.leg), ("no-path", "relay"))
            self.assertIn(f"the Transit relay {relay} cannot be reached", failed.message)

    @defer.inlineCallbacks
    def test_peers_ctrl_c_ends_the_session(self):
        """The sender's session is open when it stops on purpose and says
        so in the mailbox (as our CLI does on Ctrl-C): the receiving
        transfer ends at once with the sender's words."""
        w1, w2 = yield self.pair()
        seen = Recorder()
        receiving = S.Transfer(reactor, w2, APPID, seen, folder=self.folder(),
                               dilate_kwargs=LOCAL).receive()
        opened = seen.when(S.ProtocolChosen)
        sender = T.TransferSession(reactor, w1, "send", dilate_kwargs=LOCAL)
        yield sender.start()
        yield opened  # the receiver's session is open too
        w1.send_message(dict_to_bytes({"error": "transfer cancelled (Ctrl-C)"}))
        receiving.addTimeout(PEER_ERROR_WITHIN, reactor)
        e = yield self.assertFailure(receiving, TransferError)
        self.assertEqual(str(e), "the sender cancelled the transfer (Ctrl-C)")
        self.assertEqual(seen.of(S.Failed),
                         [S.Failed("peer-error", "the sender cancelled the transfer (Ctrl-C)")])
        self.assertEqual(seen.of(S.ProtocolChosen), [S.ProtocolChosen("transfer-v2")])

    @defer.inlineCallbacks
    def test_existing_target_refused_before_the_policy(self):
        """A file whose name exists in the target folder is refused by the
        receiving rules before the policy is asked; the sender is told why."""
        src = write(os.path.join(self.folder(), "taken"), 500)
        dst = self.folder()
        with open(os.path.join(dst, "taken"), "wb") as f:
            f.write(b"mine")
        w1, w2 = yield self.pair()
        seen1, seen2, policy = Recorder(), Recorder(), Asked()
        sending = S.Transfer(reactor, w1, APPID, seen1, dilate_kwargs=LOCAL).send([src])
        receiving = S.Transfer(reactor, w2, APPID, seen2, policy, folder=dst,
                               dilate_kwargs=LOCAL).receive()
        e = yield self.assertFailure(sending, wormhole.transfer.Declined)
        self.assertEqual(str(e), "the receiver declined: refusing to overwrite existing 'taken'")
        refused = yield self.assertFailure(receiving, wormhole.transfer.Declined)
        self.assertEqual(str(refused), "refusing to overwrite existing 'taken'")
        self.assertEqual(policy.asked, [])
        self.assertEqual(seen2.of(S.OfferArrived), [])
        self.assertEqual(seen2.of(S.OfferRefused),
                         [S.OfferRefused("taken", "refusing to overwrite existing 'taken'",
                                         "rules")])
        self.assertEqual(seen1.of(S.Failed)[0].kind, "declined")
        self.assertEqual(read(os.path.join(dst, "taken")), b"mine")

    @defer.inlineCallbacks
    def test_files_arrive_after_the_policy_said_yes(self):
        """Two files and a text; the policy answers with a Deferred; each
        question says where the data goes; every byte arrives."""
        src = self.folder()
        a, b = write(os.path.join(src, "a"), 3000), write(os.path.join(src, "b"), 70000)
        dst = self.folder()
        w1, w2 = yield self.pair()
        seen1, seen2, policy = Recorder(), Recorder(), Asked()
        sending = S.Transfer(reactor, w1, APPID, seen1, dilate_kwargs=LOCAL).send(
            [a, b], text="hello")
        receiving = S.Transfer(reactor, w2, APPID, seen2, policy, folder=dst,
                               dilate_kwargs=LOCAL).receive()
        sent = yield sending
        got = yield receiving
        self.assertEqual([(e.name, e.size) for e in sent], [("a", 3000), ("b", 70000)])
        self.assertEqual(sorted(e.name for e in got), ["a", "b"])
        self.assertEqual([(o.name, o.target) for o in policy.asked],
                         [("a", os.path.join(dst, "a")), ("b", os.path.join(dst, "b"))])
        self.assertEqual(seen2.of(S.TextReceived), [S.TextReceived("hello")])
        for name in ("a", "b"):
            self.assertEqual(read(os.path.join(dst, name)), read(os.path.join(src, name)))
        self.assertEqual(seen2.events[-1], S.Finished())
        # how the bytes went (a direct connection here), and the totals
        # the sender said before its first offer
        for seen in (seen1, seen2):
            [connected] = seen.of(S.Connected)
            self.assertRegex(connected.via, r"^(->|<-)tcp:127\.0\.0\.1:\d+$")
        self.assertEqual(seen2.of(S.Totals), [S.Totals(2, 73000)])
        self.assertEqual(seen1.of(S.Progress)[-1], S.Progress("b", 70000, 70000))

    @defer.inlineCallbacks
    def test_directory_files_said_both_ways(self):
        """A directory offer: each of its files begins with a FileStarted
        event on both sides, named by the offer and its path inside."""
        src = self.folder()
        tree = os.path.join(src, "tree")
        os.makedirs(os.path.join(tree, "sub"))
        write(os.path.join(tree, "one"), 100)
        write(os.path.join(tree, "sub", "two"), 200)
        dst = self.folder()
        w1, w2 = yield self.pair()
        seen1, seen2 = Recorder(), Recorder()
        sending = S.Transfer(reactor, w1, APPID, seen1, dilate_kwargs=LOCAL).send([tree])
        receiving = S.Transfer(reactor, w2, APPID, seen2, folder=dst,
                               dilate_kwargs=LOCAL).receive()
        yield sending
        yield receiving
        for seen in (seen1, seen2):
            self.assertEqual(sorted((e.offer, e.path, e.size) for e in seen.of(S.FileStarted)),
                             [("tree", "one", 100, ), ("tree", "sub/two", 200)])
        self.assertEqual(read(os.path.join(dst, "tree", "sub", "two")),
                         read(os.path.join(tree, "sub", "two")))


class Sharing(_Pair):
    @defer.inlineCallbacks
    def share_pair(self):
        w1 = wormhole.create(APPID, self.srv.url, reactor, **S.share_options())
        w2 = wormhole.create(APPID, self.srv.url, reactor, **S.share_options())
        self.close_later(w1, w2)
        w1.allocate_code()
        w2.set_code((yield w1.get_code()))
        return w1, w2

    @defer.inlineCallbacks
    def test_both_ways_and_an_offer_added(self):
        """Two Shares: each offers a file given to run(), one adds a
        second offer while it runs, the other's policy declines nothing;
        after end() on both every file is where its folder says, and
        each side's result lists what it sent and received."""
        here, there = self.folder(), self.folder()
        one = write(os.path.join(here, "one"), 5000)
        two = write(os.path.join(there, "two"), 80000)
        three = write(os.path.join(there, "three"), 100)
        inbox_1, inbox_2 = self.folder(), self.folder()
        w1, w2 = yield self.share_pair()
        seen1, seen2, policy = Recorder(), Recorder(), Asked()
        first = S.Share(reactor, w1, APPID, seen1, policy, folder=inbox_1, dilate_kwargs=LOCAL)
        second = S.Share(reactor, w2, APPID, seen2, folder=inbox_2, dilate_kwargs=LOCAL)
        ran1, ran2 = first.run([one]), second.run([two])
        yield second.when_open()
        added = yield second.offer(three)
        self.assertEqual(added, S.Sent("three", 100))
        yield seen2.when(S.Received)
        first.end()
        second.end()
        results1 = yield ran1
        results2 = yield ran2
        self.assertEqual(sorted((type(e).__name__, e.name) for e in results1),
                         [("Received", "three"), ("Received", "two"), ("Sent", "one")])
        self.assertEqual(sorted((type(e).__name__, e.name) for e in results2),
                         [("Received", "one"), ("Sent", "three"), ("Sent", "two")])
        self.assertEqual(sorted(o.name for o in policy.asked), ["three", "two"])
        self.assertEqual(read(os.path.join(inbox_2, "one")), read(one))
        for name, src in (("two", two), ("three", three)):
            self.assertEqual(read(os.path.join(inbox_1, name)), read(src))
        self.assertEqual((seen1.events[-1], seen2.events[-1]), (S.Finished(), S.Finished()))

    @defer.inlineCallbacks
    def test_declined_offer(self):
        """The peer's policy declines our offer: OfferFailed says so, the
        session goes on to the end, and both runs fail as declined."""
        here = self.folder()
        one = write(os.path.join(here, "one"), 5000)
        w1, w2 = yield self.share_pair()
        seen1, seen2 = Recorder(), Recorder()
        first = S.Share(reactor, w1, APPID, seen1, folder=self.folder(), dilate_kwargs=LOCAL)
        second = S.Share(reactor, w2, APPID, seen2, Asked(False), folder=self.folder(),
                         dilate_kwargs=LOCAL)
        ran1, ran2 = first.run([one]), second.run()
        offered = first.offer(one)  # a second time: declined too
        yield self.assertFailure(offered, wormhole.transfer.Declined)
        first.end()
        second.end()
        yield self.assertFailure(ran1, wormhole.transfer.Declined)
        yield self.assertFailure(ran2, wormhole.transfer.Declined)
        self.assertEqual([(e.name, e.kind) for e in seen1.of(S.OfferFailed)],
                         [("one", "declined"), ("one", "declined")])
        self.assertEqual(seen1.of(S.Failed)[0].kind, "declined")

    @defer.inlineCallbacks
    def test_waiting_offers_are_bounded(self):
        """Offers made before the session opens wait; one more than the
        bound fails at once with OfferFailed, and those within it stay."""
        from wormhole.session import _share  # the bound, made small
        self.patch(_share, "MAX_WAITING_OFFERS", 3)
        w1, w2 = yield self.share_pair()
        seen = Recorder()
        share = S.Share(reactor, w1, APPID, seen, folder=self.folder(), dilate_kwargs=LOCAL)
        path = write(os.path.join(self.folder(), "f"), 10)
        waiting = [share.offer(path) for _ in range(4)]  # the first one runs: 3 wait
        over = share.offer(path)
        e = yield self.assertFailure(over, TransferError)
        self.assertIn("3 offers wait already", str(e))
        self.assertEqual([f.kind for f in seen.of(S.OfferFailed)], ["error"])
        ended = []
        for d in waiting:
            d.addBoth(ended.append)
        self.assertEqual(ended, [])  # still waiting for the session to open
        share.end()

    @defer.inlineCallbacks
    def test_peer_without_transfer_v2(self):
        """A peer with the classic protocol only is told to use send and
        receive, and the share fails saying so."""
        w1 = wormhole.create(APPID, self.srv.url, reactor, **S.share_options())
        w2 = wormhole.create(APPID, self.srv.url, reactor)
        self.close_later(w1, w2)
        w1.allocate_code()
        w2.set_code((yield w1.get_code()))
        seen = Recorder()
        ran = S.Share(reactor, w1, APPID, seen, folder=self.folder()).run()
        e = yield self.assertFailure(ran, TransferError)
        self.assertEqual(str(e), S.NOT_V2)
        told = yield w2.get_message()
        self.assertIn(S.NOT_V2.encode(), told)


class KeptPartial(_Attempts):
    timeout = 60

    @defer.inlineCallbacks
    def test_kept_partial_resumed(self):
        """An earlier session stopped half-way kept bytes in the folder:
        the next offer says so before the policy is asked, resumes from
        them, and the file arrives whole."""
        path, dst, data = self.source(2_000_000)
        yield self.attempt(path, dst, stop_at=500_000)
        [kept] = S.kept_in(dst)
        self.assertGreater(kept.nbytes, 0)
        w1 = wormhole.create(APPID, self.srv.url, reactor, **S.wormhole_options("send"))
        w2 = wormhole.create(APPID, self.srv.url, reactor, **S.wormhole_options("receive"))
        self.close_later(w1, w2)
        w1.allocate_code()
        w2.set_code((yield w1.get_code()))
        seen1, seen2, policy = Recorder(), Recorder(), Asked()
        sending = S.Transfer(reactor, w1, APPID, seen1, dilate_kwargs=LOCAL).send([path])
        receiving = S.Transfer(reactor, w2, APPID, seen2, policy, folder=dst,
                               dilate_kwargs=LOCAL).receive()
        [sent] = yield sending
        yield receiving
        self.assertEqual(policy.asked[0].kept, kept.nbytes)
        [accepted] = seen2.of(S.OfferAccepted)
        self.assertGreater(accepted.resumed_from, 0)
        self.assertEqual(sent.resumed_from, accepted.resumed_from)
        self.assertEqual(read(os.path.join(dst, "big")), data)
        self.assertEqual(S.kept_in(dst), [])


class ReferencePeer(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def test_classic_fallback_from_the_reference(self):
        """The reference 0.24's ``wormhole send`` announces no transfer-v2:
        the library falls back to the classic protocol and the file
        arrives."""
        servers = yield files.Servers.start(self, relay="ours")
        src = os.path.abspath(self.mktemp())
        os.makedirs(src)
        digest = files.write_file(os.path.join(src, "f.bin"), 70000)
        dst = os.path.abspath(self.mktemp())
        os.makedirs(dst)
        code = "808-library-session"
        argv = files.ref_argv(servers, "send", "--hide-progress", "--no-listen", "--code", code,
                              "f.bin")
        peer = files.spawn(self, argv, "reference send", cwd=src,
                           env={"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
        w = wormhole.create(APPID, servers.url, reactor, **S.wormhole_options("receive"))
        w.set_code(code)
        seen, policy = Recorder(), Asked()
        try:
            [got] = yield S.Transfer(reactor, w, APPID, seen, policy, folder=dst,
                                     transit_helper=servers.transit, listen=False).receive()
        finally:
            yield w.close()
        self.assertEqual(seen.of(S.ProtocolChosen),
                         [S.ProtocolChosen("classic", "the peer announced no transfer-v2")])
        self.assertEqual([o.name for o in policy.asked], ["f.bin"])
        self.assertEqual(got.path, os.path.join(dst, "f.bin"))
        self.assertEqual(files.sha256_of(got.path), digest)
        status = yield peer.ended
        self.assertEqual(status, 0, peer.describe())


NBYTES = 3_000_000


@implementer(S.IStreamPolicy)
class TakeStreams:
    def __init__(self):
        self.asked = []
        self.consumer = HashingConsumer()

    def decide(self, offer):
        self.asked.append(offer)
        return True

    def consumer_for(self, offer):
        return self.consumer


class ProcessOutput(protocol.ProcessProtocol):
    """A child's standard output as a stream: its transport is the push
    producer, its end the stream's end (non-zero: the stream fails)."""

    def __init__(self, argv):
        self._argv = argv
        self.hash = hashlib.sha256()
        self.ended = defer.Deferred()
        self._consumer = None

    def start(self, consumer):
        self._consumer = consumer
        reactor.spawnProcess(self, self._argv[0], self._argv, env={})
        consumer.registerProducer(self.transport, True)

    def outReceived(self, data):
        self.hash.update(data)
        self._consumer.write(data)

    def processEnded(self, reason):
        self._consumer.unregisterProducer()
        code = reason.value.exitCode
        if code == 0:
            self._consumer.finish()
        else:
            self._consumer.fail(f"the process exited with status {code}")
        self.ended.callback(code)


def head_of_urandom(nbytes):
    return ["/usr/bin/head", "-c", str(nbytes), "/dev/urandom"]


class Streams(_Pair):
    @defer.inlineCallbacks
    def test_process_output_to_a_consumer(self):
        """A process's output goes to the peer's consumer, paced by it (it
        pauses the stream every MB); both ends' hashes equal, the events
        say a stream (no size)."""
        w1, w2 = yield self.pair()
        seen1, seen2, policy = Recorder(), Recorder(), TakeStreams()
        child = ProcessOutput(head_of_urandom(NBYTES))
        sending = S.Transfer(reactor, w1, APPID, seen1, dilate_kwargs=LOCAL).send(
            stream=child.start, stream_name="dump")
        receiving = S.Transfer(reactor, w2, APPID, seen2, policy,
                               dilate_kwargs=LOCAL).receive()
        [sent] = yield sending
        [got] = yield receiving
        self.assertEqual((yield child.ended), 0)
        self.assertEqual((sent.name, sent.size), ("dump", NBYTES))
        self.assertEqual((got.name, got.path, got.size), ("dump", None, NBYTES))
        self.assertEqual(policy.consumer.hash.digest(), child.hash.digest())
        self.assertEqual(policy.asked, [S.OfferArrived("stream", "dump", None, None)])
        self.assertEqual(policy.consumer.pauses, 3)  # every MB: flow control exercised
        progress = seen2.of(S.Progress)
        self.assertEqual(progress[-1], S.Progress("dump", NBYTES, None))

    @defer.inlineCallbacks
    def test_failing_process(self):
        """A process that fails: the receiver's transfer fails with the
        reason, never Received."""
        w1, w2 = yield self.pair()
        seen2, policy = Recorder(), TakeStreams()
        child = ProcessOutput(["/bin/sh", "-c", "head -c 100000 /dev/urandom; exit 3"])
        sending = S.Transfer(reactor, w1, APPID, Recorder(), dilate_kwargs=LOCAL).send(
            stream=child.start)
        receiving = S.Transfer(reactor, w2, APPID, seen2, policy,
                               dilate_kwargs=LOCAL).receive()
        e = yield self.assertFailure(sending, T.StreamInputFailed)
        self.assertIn("the process exited with status 3", str(e))
        e = yield self.assertFailure(receiving, T.StreamAborted)
        self.assertIn("the process exited with status 3", str(e))
        self.assertEqual(seen2.of(S.Received), [])

    @defer.inlineCallbacks
    def test_peer_without_the_feature(self):
        """A receiver whose transfer-v2 lacks "stream": the stream is
        refused before anything is sent, saying what the peer lacks."""
        features = {k: v for k, v in T.app_versions("receive")["transfer-v2"][
            "features"].items() if k != "stream"}
        w1 = wormhole.create(APPID, self.srv.url, reactor, **S.wormhole_options("send"))
        w2 = wormhole.create(APPID, self.srv.url, reactor, dilation=True,
                             versions=T.app_versions("receive", features))
        self.close_later(w1, w2)
        w1.allocate_code()
        w2.set_code((yield w1.get_code()))
        offered = []
        receiver = T.TransferSession(reactor, w2, "receive", features=features,
                                     on_offer=offered.append, dilate_kwargs=LOCAL)
        receiver.start()
        seen = Recorder()
        started = []
        sending = S.Transfer(reactor, w1, APPID, seen, dilate_kwargs=LOCAL).send(
            stream=lambda consumer: started.append(consumer))
        e = yield self.assertFailure(sending, T.StreamRefused)
        self.assertEqual(str(e), T.STREAM_REFUSED)
        self.assertIn('lacks the "stream" feature', str(e))
        self.assertEqual((started, offered), ([], []))
        yield receiver.when_closed()

    @defer.inlineCallbacks
    def test_policy_without_streams(self):
        """A policy that is not an IStreamPolicy: the stream is refused,
        the sender hears why."""
        w1, w2 = yield self.pair()
        seen2 = Recorder()
        sending = S.Transfer(reactor, w1, APPID, Recorder(), dilate_kwargs=LOCAL).send(
            stream=lambda consumer: consumer.finish())
        receiving = S.Transfer(reactor, w2, APPID, seen2, dilate_kwargs=LOCAL).receive()
        e = yield self.assertFailure(sending, T.OfferRejected)
        self.assertIn("this receiver takes no streams", e.reason)
        yield self.assertFailure(receiving, Exception)
        self.assertEqual(seen2.of(S.OfferRefused)[0].by, "rules")
