"""L5 SubChannel (Dilation protocol, "L5 subchannels", "Flow Control"): the
ITransport/IConsumer/IProducer an application sees, and the close
handshake with its closing state."""

from twisted.internet.interfaces import IConsumer, IPushProducer, ITransport
from twisted.trial import unittest
from zope.interface import implementer
from zope.interface.verify import verifyObject

from wormhole._dilation import _interfaces as I
from wormhole._dilation._subchannel import AlreadyClosedError, SubChannel

from .fakes import FakeInbound, FakeOutbound, Recorder


@implementer(IPushProducer)
class Producer:
    def __init__(self, events):
        self.events = events

    def pauseProducing(self):
        self.events.append(("prod.pause",))

    def resumeProducing(self):
        self.events.append(("prod.resume",))

    def stopProducing(self):
        self.events.append(("prod.stop",))


class SubChannelTests(unittest.TestCase):
    def setUp(self):
        self.events = []
        self.later = []
        self.sc = SubChannel(5, "chat", FakeOutbound(self.events), FakeInbound(self.events),
                             lambda scid: self.events.append(("registry.closed", scid)),
                             lambda f, *a: self.later.append((f, a)))
        self.p = Recorder(self.events)

    def test_interfaces(self):
        """A subchannel is an ITransport, IConsumer, IPushProducer and ISubChannel."""
        for iface in (ITransport, IConsumer, IPushProducer, I.ISubChannel):
            verifyObject(iface, self.sc)
        verifyObject(I.IInbound, FakeInbound([]))
        self.assertEqual(self.sc.getPeer().scid, 5)
        self.assertEqual(self.sc.getHost().subprotocol, "chat")

    def test_data_before_attach_is_kept(self):
        """DATA for an accepted-but-not-yet-listened subchannel waits (L4
        inbound counts it) and is delivered right after connectionMade,
        then released from the count."""
        self.sc.remote_data(b"a")
        self.sc.remote_data(b"bc")
        self.assertEqual(self.events, [("inbound.backlog_added", 1),
                                       ("inbound.backlog_added", 2)])
        del self.events[:]
        self.sc.attach(self.p)
        self.assertEqual(self.events, [("p.connectionMade",), ("p.dataReceived", b"a"),
                                       ("p.dataReceived", b"bc"),
                                       ("inbound.backlog_released",)])
        self.assertIs(self.p.transport, self.sc)

    def test_write(self):
        """write()/writeSequence() become DATA for this subchannel id."""
        self.sc.attach(self.p)
        self.sc.write(b"x")
        self.sc.writeSequence([b"y", b"z"])
        self.assertEqual(self.events[1:], [("outbound.send_data", 5, b"x"),
                                           ("outbound.send_data", 5, b"yz")])
        self.assertRaises(TypeError, self.sc.write, "text")

    def test_local_close_then_remote_close(self):
        """loseConnection() sends CLOSE and enters closing: inbound DATA is
        still delivered, writes fail, the peer's CLOSE ends it (no second
        CLOSE from us)."""
        self.sc.attach(self.p)
        self.sc.loseConnection()
        self.sc.loseConnection()
        self.sc.remote_data(b"late")
        self.assertRaises(AlreadyClosedError, self.sc.write, b"no")
        self.sc.remote_close()
        self.assertEqual(self.events[1:], [
            ("outbound.send_close", 5), ("p.dataReceived", b"late"),
            ("outbound.subchannel_closed",), ("inbound.subchannel_closed", 5),
            ("registry.closed", 5), ("p.connectionLost", "ConnectionDone")])

    def test_remote_close_answered(self):
        """The peer's CLOSE while open is answered by our CLOSE and closes
        at once; afterwards DATA is dropped and writes fail."""
        self.sc.attach(self.p)
        self.sc.remote_close()
        self.sc.remote_data(b"stray")
        self.assertRaises(AlreadyClosedError, self.sc.write, b"no")
        self.assertEqual(self.events[1:], [
            ("outbound.send_close", 5), ("outbound.subchannel_closed",),
            ("inbound.subchannel_closed", 5), ("registry.closed", 5),
            ("p.connectionLost", "ConnectionDone")])

    def test_close_before_attach(self):
        """OPEN, DATA and CLOSE all before listen(): the protocol still sees
        connectionMade, the data, then connectionLost."""
        self.sc.remote_data(b"a")
        self.sc.remote_close()
        self.sc.attach(self.p)
        self.assertEqual([e for e in self.events if e[0].startswith("p.")],
                         [("p.connectionMade",), ("p.dataReceived", b"a"),
                          ("p.connectionLost", "ConnectionDone")])

    def test_streaming_producer_follows_l4(self):
        """A registered streaming producer is paused/resumed by L4, paused at
        once if registered while L4 is paused, and stopped on close."""
        self.sc.attach(self.p)
        self.sc.local_pause()
        prod = Producer(self.events)
        del self.events[:]
        self.sc.registerProducer(prod, True)
        self.sc.local_pause()
        self.sc.local_resume()
        self.sc.local_resume()
        self.assertEqual(self.events, [("prod.pause",), ("prod.resume",)])
        self.assertRaises(RuntimeError, self.sc.registerProducer, prod, True)
        del self.events[:]
        self.sc.remote_close()
        self.assertIn(("prod.stop",), self.events)

    def test_pull_producer(self):
        """A pull producer is asked for more after each write, eventually,
        and not while L4 is paused."""
        self.sc.attach(self.p)
        sc = self.sc

        class Pull:
            def resumeProducing(inner):
                sc.write(b"chunk")

            def stopProducing(inner):
                pass

        self.sc.registerProducer(Pull(), False)
        self.assertEqual(len(self.later), 1)
        f, a = self.later.pop(0)
        f(*a)
        self.assertEqual(self.events[-1], ("outbound.send_data", 5, b"chunk"))
        self.sc.local_pause()
        f, a = self.later.pop(0)
        f(*a)
        self.assertEqual(len([e for e in self.events if e[0] == "outbound.send_data"]), 1)
        self.sc.local_resume()
        f, a = self.later.pop(0)
        f(*a)
        self.assertEqual(len([e for e in self.events if e[0] == "outbound.send_data"]), 2)

    def test_application_pause_reaches_inbound(self):
        """transport.pauseProducing()/resumeProducing() tell Inbound (which
        stops reading the L3 connection); stopProducing closes."""
        self.sc.attach(self.p)
        self.sc.pauseProducing()
        self.sc.resumeProducing()
        self.sc.stopProducing()
        self.assertEqual(self.events[1:], [("inbound.subchannel_paused",),
                                           ("inbound.subchannel_resumed",),
                                           ("outbound.send_close", 5)])

    def test_abandon(self):
        """When the wormhole closes, an open or closing subchannel ends with
        connectionLost and no CLOSE record; an unattached one just goes."""
        self.sc.attach(self.p)
        self.sc.abandon()
        self.sc.abandon()
        self.assertEqual(self.events[1:], [("registry.closed", 5),
                                           ("p.connectionLost", "ConnectionDone")])
        self.assertRaises(AlreadyClosedError, self.sc.write, b"x")
