"""One TCP link to one peer (P2P-D6.1, 6.2): the per-connection machine
(handshake, open, closing), framing and batching of what we send, and the
checks and dispatch of what we receive. Beside it: what the handshake and
the connection options settle (_handshake.py), our requests awaiting an
answer (_requests.py), our answers to the peer's requests (_answers.py).

Everything above a verified message (routing, flooding, DHT) belongs to
the node, reached through the IConnectionOwner it wires in."""

from automat import MethodicalMachine
from twisted.internet import defer
from twisted.internet.protocol import Protocol
from twisted.python import log
from zope.interface import Interface

from wormhole._automat_private import trace_hook

from . import _compression, _framing, _keys, _message, _payload
from ._answers import OrderedAnswers
from ._config import (
    ACK,
    CHANGE_KEY,
    CUSTOM,
    FIND_NODE,
    FIND_VALUE,
    NACK,
    OPT_COMPRESSION,
    OPT_PREFERRED,
    OPT_SUBNET,
    PING,
    RESERVED_OPCODES,
    SET_CONNECTION_OPT,
    STORE,
    WHISPER,
)
from ._handshake import Compression, is_option, subnet_matches
from ._requests import ConnectionGone, PendingRequests, RequestFailed, RequestTimeout

# P2P-D5.2: the opcodes that always get exactly one answer
REQUESTS = frozenset({PING, SET_CONNECTION_OPT, FIND_NODE, FIND_VALUE,
                      STORE, CUSTOM})


class IConnectionOwner(Interface):
    """What a Connection needs from its node."""

    def connection_open(connection):
        """The handshake completed (P2P-D6.2)."""

    def connection_closed(connection):
        """The link is gone, whatever the reason."""

    def message_received(connection, message, value):
        """A verified message past the handshake; `value` is the decoded
        payload (None when encrypted). Returns None, or for a request the
        answer `(ACK|NACK, list)` or a Deferred of it (P2P-D5.2)."""

    def whisper_answer(connection, message, value):
        """An ACK/NACK [8, signature, ...]: matched by signature (P2P-D5.2)."""

    def refused(connection, message, reason):
        """A non-request that failed its checks: dropped and logged."""

    def request_failed(connection):
        """A request to this peer timed out (P2P-D6.7 failure count)."""

    def count_sent(connection, opcode, size):
        """A message of `size` bytes was queued on the link."""

    def count_bytes(connection, size):
        """A transmission of `size` bytes was written."""


class Refusal(Exception):
    """Raised while handling a message: close, or NACK with a reason."""

    def __init__(self, reason, close=False):
        super().__init__(reason)
        self.reason = reason
        self.close = close


