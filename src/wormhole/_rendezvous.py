"""The RendezvousConnector: our WebSocket to the Mailbox server.

Mailbox server protocol, "WebSocket Transport": JSON dicts, every command with a random
``id``; unknown message types and keys ignored. We wait for the server's
``welcome`` (Mailbox server protocol, "Permission to Use the Server": ``submit-permissions``
must precede ``bind``), then ``bind`` and tell the Nameplate, Mailbox,
Lister and Allocator we are connected, so each re-sends what it still needs.
A lost connection is retried after 1 s, growing by 50% each time, capped at
60 s (Mailbox server protocol, "WebSocket Transport"). If the very first attempt fails we report
ServerConnectionError instead of retrying forever.

A server that accepts us and then drops us again and again (a Mailbox
whose backlog for us it cannot deliver) would have us reconnect
forever without a word: after ``max_quick_drops`` connections in a row
that each ended within ``stable_after`` seconds of opening, we report
ServerConnectionError saying so and stop (docs/security.md "Mailbox
client"). A connection that lasted longer starts the count, and the
backoff, again.
"""

import os

from automat import MethodicalMachine, NoTransition
from twisted.internet.defer import maybeDeferred
from twisted.internet.threads import deferToThreadPool
from zope.interface import implementer

from . import _interfaces
from ._automat_private import refused, trace_hook
from ._hashcash import mint
from ._status import Closed, Connected, Connecting, Disconnected, Failed
from ._ws import WSFactory, choose_permission, parse_relay_url, server_endpoint
from .errors import ProtocolError, ServerConnectionError, WelcomeError
from .util import bytes_to_dict, bytes_to_hexstr, dict_to_bytes, hexstr_to_bytes

MAX_QUICK_DROPS = 8
STABLE_AFTER = 60.0
# Our own server refuses messages over 1 MiB; the reference server has no
# limit, so a peer's large text (hex-encoded, twice its size) may come
# through one. A hostile server still cannot make us buffer more.
MAX_SERVER_MESSAGE = 32 * 1024 * 1024
# how much of a message we could not handle goes into the error
SHOWN_MESSAGE = 300
# the machines' inputs a server message drives directly: one refused in
# the machine's state is a message out of turn (Mailbox server protocol,
# "Nameplates", "Mailboxes")
SERVER_INPUTS = frozenset({
    "rx_claimed", "rx_released", "rx_closed", "rx_allocated", "rx_nameplates",
    "_rx_ours", "_rx_theirs", "_rx_duplicate", "_rx_too_many"})


def _out_of_turn(msg, error):
    """What to say of a server message that the machine it is for does
    not take in its state (a ``claimed`` we never asked for, a ``closed``
    for a mailbox still open): the server's mistake, said as such. None
    for anything else: a refusal deeper down, by a machine the message
    reached through another, is our own bug, not dressed up as the
    server's."""
    if not isinstance(error, NoTransition):
        return None
    name, state = refused(error)
    if name.rsplit(".", 1)[-1] not in SERVER_INPUTS:
        return None
    return (f"the server sent {msg.get('type')!r} out of turn ({name.split('.')[0]} "
            f"was in {state}, not waiting for it): {_shown(msg)}")


def _shown(msg):
    shown = repr(msg)
    if len(shown) > SHOWN_MESSAGE:  # the server chose its size
        shown = shown[:SHOWN_MESSAGE] + f"... ({len(shown)} characters)"
    return shown


