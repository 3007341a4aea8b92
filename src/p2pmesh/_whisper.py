"""WHISPER to one node (P2P-D6.10): direct when connected, recursive
through a strictly closer link when the target's bucket is full, else an
iterative FIND_NODE and a transient dial. Answers match by signature."""

from twisted.internet import defer

from . import _hybrid, _keys, _message, _payload
from ._config import ACK, NACK, WHISPER


class WhisperFailed(Exception):
    """NACK [8, signature, reason] from the target or a relay."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class WhisperTimeout(Exception):
    """No answer within 30 s (P2P-D6.7)."""


class Whispers:

    def __init__(self, identity, subnet, limits, clock, rng, table, links,
                 dht):
        self._identity = identity
        self._subnet = subnet
        self._limits = limits
        self._clock = clock
        self._rng = rng
        self._table = table
        self._links = links
        self._dht = dht
        self._pending = {}   # signature → (Deferred, timer): ours
        self._relayed = {}   # signature → (arrival Connection, timer)
        self.relayed_count = 0

    def send(self, target_der, value, encrypt=True):
        """A Deferred that fires on the target's ACK [8, signature]."""
        _keys.check_canonical(target_der, self._subnet.beta)
        plain = _payload.pack(value, self._limits.max_depth)
        identity = self._identity
        payload = plain
        if encrypt:
            ad = _message.associated_data(WHISPER, True, identity.der,
                                          target_der)
            payload = _hybrid.encrypt(target_der, plain, ad,
                                      self._rng.randbytes)
        raw = _message.encode_message(identity.private_key, identity.der,
                                      target_der, WHISPER, payload, encrypt)
        (message,) = _message.split_messages(raw, self._subnet.beta)
        d = defer.Deferred()
        timer = self._clock.callLater(self._limits.whisper_timeout,
                                      self._timed_out, message.signature)
        self._pending[message.signature] = (d, timer)
        if not encrypt and target_der not in self._links.open:
            # P2P-D4.3: encrypt=False only for direct delivery
            self._answer(message, None, NACK, "encryption-required")
        else:
            self.route(message, None)
        return d

    def _timed_out(self, signature):
        d, _ = self._pending.pop(signature)
        d.errback(WhisperTimeout())

    def _closer_links(self, target, arrival):
        """Open links strictly closer to the target than this node."""
        own = self._identity.address ^ target
        tau = self._subnet.tau
        links = [(_keys.truncated_address(der, tau) ^ target, conn)
                 for der, conn in self._links.open.items()
                 if conn is not arrival]
        return [conn for dist, conn in sorted(links, key=lambda x: x[0])
                if dist < own]

    def route(self, message, arrival):
        """Forward `message` (ours or relayed) towards its To."""
        target_der = message.recipient
        conn = self._links.open.get(target_der)
        if conn is not None:
            conn.send_raw(message.raw, WHISPER)
            return
        target = _keys.truncated_address(target_der, self._subnet.tau)
        closer = self._closer_links(target, arrival)
        if message.encrypted and self._table.is_full(target) and closer:
            closer[0].send_raw(message.raw, WHISPER)   # recursive
            return
        self._iterative(message, arrival, target)

    def _iterative(self, message, arrival, target):
        d = self._dht.find_node(target)

        def found(result):
            for contact in result.known:
                if contact.der == message.recipient:
                    break
            else:
                return self._answer(message, arrival, NACK, "unreachable")
            if contact.listening or contact.der in self._links.open:
                link = self._links.connection_to(contact)
                link.addCallback(lambda conn: conn.send_raw(message.raw,
                                                            WHISPER))
                link.addErrback(lambda f: self._answer(
                    message, arrival, NACK, "unreachable"))
                return
            closer = self._closer_links(target, arrival)
            if closer and message.encrypted:
                closer[0].send_raw(message.raw, WHISPER)  # best effort
            else:
                self._answer(message, arrival, NACK, "unreachable")
        d.addCallback(found)
        d.addErrback(lambda f: self._answer(message, arrival, NACK,
                                            "unreachable"))

    def _answer(self, message, arrival, opcode, reason=None):
        """An answer about `message`: to our own pending Deferred, or back
        along the arrival link To = its origin."""
        value = [WHISPER, message.signature]
        if reason is not None:
            value.append(reason)
        if arrival is None:
            return self._resolve(message.signature, opcode, value)
        arrival.send(opcode, value, recipient=message.sender)

    def _resolve(self, signature, opcode, value):
        entry = self._pending.pop(signature, None)
        if entry is None:
            return
        d, timer = entry
        timer.cancel()
        if opcode == ACK:
            d.callback(None)
        else:
            d.errback(WhisperFailed(value[2] if len(value) > 2 else ""))

    def relay(self, conn, message):
        """A WHISPER for another node arrived (P2P-D4.3, 6.10)."""
        if not message.encrypted:
            conn.send(NACK, [WHISPER, message.signature,
                             "encryption-required"], recipient=message.sender)
            return
        if message.signature in self._relayed:
            return
        if len(self._relayed) >= self._limits.max_relayed:
            conn.send(NACK, [WHISPER, message.signature, "full"],
                      recipient=message.sender)
            return
        timer = self._clock.callLater(self._limits.whisper_timeout,
                                      self._relayed.pop, message.signature,
                                      None)
        self._relayed[message.signature] = (conn, timer)
        self.relayed_count += 1
        self.route(message, conn)

    def deliver(self, conn, message, plaintext_value):
        """We are the target: ACK back along the arrival link."""
        conn.send(ACK, [WHISPER, message.signature], recipient=message.sender)

    def refuse(self, conn, message, reason):
        conn.send(NACK, [WHISPER, message.signature, reason],
                  recipient=message.sender)

    def answer_arrived(self, conn, message, value):
        """ACK/NACK [8, signature, ...]: ours, or pass it back."""
        if len(value) < 2 or not isinstance(value[1], bytes):
            return
        signature = value[1]
        if self._identity.is_mine(message.recipient):
            return self._resolve(signature, message.opcode, value)
        entry = self._relayed.pop(signature, None)
        if entry is not None:
            back, timer = entry
            if timer.active():
                timer.cancel()
            back.send_raw(message.raw, message.opcode)

    def stop(self):
        for _signature, (_d, timer) in list(self._pending.items()):
            timer.cancel()
        for _conn, timer in self._relayed.values():
            if timer.active():
                timer.cancel()
        self._relayed.clear()