class Connection(Protocol):
    """The per-connection machine (P2P-D6.2): Connecting → Handshaking →
    Open → Closing → Closed; handshaking has two halves (our subnet ACKed
    by the peer, the peer's ACKed by us)."""

    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, identity, subnet, limits, clock, owner, outbound,
                 expected_key=None):
        self.identity = identity          # the node's _identity.Identity
        self._subnet = subnet
        self._limits = limits
        self._clock = clock
        self._owner = IConnectionOwner(owner)
        self.outbound = outbound          # we dialed it (P2P-D6.3)
        self.expected_key = expected_key  # a dialed peer must have this key
        self.peer_key = None              # From of the peer's first message
        self.transient = False            # set by the node (P2P-D6.4)
        self.peer_listen = None           # from its directed ANNOUNCE
        self._decoder = _framing.TransmissionDecoder(limits.max_transmission)
        self._pending_out = []            # message bytes of this turn
        self._flush_call = None
        self._handshake_call = None
        self._requests = PendingRequests(clock, limits.request_timeout,
                                         self._request_timed_out)
        self._answers = OrderedAnswers(self._send, limits.max_pending_answers,
                                       self._refuse_link)
        self._methods = Compression(limits.compression)  # of this link
        self.sent_bytes = 0
        self.received_bytes = 0
        self.last_received = clock.seconds()
        self.last_request = clock.seconds()
        # the inputs every message passes through, bound once: Automat
        # builds a new bound function on each attribute access (~30 µs)
        for name in ("_transmission_in", "_message_in", "_deliver"):
            setattr(self, name, getattr(self, name))

    # -- Twisted glue -------------------------------------------------------

    def connectionMade(self):
        self._set_nodelay()
        # the transport tells us when the peer stops reading (its buffer
        # is full): we then queue, up to max_queued_bytes, then close
        self.transport.registerProducer(self, True)
        self._connected()

    _peer_reading = True

    def pauseProducing(self):
        self._peer_reading = False

    def resumeProducing(self):
        self._peer_reading = True
        self.flush()

    def stopProducing(self):
        pass

    def _set_nodelay(self):
        set_nodelay = getattr(self.transport, "setTcpNoDelay", None)
        if set_nodelay is not None:
            try:
                set_nodelay(True)    # P2P-D6.1
            except Exception:  # in-memory transports have no socket
                pass

    def dataReceived(self, data):
        self.received_bytes += len(data)
        self.last_received = self._clock.seconds()
        try:
            transmissions = self._decoder.feed(data)
        except _framing.FramingError as e:
            return self._refuse_link("framing: %s" % e)
        for method, body in transmissions:
            self._transmission_in(method, body)

    def _process_transmission(self, method, body):
        if not self._methods.accepts(method):
                # P2P-D3.6: skipped unread, NACK, flush, close
            self._send(NACK, [SET_CONNECTION_OPT, OPT_COMPRESSION, method,
                              "not-agreed"])
            return self._refuse_link("transmission in unagreed method %d"
                                     % method)
        try:
            body = _compression.decompress(
                method, body, self._limits.max_transmission)
            messages = _message.split_messages(body, self._subnet.beta)
        except (_compression.CompressionError, _framing.FramingError) as e:
            return self._refuse_link(str(e))
        for message in messages:
            self._message_in(message)

    def connectionLost(self, reason):
        self._lost()

    # -- sending ------------------------------------------------------------

    def _to_key(self):
        """P2P-D2.6: the peer's key once known, else our own."""
        return self.peer_key or self.expected_key or self.identity.der

    def _send(self, opcode, value, recipient=None):
        payload = _payload.pack(value, self._limits.max_depth)
        raw = _message.encode_message(
            self.identity.private_key, self.identity.der,
            recipient or self._to_key(), opcode, payload)
        self.send_raw(raw, opcode)
        return raw

    def send_raw(self, raw, opcode):
        """Queue a message's bytes; one reactor turn's messages travel in
        one transmission (P2P-D3.2)."""
        if self.transport is None:
            return
        self._owner.count_sent(self, opcode, len(raw))
        self._pending_out.append(raw)
        if self._flush_call is None:
            self._flush_call = self._clock.callLater(0, self.flush)

    def flush(self):
        if self._flush_call is not None and self._flush_call.active():
            self._flush_call.cancel()
        self._flush_call = None
        if not self._peer_reading:
            if sum(map(len, self._pending_out)) > \
                    self._limits.max_queued_bytes:
                self._pending_out = []
                self._refuse_link("peer does not read")
            return
        pending, self._pending_out = self._pending_out, []
        batch, size = [], 0
        for raw in pending:
            # P2P-D3.2: split at the max size, never inside a message
            if batch and size + len(raw) > self._limits.max_transmission:
                self._write_transmission(b"".join(batch))
                batch, size = [], 0
            batch.append(raw)
            size += len(raw)
        if batch:
            self._write_transmission(b"".join(batch))

    def _write_transmission(self, body):
        if self.transport is None:
            return
        method, packed = self._methods.choose(body)
        data = _framing.encode_transmission(method, packed)
        self.sent_bytes += len(data)
        self._owner.count_bytes(self, len(data))
        self.transport.write(data)

    def request(self, opcode, value, recipient=None):
        """Send a request and return a Deferred of the ACK list; errback
        RequestFailed on NACK, RequestTimeout, ConnectionGone (P2P-D5.2)."""
        payload = _payload.pack(value, self._limits.max_depth)
        raw = _message.encode_message(
            self.identity.private_key, self.identity.der,
            recipient or self._to_key(), opcode, payload)
        return self.request_raw(opcode, raw)

    def request_raw(self, opcode, raw):
        """As request, for an already signed message (CHANGE_KEY)."""
        if self.transport is None:
            return defer.fail(ConnectionGone())
        self.last_request = self._clock.seconds()
        d = self._requests.add(opcode)
        self.send_raw(raw, opcode)
        return d

    def send(self, opcode, value, recipient=None):
        """A message that expects no FIFO answer (broadcasts, WHISPER,
        ANNOUNCE); returns its bytes."""
        return self._send(opcode, value, recipient)

    def _request_timed_out(self):
        # P2P-D6.7: the oldest request failed with RequestTimeout; the
        # FIFO cannot resync: close
        self._owner.request_failed(self)
        self.close()

    # -- receiving ----------------------------------------------------------

    def _refuse_link(self, why):
        log.msg("p2pmesh: closing link: %s" % why)
        self.close()

    def _process_message(self, message):
        beta = self._subnet.beta
        try:
            _message.check_message(message, beta)
        except (_keys.NonCanonicalKey, _message.BadSignature) as e:
            return self._refuse_link(str(e))   # P2P-D5.3: close
        if self.peer_key is None:
            if self.expected_key not in (None, message.sender):
                # P2P-D6.2: a dialed peer whose key is not the expected one
                return self._refuse_link("dialed peer has another key")
            self.peer_key = message.sender
        if message.opcode in (ACK, NACK):
            return self._got_answer(message)
        if (message.opcode == SET_CONNECTION_OPT
                and message.sender == self.peer_key):
            return self._got_option_message(message)
        self._got_other(message)

    def _decode(self, message):
        """msgpack and reserved checks (P2P-D5.3 order), or Refusal."""
        if message.reserved:
            raise Refusal("malformed")
        if message.opcode in RESERVED_OPCODES:
            raise Refusal("unsupported")
        if message.encrypted:
            return None
        try:
            return _payload.unpack(message.payload, self._limits.max_depth)
        except _payload.Malformed:
            raise Refusal("malformed") from None

    def _got_answer(self, message):
        try:
            value = self._decode(message)
        except Refusal:
            return  # P2P-D5.3: failing ACKs and NACKs are dropped
        if (not isinstance(value, list) or not value
                or not isinstance(value[0], int) or isinstance(value[0], bool)):
            return
        if value[0] == WHISPER:
            return self._owner.whisper_answer(self, message, value)
        if message.sender != self.peer_key:
            return
        if not self._requests:
            return self._refuse_link("unmatched answer")   # P2P-D5.2
        if not self._requests.matches(value[0]):
            return self._refuse_link("answer does not match the request")
        self._requests.answer(message.opcode == ACK, value)

    def _got_option_message(self, message):
        slot = self._answers.slot()
        try:
            value = self._decode(message)
            if not is_option(value):
                raise Refusal("malformed")
        except Refusal as e:
            return self._answers.fill(slot, NACK, [SET_CONNECTION_OPT, e.reason])
        option, setting = value
        if option == OPT_SUBNET:
            if subnet_matches(setting, self._subnet):
                self._answers.fill(slot, ACK, [SET_CONNECTION_OPT, option, setting])
                return self._peer_subnet_ok()
            self._answers.fill(slot, NACK, [SET_CONNECTION_OPT, option, setting,
                                            "subnet-mismatch"])
            return self._subnet_mismatch()
        self._other_option(slot, option, setting)

    def _got_other(self, message):
        """Anything but answers and the peer's options: only once Open."""
        self._deliver(message)

    # -- the peer's requests get their answers in arrival order (P2P-D5.2) --

    def answer_later(self, result):
        """Answer the peer's latest request with ``result``: a tuple, or a
        Deferred of one."""
        self._answers.answer_later(result)

    def _dispatch(self, message):
        # reserved opcodes get their NACK "unsupported" (P2P-D5.3)
        is_request = (message.opcode in REQUESTS
                      or message.opcode in RESERVED_OPCODES
                      or (message.opcode == CHANGE_KEY
                          and message.sender == self.peer_key))
        try:
            value = self._decode(message)
        except Refusal as e:
            if is_request:
                self.answer_later((NACK, [message.opcode, e.reason]))
            else:
                self._owner.refused(self, message, e.reason)
            return
        result = self._owner.message_received(self, message, value)
        if is_request:
            if result is None:
                result = (NACK, [message.opcode, "unsupported"])
            self.answer_later(result)

    # -- the handshake machine (P2P-D6.2) ------------------------------------

    @m.state(initial=True)
    def connecting(self): pass  # noqa

    @m.state()
    def handshaking(self): pass  # noqa

    @m.state()
    def ours_acked(self): pass  # noqa

    @m.state()
    def theirs_acked(self): pass  # noqa

    @m.state()
    def open(self): pass  # noqa

    @m.state()
    def closing(self): pass  # noqa

    @m.state()
    def closed(self): pass  # noqa

    @m.input()
    def _connected(self): pass  # noqa

    @m.input()
    def _peer_subnet_ok(self): pass  # noqa

    @m.input()
    def _our_subnet_acked(self): pass  # noqa

    @m.input()
    def _subnet_mismatch(self): pass  # noqa

    @m.input()
    def _handshake_timed_out(self): pass  # noqa

    @m.input()
    def _deliver(self, message): pass  # noqa

    @m.input()
    def _other_option(self, slot, option, setting): pass  # noqa

    @m.input()
    def _message_in(self, message): pass  # noqa

    @m.input()
    def _transmission_in(self, method, body): pass  # noqa

    @m.input()
    def close(self):
        "Flush what is queued and drop the link."

    @m.input()
    def _lost(self): pass  # noqa

    @m.output()
    def _send_subnet(self):
        self._handshake_call = self._clock.callLater(
            self._limits.handshake_timeout, self._handshake_timed_out)
        d = self.request(SET_CONNECTION_OPT,
                         [OPT_SUBNET, self._subnet.as_setting()])

        def acked(_):
            self._our_subnet_acked()

        def refused(f):
            f.trap(RequestFailed, RequestTimeout, ConnectionGone)
            if f.check(RequestFailed):
                self._subnet_mismatch()
        d.addCallbacks(acked, refused)

    @m.output()
    def _become_open(self):
        if self._handshake_call is not None and self._handshake_call.active():
            self._handshake_call.cancel()
        self._owner.connection_open(self)

    def _not_agreed(self, f, method):
        # P2P-D3.4/3.6: refused (or never answered): a transmission in
        # ``method`` is then NACKed "not-agreed" and closes
        f.trap(RequestFailed, RequestTimeout, ConnectionGone)
        self._methods.refused(method)

    @m.output()
    def _propose_compression(self):
        # P2P-D3.4: the proposer decodes m from the moment it proposes
        for method in self._methods.offered():
            self._methods.proposing(method)
            d = self.request(SET_CONNECTION_OPT, [OPT_COMPRESSION, method])
            d.addCallbacks(lambda _, m=method: self._methods.agreed(m),
                           lambda f, m=method: self._not_agreed(f, m))
        preferred = self._limits.preferred_compression
        if preferred is not None:
            self.request(SET_CONNECTION_OPT,
                         [OPT_PREFERRED, preferred]).addErrback(
                lambda f: f.trap(RequestFailed, RequestTimeout,
                                 ConnectionGone))

    @m.output()
    def _dispatch_message(self, message):
        self._dispatch(message)

    @m.output()
    def _answer_option(self, slot, option, setting):
        self._answers.fill(slot, *self._methods.option(option, setting))

    @m.output()
    def _read_transmission(self, method, body):
        self._process_transmission(method, body)

    @m.output()
    def _read_message(self, message):
        self._process_message(message)

    @m.output()
    def _start_closing(self):
        if self._handshake_call is not None and self._handshake_call.active():
            self._handshake_call.cancel()
        if self.transport is not None:
            self.flush()
            self.transport.loseConnection()

    @m.output()
    def _fail_requests(self):
        if self._flush_call is not None and self._flush_call.active():
            self._flush_call.cancel()
        self._flush_call = None
        if self._handshake_call is not None and self._handshake_call.active():
            self._handshake_call.cancel()
        self._requests.fail_all()

    @m.output()
    def _notify_closed(self):
        self._owner.connection_closed(self)

    connecting.upon(_connected, enter=handshaking, outputs=[_send_subnet])
    connecting.upon(close, enter=closed, outputs=[])
    connecting.upon(_lost, enter=closed, outputs=[_notify_closed])
    for _half in (handshaking, ours_acked, theirs_acked):
        _half.upon(_transmission_in, enter=_half, outputs=[_read_transmission])
        _half.upon(_message_in, enter=_half, outputs=[_read_message])
        # before Open only ACK, NACK and option 2 pass (P2P-D6.2)
        _half.upon(_deliver, enter=closing, outputs=[_start_closing])
        _half.upon(_other_option, enter=closing, outputs=[_start_closing])
        _half.upon(_subnet_mismatch, enter=closing, outputs=[_start_closing])
        _half.upon(_handshake_timed_out, enter=closing,
                   outputs=[_start_closing])
        _half.upon(close, enter=closing, outputs=[_start_closing])
        _half.upon(_lost, enter=closed, outputs=[_fail_requests,
                                                 _notify_closed])
    handshaking.upon(_peer_subnet_ok, enter=theirs_acked, outputs=[])
    # the peer said its subnet again before ours was ACKed: ACKed again
    # (as in open), nothing changes
    theirs_acked.upon(_peer_subnet_ok, enter=theirs_acked, outputs=[])
    handshaking.upon(_our_subnet_acked, enter=ours_acked, outputs=[])
    ours_acked.upon(_peer_subnet_ok, enter=open,
                    outputs=[_become_open, _propose_compression])
    theirs_acked.upon(_our_subnet_acked, enter=open,
                      outputs=[_become_open, _propose_compression])
    open.upon(_transmission_in, enter=open, outputs=[_read_transmission])
    open.upon(_message_in, enter=open, outputs=[_read_message])
    open.upon(_deliver, enter=open, outputs=[_dispatch_message])
    open.upon(_other_option, enter=open, outputs=[_answer_option])
    open.upon(_peer_subnet_ok, enter=open, outputs=[])
    open.upon(_subnet_mismatch, enter=closing, outputs=[_start_closing])
    open.upon(close, enter=closing, outputs=[_start_closing])
    open.upon(_lost, enter=closed, outputs=[_fail_requests, _notify_closed])
    # closing and closed read nothing more and ignore late events
    for _end in (closing, closed):
        for _ignored in (_transmission_in, _message_in, _deliver,
                         _other_option, _peer_subnet_ok, _our_subnet_acked,
                         _subnet_mismatch, _handshake_timed_out, close):
            _end.upon(_ignored, enter=_end, outputs=[])
    closing.upon(_lost, enter=closed, outputs=[_fail_requests,
                                               _notify_closed])
    closed.upon(_lost, enter=closed, outputs=[])
    del _half, _end, _ignored
