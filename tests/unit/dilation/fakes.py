"""Recording fakes for the Dilation machines' neighbours."""

from twisted.internet.protocol import Protocol
from zope.interface import implementer

from wormhole._dilation import _interfaces as I


@implementer(I.IL3Connection)
class FakeConnection:
    """An L3 connection that records what L4 does to it."""

    def __init__(self, events=None, name="c", is_leader=False):
        self.events = events if events is not None else []
        self.name = name
        self.is_leader = is_leader  # so the peer's subchannel ids are odd
        self.sent = []
        self.producer = None

    def send_record(self, record):
        self.sent.append(record)

    def register_producer(self, producer):
        self.producer = producer
        self.events.append((self.name + ".register_producer",))

    def unregister_producer(self):
        self.producer = None
        self.events.append((self.name + ".unregister_producer",))

    def pauseProducing(self):
        self.events.append((self.name + ".pauseProducing",))

    def resumeProducing(self):
        self.events.append((self.name + ".resumeProducing",))

    def disconnect(self):
        self.events.append((self.name + ".disconnect",))


@implementer(I.ISubChannel)
class FakeSubChannel:
    def __init__(self, events, name):
        self.events = events
        self.name = name
        self.data = []

    def remote_data(self, data):
        self.data.append(data)
        self.events.append((self.name + ".remote_data", data))

    def remote_close(self):
        self.events.append((self.name + ".remote_close",))

    def local_pause(self):
        self.events.append((self.name + ".local_pause",))

    def local_resume(self):
        self.events.append((self.name + ".local_resume",))


@implementer(I.ISubchannelListener)
class FakeListener:
    def __init__(self, events):
        self.events = events
        self.made = {}

    def got_open(self, scid, subprotocol):
        self.events.append(("listener.got_open", scid, subprotocol))
        sc = FakeSubChannel(self.events, f"sc{scid}")
        self.made[scid] = sc
        return sc


@implementer(I.IOutbound)
class FakeOutbound:
    def __init__(self, events):
        self.events = events

    def send_open(self, scid, subprotocol):
        self.events.append(("outbound.send_open", scid, subprotocol))

    def send_data(self, scid, data):
        self.events.append(("outbound.send_data", scid, data))

    def send_close(self, scid):
        self.events.append(("outbound.send_close", scid))

    def send_ack(self, resp_seqnum):
        self.events.append(("outbound.send_ack", resp_seqnum))

    def handle_ack(self, resp_seqnum):
        self.events.append(("outbound.handle_ack", resp_seqnum))

    def use_connection(self, connection):
        self.events.append(("outbound.use_connection",))

    def stop_using_connection(self):
        self.events.append(("outbound.stop_using_connection",))

    def subchannel_opened(self, subchannel):
        self.events.append(("outbound.subchannel_opened",))

    def subchannel_closed(self, subchannel):
        self.events.append(("outbound.subchannel_closed",))


@implementer(I.IInbound)
class FakeInbound:
    def __init__(self, events):
        self.events = events

    def got_record(self, record):
        self.events.append(("inbound.got_record", record))

    def end_of_batch(self):
        self.events.append(("inbound.end_of_batch",))

    def use_connection(self, connection):
        self.events.append(("inbound.use_connection",))

    def stop_using_connection(self):
        self.events.append(("inbound.stop_using_connection",))

    def subchannel_paused(self, subchannel):
        self.events.append(("inbound.subchannel_paused",))

    def subchannel_resumed(self, subchannel):
        self.events.append(("inbound.subchannel_resumed",))

    def subchannel_closed(self, scid):
        self.events.append(("inbound.subchannel_closed", scid))

    def backlog_added(self, subchannel, nbytes):
        self.events.append(("inbound.backlog_added", nbytes))

    def backlog_released(self, subchannel):
        self.events.append(("inbound.backlog_released",))


# a Dilation key and a side, for the Connector under test
KEY = b"\x05" * 32
SIDE = "a" * 16


@implementer(I.IDilationManager, I.IRecordReceiver)
class FakeManager:
    def __init__(self):
        self.hints = []
        self.made = []

    def got_dilate(self, plaintext):
        pass

    def send_hints(self, hints):
        self.hints.append(hints)

    def connector_connection_made(self, connection):
        self.made.append(connection)

    def stop(self):
        pass

    def got_record(self, connection, record):
        pass

    def connection_lost(self, connection):
        pass

    def end_of_batch(self, connection):
        pass


class Recorder(Protocol):
    def __init__(self, events):
        self.events = events

    def connectionMade(self):
        self.events.append(("p.connectionMade",))

    def dataReceived(self, data):
        self.events.append(("p.dataReceived", data))

    def connectionLost(self, reason):
        self.events.append(("p.connectionLost", type(reason).__name__))
