"""One connection under test, on a Clock and a StringTransport
(``Harness``), its owner (``RecordingOwner``) and its far end as bytes
(``Peer``): test_connection.py, test_hostile.py and the hostile
compression test."""

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from zope.interface import implementer

from p2pmesh import LocalLimits, SubnetConfig, _compression, _framing, _message, _payload
from p2pmesh._config import ACK, SET_CONNECTION_OPT
from p2pmesh._connection import Connection, IConnectionOwner
from p2pmesh._identity import Identity

from ...p2p._fixtures import test_keys


class Peer:
    """The far end, speaking bytes with its own key (B by default)."""

    def __init__(self, name="B", to=None):
        self.private, self.der = test_keys()[name]
        self.to = to
        self.decoder = _framing.TransmissionDecoder(16 << 20)

    def tx(self, *messages, method=0):
        body = b"".join(messages)
        return _framing.encode_transmission(
            method, _compression.compress(method, body))

    def msg(self, opcode, value, to=None, encrypted=False, payload=None):
        if payload is None:
            payload = _payload.pack(value)
        return _message.encode_message(self.private, self.der,
                                       to or self.to or self.der, opcode,
                                       payload, encrypted)

    def read(self, transport):
        """Every message written to `transport` so far: (op, value, To)."""
        data = transport.value()
        transport.clear()
        out = []
        for method, body in self.decoder.feed(data):
            body = _compression.decompress(method, body, 16 << 20)
            for m in _message.split_messages(body, 2048):
                _message.check_message(m, 2048)
                out.append((m.opcode, _payload.unpack(m.payload),
                            m.recipient))
        return out


SUBNET = SubnetConfig()


@implementer(IConnectionOwner)
class RecordingOwner:

    def __init__(self):
        self.events = []
        self.answer = None

    def connection_open(self, conn):
        self.events.append(("open",))

    def connection_closed(self, conn):
        self.events.append(("closed",))

    def message_received(self, conn, message, value):
        self.events.append(("message", message.opcode, value))
        return self.answer

    def whisper_answer(self, conn, message, value):
        self.events.append(("whisper_answer", value))

    def refused(self, conn, message, reason):
        self.events.append(("refused", message.opcode, reason))

    def request_failed(self, conn):
        self.events.append(("request_failed",))

    def count_sent(self, conn, opcode, size):
        pass

    def count_bytes(self, conn, size):
        pass


class Harness:

    def __init__(self, limits=None, subnet=SUBNET, expected_key=None):
        self.clock = Clock()
        private, self.der = test_keys()["A"]
        self.identity = Identity(private, 256, self.clock)
        self.owner = RecordingOwner()
        self.conn = Connection(self.identity, subnet,
                               limits or LocalLimits(compression=()),
                               self.clock, self.owner, outbound=True,
                               expected_key=expected_key)
        self.transport = StringTransport()
        self.conn.makeConnection(self.transport)
        self.peer = Peer(to=self.der)

    def turn(self):
        self.clock.advance(0)
        return self.peer.read(self.transport)

    def feed(self, *messages, method=0):
        self.conn.dataReceived(self.peer.tx(*messages, method=method))
        return self.turn()

    def open(self):
        sent = self.turn()
        subnet = SUBNET.as_setting()
        out = self.feed(
            self.peer.msg(SET_CONNECTION_OPT, [2, subnet]),
            self.peer.msg(ACK, [SET_CONNECTION_OPT, 2, subnet]))
        return sent, out
