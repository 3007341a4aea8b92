"""The public Node (P2P-D7 "Public surface"): its lifecycle machine, the
dispatch of verified messages by opcode (P2P-D5.5) and flooding with the
Seen set (P2P-D6.8)."""

import ipaddress
import random

from automat import MethodicalMachine
from twisted.internet import defer, task
from twisted.python import log

from wormhole._automat_private import trace_hook

from . import _hybrid, _keys, _message, _payload
from ._config import (
    ACK,
    ANNOUNCE,
    CHANGE_KEY,
    CUSTOM,
    FIND_NODE,
    FIND_VALUE,
    NACK,
    PING,
    SHOUT,
    SPEAK,
    STORE,
    WHISPER,
    LocalLimits,
    SubnetConfig,
)
from ._contacts import Contact, RoutingTable, SeenSet
from ._dht import BadAnswer, Dht
from ._identity import Identity
from ._links import Links
from ._storage import ValueStore
from ._whisper import Whispers

FLOODED = (SHOUT, ANNOUNCE, CHANGE_KEY)



class NodeStopped(Exception):
    """``start()`` of a Node that was stopped: a Node is not restartable
    (make a new one)."""

class Node:
    """One mesh node.

    `endpoint_factory(host, port)` returns an IStreamClientEndpoint;
    `listen_endpoint` (optional) an IStreamServerEndpoint; `advertise` the
    (host, port) other nodes dial, None for a node that accepts no
    connections (the P2P mesh protocol's first goal); `rng` a random.Random (SystemRandom by
    default: it also draws the encryption keys of P2P-D4.1)."""

    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, config, private_key, clock, endpoint_factory,
                 rng=None, limits=None, listen_endpoint=None, advertise=None,
                 bootstrap=()):
        self.config = config or SubnetConfig()
        self.limits = limits or LocalLimits()
        if private_key.key_size != self.config.beta:
            raise ValueError("the key size must be the subnet's β")
        self._clock = clock
        self._rng = rng or random.SystemRandom()
        self._listen_endpoint = listen_endpoint
        self._advertise = advertise
        self._bootstrap = list(bootstrap)
        self._port = None
        self.identity = Identity(private_key, self.config.tau, clock)
        self.table = RoutingTable(self.identity.address, self.config.k,
                                  self.config.tau)
        self.seen = SeenSet(self.limits.seen_size)
        self.links = Links(self, self.identity, self.config, self.limits,
                           clock, endpoint_factory, self._rng, self.table,
                           self.limits.cache_size)
        self.dht = Dht(self.identity, self.config, self.limits, clock,
                       self._rng, self.table, self.links,
                       ValueStore(clock, self.limits.max_entries))
        self.whispers = Whispers(self.identity, self.config, self.limits,
                                 clock, self._rng, self.table, self.links,
                                 self.dht)
        self._callbacks = {}
        self._custom = None
        self._maintenance = task.LoopingCall(self._every_minute)
        self._maintenance.clock = clock
        self.delivered = {}    # opcode → messages delivered to this node

    # -- public surface -----------------------------------------------------

    @property
    def key(self):
        """This node's extended address (DER)."""
        return self.identity.der

    @property
    def address(self):
        return self.identity.address

    def advertised(self):
        """[host, port] for ANNOUNCE (P2P-D5.5)."""
        if self._advertise is not None:
            return list(self._advertise)
        if self._port is not None:
            host = self._port.getHost()
            if ipaddress.ip_address(host.host).is_unspecified:
                # listening on every interface: the port only; the peer
                # that hears our directed ANNOUNCE takes the address it
                # sees us connect from
                return [None, host.port]
            return [host.host, host.port]
        return [None, None]

    def on(self, opcode, callback):
        """Call `callback(sender_der, value)` for each delivered message of
        `opcode` (SHOUT, SPEAK, WHISPER, ANNOUNCE, CHANGE_KEY)."""
        self._callbacks.setdefault(opcode, []).append(callback)

    def register_custom(self, handler):
        """`handler(sender_der, value)` → list (or a Deferred of one): the
        ACK [15, *result]; an exception becomes NACK [15, reason]."""
        self._custom = handler

    def shout(self, value):
        """Flood `value` to the whole network (P2P-D6.8)."""
        return defer.maybeDeferred(self._originate_flood, SHOUT, value)

    def speak(self, value):
        """Send `value` to the direct peers only (P2P-D5.5 SPEAK)."""
        return defer.maybeDeferred(self._originate_flood, SPEAK, value)

    def whisper(self, key, value, encrypt=True):
        """Deliver `value` to the node whose DER is `key` (P2P-D6.10)."""
        return defer.maybeDeferred(self.whispers.send, key, value, encrypt)

    def get(self, key):
        """The value stored under `key` (bytes), or None (P2P-D7.2)."""
        return defer.maybeDeferred(self.dht.get, key)

    def set(self, key, value):
        """Store at the k closest; fires with the number of ACKs (P2P-D7.3);
        a key over 256 bytes or a value over 64 KiB packed fails."""
        return defer.maybeDeferred(self.dht.set, key, value)

    def custom(self, key, value):
        """Send CUSTOM to a directly connected or reachable node."""
        contact = self.table.get(_keys.truncated_address(key,
                                                         self.config.tau))
        if contact is None:
            contact = Contact(key, _keys.truncated_address(
                key, self.config.tau))
        d = self.links.connection_to(contact)
        d.addCallback(lambda conn: conn.request(CUSTOM, value))
        d.addCallback(lambda answer: answer[1:])
        return d

    def connect(self, host, port, transient=False):
        """Dial a peer; a Deferred of the open link."""
        return self.links.dial(host, port, transient=transient)

    def change_key(self, new_private_key):
        """CHANGE_KEY with proof (P2P-D5.5); a Deferred of the direct
        peers' ACK count."""
        current = self.identity.der
        new = _keys.public_der(new_private_key)
        proof = _keys.change_key_proof(new_private_key, current, new)
        value = [current, new, proof]
        payload = _payload.pack(value)
        raw = _message.encode_message(self.identity.private_key, current,
                                      current, CHANGE_KEY, payload)
        (message,) = _message.split_messages(raw, self.config.beta)
        self.seen.check_and_add(message.signature)
        self.identity.change(new_private_key)
        calls = []
        for conn in list(self.links.open.values()):
            calls.append(conn.request_raw(CHANGE_KEY, raw))
        dl = defer.DeferredList(calls, consumeErrors=True)
        return dl.addCallback(lambda rs: sum(1 for ok, _ in rs if ok))

    # -- lifecycle machine --------------------------------------------------

    @m.state(initial=True)
    def created(self): pass  # noqa

    @m.state()
    def running(self): pass  # noqa

    @m.state()
    def stopped(self): pass  # noqa

    @m.input()
    def start(self):
        "Listen, join through the bootstrap peers; a Deferred."

    @m.input()
    def stop(self):
        "Close every link and stop every timer; a Deferred."

    @m.output()
    def _do_start(self):
        d = defer.succeed(None)
        if self._listen_endpoint is not None:
            d = self._listen_endpoint.listen(self.links.inbound_factory)
            d.addCallback(self._listening)
        self.dht.start()
        self._maintenance.start(self.limits.outbound_rerun, now=False)
        d.addCallback(lambda _: self._join())
        return d

    @m.output()
    def _do_stop(self):
        self.links.close_all()
        self.dht.stop()
        self.whispers.stop()
        if self._maintenance.running:
            self._maintenance.stop()
        d = defer.succeed(None)
        if self._port is not None:
            d = defer.maybeDeferred(self._port.stopListening)
        return d.addCallback(lambda _: self.links.all_closed())

    @m.output()
    def _already(self):
        return defer.succeed(None)

    @m.output()
    def _not_again(self):
        return defer.fail(NodeStopped("this node was stopped and cannot start "
                                      "again; make a new Node"))

    created.upon(start, enter=running, outputs=[_do_start],
                 collector=lambda outs: list(outs)[0])
    created.upon(stop, enter=stopped, outputs=[_already],
                 collector=lambda outs: list(outs)[0])
    running.upon(stop, enter=stopped, outputs=[_do_stop],
                 collector=lambda outs: list(outs)[0])
    running.upon(start, enter=running, outputs=[_already],
                 collector=lambda outs: list(outs)[0])
    stopped.upon(stop, enter=stopped, outputs=[_already],
                 collector=lambda outs: list(outs)[0])
    stopped.upon(start, enter=stopped, outputs=[_not_again],
                 collector=lambda outs: list(outs)[0])

    def _listening(self, port):
        self._port = port

    def _join(self):
        """P2P-D6.9: dial the bootstrap peers, look up the own address,
        fill outbound slots, flood one ANNOUNCE."""
        dials = [self.links.dial(host, port, transient=True)
                 for host, port in self._bootstrap]
        d = defer.DeferredList(dials, consumeErrors=True)
        if self._bootstrap:
            d.addCallback(lambda _: self.dht.find_node(self.address))
        d.addCallback(lambda _: self.links.fill_outbound())
        d.addCallback(lambda _: self._originate_flood(ANNOUNCE,
                                                      self.advertised()))
        d.addCallback(lambda _: None)
        return d

    def _every_minute(self):
        self.links.ping_idle()
        self.links.fill_outbound()

    # -- what the links report ------------------------------------------------

    def saw_peer(self, contact):
        """A valid message from a direct peer, or a new link (P2P-D6.5)."""
        is_new = self.table.get(contact.address) is None
        oldest = self.table.offer(contact, self._clock.seconds())
        if oldest is not None:
            self.links.eviction_ping(oldest, contact)
        elif is_new and self.table.get(contact.address) is not None:
            self.links.cache.pop(contact.address)
            self.dht.welcome(self.table.get(contact.address))

    def contact_failed(self, der):
        """P2P-D6.7: out at once if the cache can replace it, else after 3
        consecutive failures."""
        address = _keys.truncated_address(der, self.config.tau)
        if self.table.get(address) is None:
            return
        self.table.failures[address] += 1
        index = self.table.bucket_of(address)
        replacement = next((c for c in self.links.cache.newest_first()
                            if self.table.bucket_of(c.address) == index),
                           None)
        if replacement is not None or self.table.failures[address] >= 3:
            old = self.table.get(address)
            self.table.remove(address)
            self.links.cache.touch(old.address, old)
            if replacement is not None:
                self.links.cache.pop(replacement.address)
                self.table.offer(replacement, self._clock.seconds())

    def link_lost(self, conn):
        address = _keys.truncated_address(conn.peer_key, self.config.tau)
        contact = self.table.get(address)
        if contact is not None:
            self.links.cache.touch(address, contact)
        self.links.fill_outbound()   # P2P-D6.6: re-run on connection loss

    # -- dispatch (P2P-D5.3, 5.5) ---------------------------------------------

    def _deliver(self, opcode, sender, value):
        self.delivered[opcode] = self.delivered.get(opcode, 0) + 1
        for callback in self._callbacks.get(opcode, []):
            try:
                callback(sender, value)
            except Exception:
                log.err(None, "p2pmesh: callback for opcode %d" % opcode)

    def dispatch(self, conn, message, value):
        """A verified message past the handshake; returns the answer of a
        request (P2P-D5.2)."""
        op = message.opcode
        to_ok = (self.identity.is_mine(message.recipient)
                 or message.recipient == message.sender)
        if not to_ok:
            if op == WHISPER:
                return self.whispers.relay(conn, message)
            return (NACK, [op, "not-recipient"])
        if message.sender == conn.peer_key:
            self.saw_peer(self._known(conn.peer_key))
        if op in FLOODED or op == SPEAK:
            if message.encrypted:
                return None   # P2P-D4.3: a broadcast with it set is dropped
            return self._got_broadcast(conn, message, value)
        handler = self._handlers.get(op)
        return handler(self, conn, message, value)

    def _known(self, der):
        address = _keys.truncated_address(der, self.config.tau)
        return self.table.get(address) or Contact(der, address)

    def _ping(self, conn, message, value):
        if value is not None:
            return (NACK, [PING, "malformed"])
        return (ACK, [PING])

    def _find_node(self, conn, message, value):
        return self.dht.answer_find_node(message, value)

    def _find_value(self, conn, message, value):
        return self.dht.answer_find_value(message, value)

    def _store(self, conn, message, value):
        return self.dht.answer_store(message, value)

    def _whisper(self, conn, message, value):
        if message.recipient == message.sender and not \
                self.identity.is_mine(message.recipient):
            return self.whispers.relay(conn, message)
        if message.encrypted:
            try:
                plain = _hybrid.decrypt(self.identity.private_key,
                                        message.payload,
                                        message.associated_data)
                value = _payload.unpack(plain, self.limits.max_depth)
            except _hybrid.Undecryptable:
                return self.whispers.refuse(conn, message, "undecryptable")
            except _payload.Malformed:
                return self.whispers.refuse(conn, message, "malformed")
        self.whispers.deliver(conn, message, value)
        self._deliver(WHISPER, message.sender, value)

    def _custom_request(self, conn, message, value):
        if self._custom is None or message.recipient == message.sender:
            return (NACK, [CUSTOM, "unsupported"])
        d = defer.maybeDeferred(self._custom, message.sender, value)

        def ok(result):
            if not isinstance(result, (list, tuple)):
                result = [result]
            return (ACK, [CUSTOM] + list(result))

        def failed(f):
            return (NACK, [CUSTOM, str(f.value) or f.type.__name__])
        return d.addCallbacks(ok, failed)

    _handlers = {
        PING: _ping,
        FIND_NODE: _find_node,
        FIND_VALUE: _find_value,
        STORE: _store,
        WHISPER: _whisper,
        CUSTOM: _custom_request,
    }

    # -- broadcasts (P2P-D6.8, 6.9) ---------------------------------------------

    def _got_broadcast(self, conn, message, value):
        op = message.opcode
        if op == ANNOUNCE and message.recipient != message.sender:
            # the directed copy (P2P-D6.2) is not relayed
            return self._announced(conn, message.sender, value, direct=True)
        if op == CHANGE_KEY:
            return self._change_key(conn, message, value)
        if op == ANNOUNCE and not self._valid_announce(value):
            return None
        if not self.seen.check_and_add(message.signature):
            return None
        if op == ANNOUNCE:
            self._announced(conn, message.sender, value, direct=False)
        else:
            self._deliver(op, message.sender, value)
        if op != SPEAK or self.limits.forward_speak:
            self._forward(conn, message)
        return None

    def _forward(self, arrival, message):
        for conn in list(self.links.open.values()):
            if conn is not arrival:
                conn.send_raw(message.raw, message.opcode)

    def _originate_flood(self, opcode, value):
        payload = _payload.pack(value, self.limits.max_depth)
        der = self.identity.der
        raw = _message.encode_message(self.identity.private_key, der, der,
                                      opcode, payload)
        self.seen.check_and_add(raw[:self.config.beta // 8])
        for conn in list(self.links.open.values()):
            conn.send_raw(raw, opcode)
        return None

    def _valid_announce(self, value):
        if not isinstance(value, list) or len(value) != 2:
            return False
        try:
            self.dht.contact_from_info([self.identity.der] + value)
        except BadAnswer:
            return False
        return True

    def _announced(self, conn, sender, value, direct):
        """P2P-D6.9: update the contact; maybe dial if outbound < ℓ."""
        if not self._valid_announce(value):
            return None
        if sender == self.identity.der:
            return None
        if direct and value[0] is None and value[1] is not None:
            value = [_peer_host(conn), value[1]]
        contact = self.dht.contact_from_info([sender] + value)
        if direct:
            # link-level news for the routing table, not a delivery
            self.saw_peer(contact)
            self.links.fill_outbound()
            return None
        if self.table.get(contact.address) is not None:
            self.table.offer(contact, self._clock.seconds())
        else:
            self.links.cache.touch(contact.address, contact)
            if not self.table.is_full(contact.address):
                self.saw_peer(contact)
        self._deliver(ANNOUNCE, sender, value)
        self.links.fill_outbound()
        return None

    def _change_key(self, conn, message, value):
        """P2P-D6.9: From = current, proof checked, re-key, ACK if it came
        straight from its originator, relay."""
        direct = message.sender == conn.peer_key
        beta = self.config.beta
        try:
            if (not isinstance(value, list) or len(value) != 3
                    or not all(isinstance(v, bytes) for v in value)
                    or value[0] != message.sender):
                raise ValueError("malformed")
            current, new, proof = value
            _keys.check_canonical(new, beta)
            if not _keys.check_change_key_proof(current, new, proof):
                raise ValueError("bad proof")
        except (ValueError, _keys.NonCanonicalKey):
            return (NACK, [CHANGE_KEY, "malformed"]) if direct else None
        first = self.seen.check_and_add(message.signature)
        if first:
            self._rekey(current, new)
            self._deliver(CHANGE_KEY, current, [current, new])
            self._forward(conn, message)
        if direct:
            conn.peer_key = new
            self.links.open.pop(current, None)
            self.links.open[new] = conn
            return (ACK, [CHANGE_KEY, new])
        return None

    def _rekey(self, current, new):
        tau = self.config.tau
        old = self.table.get(_keys.truncated_address(current, tau))
        if old is None:
            return
        self.table.remove(old.address)
        self.saw_peer(Contact(new, _keys.truncated_address(new, tau),
                              old.host, old.port))

    def whisper_answer(self, conn, message, value):
        self.whispers.answer_arrived(conn, message, value)


def _peer_host(conn):
    """The IP address a link's peer connects from, or None."""
    host = getattr(conn.transport.getPeer(), "host", None)
    try:
        ipaddress.ip_address(host)
    except (TypeError, ValueError):
        return None
    return host
