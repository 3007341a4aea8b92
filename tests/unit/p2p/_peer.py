"""The far end of a connection under test, as bytes (test_connection.py,
test_hostile.py)."""

from p2pmesh import _compression, _framing, _message, _payload

from ._fixtures import test_keys


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