@implementer(_interfaces.IRendezvousConnector)
class RendezvousConnector:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, url, appid, side, reactor, journal, tor, timing, client_version, status,
                 initial_delay=1.0, max_delay=60.0, factor=1.5, endpoint_factory=None,
                 mint_f=None, max_quick_drops=MAX_QUICK_DROPS, stable_after=STABLE_AFTER,
                 max_server_message=MAX_SERVER_MESSAGE, nat=None, proxy=None):
        self._status = status
        # a NatObserver (wormhole._transit._punch) when punching
        # (docs/transit.md, "Through a NAT: hole punching")
        # is on: our Mailbox connection's port is then reusable and its
        # welcome's your-address is observed
        self._nat = nat
        self._mint_f = mint_f or self._mint_in_thread
        self._generation = 0  # which connection a stamp was minted for
        self._url = url
        self._appid = appid
        self._side = side
        self._reactor = reactor
        self._journal = journal
        self._tor = tor
        self._proxy = proxy
        self._timing = timing
        self._client_version = client_version
        self._initial_delay = initial_delay
        self._delay = initial_delay
        self._max_delay = max_delay
        self._factor = factor
        self._max_quick_drops = max_quick_drops
        self._stable_after = stable_after
        self._opened_at = None   # when the current WebSocket opened
        self._quick_drops = 0    # connections in a row that ended early
        self._scheme, self._host, self._port = parse_relay_url(url)
        self._endpoint_factory = endpoint_factory or self._make_endpoint
        self._factory = WSFactory(self, url)
        # a frame or message larger than max_server_message makes autobahn
        # fail the connection when the length is read, not buffer it
        # (docs/security.md "Mailbox client")
        self._factory.setProtocolOptions(autoPingInterval=60, autoPingTimeout=600,
                                         maxFramePayloadSize=max_server_message,
                                         maxMessagePayloadSize=max_server_message)
        self._connect_d = None
        self._ws = None
        self._timer = None
        self._handlers = {
            "welcome": self._handle_welcome,
            "nameplates": self._handle_nameplates,
            "allocated": self._handle_allocated,
            "claimed": self._handle_claimed,
            "released": self._handle_released,
            "message": self._handle_message,
            "closed": self._handle_closed,
            "error": self._handle_error,
            "ack": self._ignore,
            "pong": self._ignore,
        }

    def wire(self, boss, nameplate, mailbox, allocator, lister, terminator):
        self._B = _interfaces.IBoss(boss)
        self._N = _interfaces.INameplate(nameplate)
        self._M = _interfaces.IMailbox(mailbox)
        self._A = _interfaces.IAllocator(allocator)
        self._L = _interfaces.ILister(lister)
        self._T = _interfaces.ITerminator(terminator)

    def _mint_in_thread(self, resource, bits):
        # a 20-bit stamp takes about a second of CPU: not in the reactor
        get_pool = getattr(self._reactor, "getThreadPool", None)
        if get_pool is None:  # a test clock
            return maybeDeferred(mint, resource, bits)
        return deferToThreadPool(self._reactor, get_pool(), mint, resource, bits)

    def _make_endpoint(self, scheme, host, port):
        if self._tor is not None:
            return self._tor.stream_via(host, port, tls=(scheme == "wss"))
        if self._proxy is not None:  # docs/proxy.md, "What goes through it"
            return self._proxy.stream_via(host, port, tls=(scheme == "wss"))
        binding = self._nat.binding() if self._nat is not None else None
        return server_endpoint(self._reactor, scheme, host, port, binding)

    # -- states ---------------------------------------------------------
    @m.state(initial=True, serialized="S0_idle")
    def S0_idle(self): pass  # noqa

    @m.state(serialized="S1_connecting_first")
    def S1_connecting_first(self): pass  # noqa

    @m.state(serialized="S1_connecting")
    def S1_connecting(self): pass  # noqa

    @m.state(serialized="S2_awaiting_welcome")
    def S2_awaiting_welcome(self): pass  # noqa

    @m.state(serialized="S2m_minting")
    def S2m_minting(self): pass  # noqa

    @m.state(serialized="S3_bound")
    def S3_bound(self): pass  # noqa

    @m.state(serialized="S4_waiting")
    def S4_waiting(self): pass  # noqa

    @m.state(serialized="S5_stopping")
    def S5_stopping(self): pass  # noqa

    @m.state(serialized="S6_stopped")
    def S6_stopped(self): pass  # noqa

    @m.state(serialized="S7_failed")
    def S7_failed(self): pass  # noqa

    @m.state(serialized="S8_refused")
    def S8_refused(self): pass  # noqa

    # -- serialization: the wish, never the connection (Journalled mode, "Requirements")
    _WANT = {"S0_idle": "connect", "S1_connecting_first": "connect",
             "S1_connecting": "connect", "S2_awaiting_welcome": "connect",
             "S2m_minting": "connect", "S3_bound": "connect", "S4_waiting": "connect",
             "S5_stopping": "stop", "S6_stopped": "stopped", "S7_failed": "failed",
             "S8_refused": "failed"}
    # where a restored connector starts; the Boss then resume()s or stop()s it
    _RESTORED = {"connect": "S0_idle", "stop": "S0_idle", "stopped": "S6_stopped",
                 "failed": "S7_failed"}

    @m.serializer()
    def serialize(self, state):
        return {"want": self._WANT[state]}

    @m.unserializer()
    def _restore(self, record):
        return self._RESTORED[record["want"]]

    @m.input()
    def resume(self): pass  # noqa

    # -- inputs ---------------------------------------------------------
    @m.input()
    def start(self): pass  # noqa

    @m.input()
    def stop(self): pass  # noqa

    @m.input()
    def ws_open(self, proto): pass  # noqa

    def ws_close(self, was_clean, code, reason):
        self._in_journal(self._route_close, was_clean, code, reason)

    def _route_close(self, was_clean, code, reason):
        # validated and routed (STYLE: the machine itself has no ifs):
        # an opened connection that ended early counts towards giving up
        if self._opened_at is not None:
            lasted = self._reactor.seconds() - self._opened_at
            if lasted < self._stable_after:
                # the backoff keeps growing too: no hammering a server
                # that accepts us only to drop us
                self._quick_drops += 1
            else:
                self._quick_drops = 0
                self._delay = self._initial_delay
            if self._quick_drops >= self._max_quick_drops:
                self._ws_dropped_too_often(was_clean, code, reason)
                return
        self._ws_close(was_clean, code, reason)

    def _in_journal(self, fn, *args):
        # Journalled mode, "Wormhole Support": what the reactor (not the server) starts, a lost
        # connection, a failed connect, a minted stamp, may end in messages
        # or delegate events: they are a transaction of their own
        with self._journal.process():
            fn(*args)

    @m.input()
    def _ws_close(self, was_clean, code, reason): pass  # noqa

    @m.input()
    def _ws_dropped_too_often(self, was_clean, code, reason): pass  # noqa

    @m.input()
    def _connect_failed(self, f): pass  # noqa

    @m.input()
    def _timer_expired(self): pass  # noqa

    @m.input()
    def _rx_welcome(self, welcome): pass  # noqa

    @m.input()
    def _rx_challenge(self, welcome, resource, bits): pass  # noqa

    @m.input()
    def _stamp_ready(self, stamp): pass  # noqa

    @m.input()
    def _rx_unwelcome(self, error): pass  # noqa

    # -- outputs --------------------------------------------------------
    @m.output()
    def connect(self):
        self._timer = None
        self._status.mailbox(Connecting(self._url, self._reactor.seconds()))
        ep = self._endpoint_factory(self._scheme, self._host, self._port)
        d = self._connect_d = ep.connect(self._factory)

        def _connected(proto):
            self._connect_d = None
            self._ws = proto  # the WebSocket handshake is still to come

        def _failed(f):
            self._connect_d = None
            if self._nat is not None:
                self._nat.connect_failed()
            self._in_journal(self._connect_failed, f)
        d.addCallbacks(_connected, _failed)

    @m.output()
    def cancel_connect(self):
        if self._connect_d is not None:
            self._connect_d.cancel()  # -> _connect_failed
        elif self._ws is not None:
            self._ws.transport.loseConnection()  # -> ws_close

    @m.output()
    def record_ws(self, proto):
        self._generation += 1
        self._opened_at = self._reactor.seconds()
        self._ws = proto
        host = getattr(proto.transport, "getHost", None)
        if self._nat is not None and host is not None:
            self._nat.connected(host().port)

    @m.output()
    def drop_ws(self):
        # a clean WebSocket close; autobahn drops the TCP connection itself
        # if the server does not answer in time
        self._ws.sendClose()

    @m.output()
    def forget_ws(self):
        self._generation += 1  # a stamp still being minted is now useless
        self._opened_at = None
        self._ws = None

    @m.output()
    def schedule_reconnect(self):
        self._timer = self._reactor.callLater(self._delay, self._timer_expired)
        self._delay = min(self._delay * self._factor, self._max_delay)

    @m.output()
    def cancel_timer(self):
        self._timer.cancel()
        self._timer = None

    @m.output()
    def report_connect_failed(self, f):
        self._status.mailbox(Failed(f.getErrorMessage()))
        # the exception itself, as the reference 0.24: applications test
        # isinstance(e.reason, ConnectionRefusedError)
        self._B.error(ServerConnectionError(self._url, f.value))

    @m.output()
    def report_ws_failed(self, was_clean, code, reason):
        reason = reason or f"WebSocket closed ({code})"
        self._status.mailbox(Failed(reason))
        self._B.error(ServerConnectionError(self._url, reason))

    @m.output()
    def report_given_up(self, was_clean, code, reason):
        why = (f"our connection to it ended {self._quick_drops} times in a row, each within "
               f"{self._stable_after:g} s of connecting (last: {reason or code}); giving up. "
               "It may hold more for this mailbox than it can deliver "
               "(docs/security.md)")
        self._status.mailbox(Failed(why))
        self._B.error(ServerConnectionError(self._url, why))

    @m.output()
    def deliver_welcome(self, welcome):
        if self._nat is not None:
            self._nat.welcomed(welcome)
        self._B.rx_welcome(welcome)

    @m.output()
    def start_minting(self, welcome, resource, bits):
        generation = self._generation

        def minted(stamp):
            # only for the connection whose welcome asked for it
            if generation == self._generation:
                # submit-permissions, bind and the re-sends are outbound
                # messages: checkpointed first (Journalled mode, "Wormhole Support")
                self._in_journal(self._stamp_ready, stamp)

        def failed(f):
            if generation == self._generation:
                self._in_journal(self._B.error, WelcomeError(
                    f"could not mint a hashcash stamp: {f.getErrorMessage()}"))
        self._mint_f(resource, bits).addCallbacks(minted, failed)

    @m.output()
    def tx_submit_permissions(self, stamp):
        # Mailbox server protocol, "Permission to Use the Server":
        # submit-permissions goes before bind
        self._tx("submit-permissions", method="hashcash", stamp=stamp)

    @m.output()
    def tx_bind(self):
        self._tx("bind", appid=self._appid, side=self._side,
                 client_version=list(self._client_version))

    @m.output()
    def notify_connected(self):
        self._status.mailbox(Connected(self._url))
        self._N.connected()
        self._M.connected()
        self._L.connected()
        self._A.connected()

    @m.output()
    def notify_lost(self):
        self._status.mailbox(Disconnected())
        self._N.lost()
        self._M.lost()
        self._L.lost()
        self._A.lost()

    @m.output()
    def deliver_unwelcome(self, error):
        self._status.mailbox(Failed(str(error)))
        self._B.rx_unwelcome(error)

    @m.output()
    def tell_failed(self):
        # the server will not serve us (again): nothing can be released
        if self._nat is not None:
            self._nat.stop()
        self._T.connection_failed()

    @m.output()
    def tell_stopped(self):
        if self._nat is not None:
            self._nat.stop()
        self._status.mailbox(Closed())
        self._T.stopped()

    # -- transitions ----------------------------------------------------
    S0_idle.upon(start, enter=S1_connecting_first, outputs=[connect])
    S0_idle.upon(stop, enter=S6_stopped, outputs=[tell_stopped])
    # a restored wormhole retries, never gives up (its process may have
    # been restarted while the server was away); closed before it resumed,
    # it stays closed
    S0_idle.upon(resume, enter=S1_connecting, outputs=[connect])
    S5_stopping.upon(resume, enter=S5_stopping, outputs=[])
    S6_stopped.upon(resume, enter=S6_stopped, outputs=[])

    S1_connecting_first.upon(ws_open, enter=S2_awaiting_welcome, outputs=[record_ws])
    S1_connecting_first.upon(_connect_failed, enter=S7_failed,
                             outputs=[report_connect_failed, tell_failed])
    S1_connecting_first.upon(_ws_close, enter=S7_failed,
                             outputs=[forget_ws, report_ws_failed, tell_failed])
    S1_connecting_first.upon(stop, enter=S5_stopping, outputs=[cancel_connect])

    S1_connecting.upon(ws_open, enter=S2_awaiting_welcome, outputs=[record_ws])
    S1_connecting.upon(_connect_failed, enter=S4_waiting, outputs=[schedule_reconnect])
    S1_connecting.upon(_ws_close, enter=S4_waiting, outputs=[forget_ws, schedule_reconnect])
    S1_connecting.upon(stop, enter=S5_stopping, outputs=[cancel_connect])

    S2_awaiting_welcome.upon(_rx_welcome, enter=S3_bound,
                             outputs=[deliver_welcome, tx_bind, notify_connected])
    S2_awaiting_welcome.upon(_rx_challenge, enter=S2m_minting,
                             outputs=[deliver_welcome, start_minting])
    S2_awaiting_welcome.upon(_rx_unwelcome, enter=S8_refused,
                             outputs=[deliver_unwelcome, tell_failed, drop_ws])
    S2_awaiting_welcome.upon(_ws_close, enter=S4_waiting, outputs=[forget_ws, schedule_reconnect])
    S2_awaiting_welcome.upon(stop, enter=S5_stopping, outputs=[drop_ws])

    S2m_minting.upon(_stamp_ready, enter=S3_bound,
                     outputs=[tx_submit_permissions, tx_bind, notify_connected])
    S2m_minting.upon(_ws_close, enter=S4_waiting, outputs=[forget_ws, schedule_reconnect])
    S2m_minting.upon(stop, enter=S5_stopping, outputs=[drop_ws])
    S2m_minting.upon(_rx_welcome, enter=S2m_minting, outputs=[])
    S2m_minting.upon(_rx_challenge, enter=S2m_minting, outputs=[])
    S2m_minting.upon(_rx_unwelcome, enter=S2m_minting, outputs=[deliver_unwelcome])

    S3_bound.upon(_rx_welcome, enter=S3_bound, outputs=[])
    S3_bound.upon(_rx_challenge, enter=S3_bound, outputs=[])
    S3_bound.upon(_rx_unwelcome, enter=S3_bound, outputs=[deliver_unwelcome])
    S3_bound.upon(_ws_close, enter=S4_waiting,
                  outputs=[forget_ws, notify_lost, schedule_reconnect])
    S3_bound.upon(stop, enter=S5_stopping, outputs=[drop_ws])

    # the server keeps dropping us soon after we connect: say so, stop
    S2_awaiting_welcome.upon(_ws_dropped_too_often, enter=S7_failed,
                             outputs=[forget_ws, report_given_up, tell_failed])
    S2m_minting.upon(_ws_dropped_too_often, enter=S7_failed,
                     outputs=[forget_ws, report_given_up, tell_failed])
    S3_bound.upon(_ws_dropped_too_often, enter=S7_failed,
                  outputs=[forget_ws, notify_lost, report_given_up, tell_failed])
    # ...but where a close is what we asked for, it is only a close
    S5_stopping.upon(_ws_dropped_too_often, enter=S6_stopped, outputs=[forget_ws, tell_stopped])
    S8_refused.upon(_ws_dropped_too_often, enter=S7_failed, outputs=[forget_ws])

    S4_waiting.upon(_timer_expired, enter=S1_connecting, outputs=[connect])
    S4_waiting.upon(stop, enter=S6_stopped, outputs=[cancel_timer, tell_stopped])

    S5_stopping.upon(ws_open, enter=S5_stopping, outputs=[drop_ws])
    S5_stopping.upon(_ws_close, enter=S6_stopped, outputs=[forget_ws, tell_stopped])
    S5_stopping.upon(_connect_failed, enter=S6_stopped, outputs=[tell_stopped])
    S5_stopping.upon(_rx_welcome, enter=S5_stopping, outputs=[])
    S5_stopping.upon(_rx_challenge, enter=S5_stopping, outputs=[])
    S5_stopping.upon(_stamp_ready, enter=S5_stopping, outputs=[])
    S5_stopping.upon(_rx_unwelcome, enter=S5_stopping, outputs=[])
    S5_stopping.upon(stop, enter=S5_stopping, outputs=[])

    S6_stopped.upon(stop, enter=S6_stopped, outputs=[])
    S6_stopped.upon(_rx_welcome, enter=S6_stopped, outputs=[])
    S6_stopped.upon(_rx_challenge, enter=S6_stopped, outputs=[])
    S6_stopped.upon(_rx_unwelcome, enter=S6_stopped, outputs=[])

    S7_failed.upon(stop, enter=S6_stopped, outputs=[tell_stopped])
    S7_failed.upon(_rx_welcome, enter=S7_failed, outputs=[])
    S7_failed.upon(_rx_challenge, enter=S7_failed, outputs=[])
    S7_failed.upon(_rx_unwelcome, enter=S7_failed, outputs=[])

    # refused by the welcome: closing the connection, never reconnecting
    S8_refused.upon(_ws_close, enter=S7_failed, outputs=[forget_ws])
    S8_refused.upon(stop, enter=S5_stopping, outputs=[])
    S8_refused.upon(_rx_welcome, enter=S8_refused, outputs=[])
    S8_refused.upon(_rx_challenge, enter=S8_refused, outputs=[])
    S8_refused.upon(_rx_unwelcome, enter=S8_refused, outputs=[])

    # -- outbound ---------------------------------------------------------
    def _tx(self, mtype, **kwargs):
        # the id is only for the timing tool (Mailbox server protocol,
        # "WebSocket Transport")
        msg = dict(kwargs, type=mtype, id=bytes_to_hexstr(os.urandom(2)))
        self._timing.add("ws_send", _side=self._side, **msg)
        payload = dict_to_bytes(msg)
        self._journal.queue_outbound(self._ws.sendMessage, payload, False)

    def tx_claim(self, nameplate):
        self._tx("claim", nameplate=nameplate)

    def tx_release(self, nameplate):
        self._tx("release", nameplate=nameplate)

    def tx_open(self, mailbox):
        self._tx("open", mailbox=mailbox)

    def tx_add(self, phase, body):
        self._tx("add", phase=phase, body=bytes_to_hexstr(body))

    def tx_close(self, mailbox, mood):
        self._tx("close", mailbox=mailbox, mood=mood)

    def tx_allocate(self):
        self._tx("allocate")

    def tx_list(self):
        self._tx("list")

    # -- inbound ----------------------------------------------------------
    def ws_message(self, payload):
        with self._journal.process():
            try:
                msg = bytes_to_dict(payload)
            except (TypeError, ValueError) as e:
                self._B.error(ProtocolError(f"the server sent something that is not a "
                                            f"JSON object: {e}"))
                return
            self._timing.add("ws_receive", _side=self._side, message=msg)
            handler = self._handlers.get(msg.get("type"), self._ignore)
            try:
                handler(msg)
            except Exception as e:  # malformed, or out of turn: say which
                self._B.error(ProtocolError(
                    _out_of_turn(msg, e) or
                    f"cannot handle {msg.get('type')!r} message from the server "
                    f"({type(e).__name__}: {e}): {_shown(msg)}"))

    @staticmethod
    def _field(msg, key, kind):
        value = msg[key]
        if not isinstance(value, kind):
            raise TypeError(f"{key!r} must be {kind.__name__}, not {type(value).__name__}")
        return value

    def _ignore(self, msg):
        pass

    def _handle_welcome(self, msg):
        welcome = self._field(msg, "welcome", dict)
        if "error" in welcome:
            self._rx_unwelcome(WelcomeError(str(welcome["error"])))
            return
        try:
            challenge = choose_permission(welcome)
        except WelcomeError as e:
            self._rx_unwelcome(e)
            return
        if challenge is None:
            self._rx_welcome(welcome)
        else:
            resource, bits = challenge
            self._rx_challenge(welcome, resource, bits)

    def _handle_nameplates(self, msg):
        nameplates = self._field(msg, "nameplates", list)
        ids = []
        for n in nameplates:
            if not isinstance(n, dict) or not isinstance(n.get("id"), str):
                raise TypeError(f"nameplate entry must be {{'id': str}}, not {n!r}")
            ids.append(n["id"])
        self._L.rx_nameplates(ids)

    def _handle_allocated(self, msg):
        self._A.rx_allocated(self._field(msg, "nameplate", str))

    def _handle_claimed(self, msg):
        self._N.rx_claimed(self._field(msg, "mailbox", str))

    def _handle_released(self, msg):
        self._N.rx_released()

    def _handle_message(self, msg):
        side = self._field(msg, "side", str)
        phase = self._field(msg, "phase", str)
        body = hexstr_to_bytes(self._field(msg, "body", str))
        self._M.rx_message(side, phase, body)

    def _handle_closed(self, msg):
        self._M.rx_closed()

    def _handle_error(self, msg):
        orig = msg.get("orig")
        self._B.rx_error(str(msg.get("error", "")), orig)
        # An error answering our release or close (e.g. "crowded") is the
        # server's last word on it: waiting for released/closed would make
        # close() hang forever (Client API, "Closing" says close always finishes).
        what = orig.get("type") if isinstance(orig, dict) else None
        if what == "release":
            self._N.rx_released()
        elif what == "close":
            self._M.rx_closed()
