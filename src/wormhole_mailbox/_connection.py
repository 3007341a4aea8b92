# -*- test-case-name: tests.unit.server.test_connection -*-
"""The per-connection protocol machine of the Mailbox server (Mailbox server protocol).

``Connection`` follows one WebSocket through permission, `bind` and the bound
commands; once bound, its nameplate use (allocate/claim/release,
``_nameplate_use``) and mailbox use (open/add/close, ``_mailbox_use``) are
two small machines of their own, one module each. Every message is
decoded and checked (``_messages``) before it reaches a machine, so the
machines have no ``if``s about the wire. Everything a connection sends goes
through ``IChannelStore.after_commit``, so it leaves only once the changes
made before it are committed (Mailbox server protocol, "Persistence").
"""

from __future__ import annotations

from automat import MethodicalMachine
from twisted.logger import Logger
from zope.interface import implementer

from ._interfaces import IConnection, IMailboxListener, ITransportGlue, IUsageRecorder
from ._mailbox_use import _MailboxUse
from ._messages import BadMessage, check_type, decode, fields, safe_orig
from ._metrics import MailboxMetrics
from ._nameplate_use import _NameplateUse
from ._permissions import new_secret

log = Logger()

# WebSocket close codes (RFC 6455 section 7.4.1)
CLOSE_NORMAL = 1000
CLOSE_POLICY = 1008


class _Drop:
    """A queued instruction to close the WebSocket after what precedes it."""

    __slots__ = ("code", "reason")

    def __init__(self, code, reason):
        self.code = code
        self.reason = reason


class ServerContext:
    """What every connection of one server shares."""

    def __init__(self, clock, model, store, usage, policy, limits, welcome,
                 allow_list, metrics=None):
        self.clock = clock
        self.model = model
        self.store = store
        self.usage = IUsageRecorder(usage)  # hears of every bind
        self.policy = policy
        self.limits = limits
        self.welcome = welcome  # the `welcome` dict minus permissions
        self.allow_list = allow_list
        self.metrics = metrics or MailboxMetrics()


@implementer(IConnection, IMailboxListener)
class Connection:
    """One client's WebSocket, from `welcome` to goodbye (Mailbox server protocol)."""

    _machine = MethodicalMachine()

    def __init__(self, ctx, glue):
        self._ctx = ctx
        self._glue = ITransportGlue(glue)
        self._appid = None
        self.side = None
        self.now = ctx.clock.seconds()
        self.opened_at = self.now
        self.last_rx = self.now
        self._secret = None
        self._collect = None
        self._np = None
        self._mb = None

    # the public surface: called by the WebSocket glue and the sweeper

    def connected(self, your_address=None):
        policy = self._ctx.policy
        welcome = dict(self._ctx.welcome)
        if your_address is not None:
            # the client learns its outside address for punching
            # (docs/transit.md, "Through a NAT: hole punching")
            welcome["your-address"] = your_address
        if policy.welcome_fields("") is not None:
            self._secret = new_secret()
            welcome["permission-required"] = policy.welcome_fields(
                self._secret)
        self._send({"type": "welcome", "welcome": welcome})
        if policy.allows_without_submission():
            self._start_open()
        else:
            self._start_guarded()

    def received(self, payload):
        self.now = self.last_rx = self._ctx.clock.seconds()
        self._collect = []
        try:
            self._route(payload)
        except Exception:
            # a bug of ours: tell the client, keep serving everyone else
            log.failure("error while handling a client message")
            self.error("internal error in the Mailbox server; please report "
                       "it to the server's operator", "<not echoed>",
                       "internal")
        finally:
            out, self._collect = self._collect, None
            if out:
                self._ctx.store.after_commit(self._transmit_all, out)

    def tick(self, now):
        """Called now and then by the server: enforce the timeouts."""
        self.now = now
        limits = self._ctx.limits
        if now - self.last_rx > limits.idle_timeout:
            self._idle()
        elif now - self.opened_at > limits.bind_timeout:
            self._bind_deadline()

    def too_slow(self):
        """The glue found more unread output than the limit allows."""
        self._too_slow()

    def deliver(self, message):
        self._send(message.as_wire())

    @property
    def app(self):
        """The namespace of our AppID, looked up each time: pruning forgets
        empty namespaces, and a connection must not keep an orphan."""
        return self._ctx.model.app(self._appid)

    # helpers for the machines' outputs

    def counted_message(self, body):
        metrics = self._ctx.metrics
        metrics.messages.inc()
        metrics.message_bytes.inc(len(body) // 2)  # hex: 2 chars a byte

    def error(self, text, orig, kind="refused"):
        """An `error` for the client; ``kind`` names it in the metrics
        (refused, bad_message, internal, bind_timeout, idle_timeout,
        permission)."""
        self._ctx.metrics.errors.labels(kind).inc()
        msg = {"type": "error", "error": text, "orig": safe_orig(orig)}
        if isinstance(orig, dict):
            msg_id = orig.get("id")
            msg["id"] = msg_id if isinstance(msg_id, (str, int, float)) \
                else None
            msg["server_rx"] = self.now
        self._send(msg)

    def respond(self, orig, msg):
        # Mailbox server protocol, "WebSocket Transport": direct responses
        # carry the command's `id` and `server_rx`
        msg["id"] = orig["id"] if "id" in orig else None
        msg["server_rx"] = self.now
        self._send(msg)

    def _send(self, msg):
        if self._collect is not None:
            self._collect.append(msg)
        else:
            self._ctx.store.after_commit(self._transmit_all, [msg])

    def _transmit_all(self, msgs):
        glue = self._glue
        now = self._ctx.clock.seconds()
        for msg in msgs:
            if isinstance(msg, _Drop):
                glue.drop(msg.code, msg.reason)
                return
            msg["server_tx"] = now
            glue.send_json(msg)

    def _route(self, payload):
        try:
            msg = decode(payload, self._ctx.limits.max_message_size,
                         self._ctx.limits.max_json_depth)
        except BadMessage as e:
            if e.limit is not None:
                self._ctx.metrics.refused.labels(e.limit).inc()
            return self.error(e.error, e.orig, "bad_message")
        # Mailbox server protocol, "WebSocket Transport": an `ack` carrying
        # `id` for every command
        msg_id = msg.get("id")
        self._send({"type": "ack",
                    "id": msg_id if isinstance(msg_id, (str, int, float))
                    else None})
        try:
            mtype = check_type(msg)
            args = fields(msg, self._ctx.limits)
        except BadMessage as e:
            return self.error(e.error, e.orig, "bad_message")
        if mtype == "bind":
            self._bind(msg, *args)
        elif mtype == "ping":
            self._ping(msg, *args)
        elif mtype == "submit-permissions":
            refusal = self._ctx.policy.check(args, self._secret or "",
                                             self.now)
            if refusal is None:
                self._permission_granted(msg)
            else:
                self._permission_refused(msg, refusal)
        else:
            self._command(msg, mtype, args)

    def _route_bound(self, msg, mtype, args):
        np, mb = self._np, self._mb
        if mtype == "list":
            ids = self.app.list_nameplate_ids() if self._ctx.allow_list \
                else []
            self.respond(msg, {"type": "nameplates",
                               "nameplates": [{"id": i} for i in ids]})
        elif mtype == "allocate":
            np.allocate(msg)
        elif mtype == "claim":
            np.claim(msg, *args)
        elif mtype == "release":
            (name,) = args
            if name is None or name == np.name:
                np.release_own(msg)
            else:
                np.release_named(msg, name)
        elif mtype == "open":
            mb.open(msg, *args)
        elif mtype == "add":
            mb.add(msg, *args)
        elif mtype == "close":
            mailbox_id, mood = args
            if mailbox_id is None or mailbox_id == mb.mailbox_id:
                mb.close_own(msg, mood)
            else:
                mb.close_named(msg, mailbox_id, mood)

    # the machine

    @_machine.state(initial=True)
    def fresh(self):
        "the WebSocket is not open yet"

    @_machine.state()
    def awaiting_permission(self):
        "welcomed; the server demands submit-permissions before bind"

    @_machine.state()
    def unbound(self):
        "welcomed and permitted; waiting for bind"

    @_machine.state()
    def bound(self):
        "bound to an AppID and side"

    @_machine.state()
    def dropped(self):
        "closed by us or by the client"

    @_machine.input()
    def _start_open(self):
        "the policy lets clients bind without submit-permissions"

    @_machine.input()
    def _start_guarded(self):
        "the policy demands submit-permissions"

    @_machine.input()
    def _permission_granted(self, orig):
        "an acceptable submit-permissions"

    @_machine.input()
    def _permission_refused(self, orig, refusal):
        "an unacceptable submit-permissions"

    @_machine.input()
    def _bind(self, orig, appid, side):
        "bind"

    @_machine.input()
    def _command(self, orig, mtype, args):
        "list/allocate/claim/release/open/add/close"

    @_machine.input()
    def _ping(self, orig, ping):
        "ping"

    @_machine.input()
    def _bind_deadline(self):
        "the client took too long to bind"

    @_machine.input()
    def _idle(self):
        "the client sent nothing for too long"

    @_machine.input()
    def _too_slow(self):
        "the client does not read what we send"

    @_machine.input()
    def lost(self):
        "the WebSocket is gone"

    @_machine.output()
    def _do_bind(self, orig, appid, side):
        self._appid = appid
        self.side = side
        # Mailbox server protocol, "Connection-Specific (Client-to-Server)
        # Messages" (`bind`): client_version is [implementation, version]
        self._ctx.usage.bound(appid, side, orig.get("client_version"),
                              self._ctx.clock.seconds())
        self._np = _NameplateUse(self)
        self._mb = _MailboxUse(self)

    @_machine.output()
    def _do_command(self, orig, mtype, args):
        self._route_bound(orig, mtype, args)

    @_machine.output()
    def _pong(self, orig, ping):
        self.respond(orig, {"type": "pong", "pong": ping})

    @_machine.output()
    def _err_must_bind(self, orig, mtype, args):
        self.error("must bind first", orig)

    @_machine.output()
    def _err_already_bound(self, orig, appid, side):
        self.error("already bound", orig)

    @_machine.output()
    def _err_permission_after_bind(self, orig):
        self.error("submit-permissions must come before bind", orig)

    @_machine.output()
    def _refuse_permission(self, orig, refusal):
        self.error(refusal, orig, "permission")
        self._send(_Drop(CLOSE_POLICY, "permission denied"))

    @_machine.output()
    def _refuse_unpermitted_bind(self, orig, appid, side):
        # Mailbox server protocol, "Connection-Specific (Client-to-Server)
        # Messages": a client that binds without (valid) submit-permissions
        # gets "permission denied" and the connection is closed
        self.error("permission denied: this server requires "
                   "submit-permissions before bind (see "
                   "'permission-required' in the welcome message)", orig,
                   "permission")
        self._send(_Drop(CLOSE_POLICY, "permission denied"))

    @_machine.output()
    def _drop_bind_timeout(self):
        limit = self._ctx.limits.bind_timeout
        self.error(f"no bind within {limit:g} seconds of connecting; "
                   "closing", "<no message>", "bind_timeout")
        self._send(_Drop(CLOSE_POLICY, "bind timeout"))

    @_machine.output()
    def _drop_idle(self):
        limit = self._ctx.limits.idle_timeout
        self.error(f"nothing received for {limit:g} seconds; closing idle "
                   "connection (reconnect to continue)", "<no message>",
                   "idle_timeout")
        self._send(_Drop(CLOSE_NORMAL, "idle timeout"))

    @_machine.output()
    def _abort_slow(self):
        # nothing more can be queued for a client that does not read
        self._glue.abort()

    @_machine.output()
    def _leave(self):
        self._mb.lost()

    fresh.upon(_start_open, enter=unbound, outputs=[])
    fresh.upon(_start_guarded, enter=awaiting_permission, outputs=[])
    fresh.upon(lost, enter=dropped, outputs=[])
    awaiting_permission.upon(_permission_granted, enter=unbound, outputs=[])
    awaiting_permission.upon(_permission_refused, enter=dropped,
                             outputs=[_refuse_permission])
    awaiting_permission.upon(_bind, enter=dropped,
                             outputs=[_refuse_unpermitted_bind])
    awaiting_permission.upon(_command, enter=awaiting_permission,
                             outputs=[_err_must_bind])
    awaiting_permission.upon(_ping, enter=awaiting_permission,
                             outputs=[_pong])
    awaiting_permission.upon(_bind_deadline, enter=dropped,
                             outputs=[_drop_bind_timeout])
    awaiting_permission.upon(_idle, enter=dropped, outputs=[_drop_idle])
    awaiting_permission.upon(_too_slow, enter=dropped, outputs=[_abort_slow])
    awaiting_permission.upon(lost, enter=dropped, outputs=[])
    unbound.upon(_permission_granted, enter=unbound, outputs=[])
    # Mailbox server protocol, "Connection-Specific (Client-to-Server)
    # Messages": a server that allows all access "proceeds anyway"
    unbound.upon(_permission_refused, enter=unbound, outputs=[])
    unbound.upon(_bind, enter=bound, outputs=[_do_bind])
    unbound.upon(_command, enter=unbound, outputs=[_err_must_bind])
    unbound.upon(_ping, enter=unbound, outputs=[_pong])
    unbound.upon(_bind_deadline, enter=dropped, outputs=[_drop_bind_timeout])
    unbound.upon(_idle, enter=dropped, outputs=[_drop_idle])
    unbound.upon(_too_slow, enter=dropped, outputs=[_abort_slow])
    unbound.upon(lost, enter=dropped, outputs=[])
    bound.upon(_permission_granted, enter=bound,
               outputs=[_err_permission_after_bind])
    bound.upon(_permission_refused, enter=bound,
               outputs=[_err_permission_after_bind])
    bound.upon(_bind, enter=bound, outputs=[_err_already_bound])
    bound.upon(_command, enter=bound, outputs=[_do_command])
    bound.upon(_ping, enter=bound, outputs=[_pong])
    bound.upon(_bind_deadline, enter=bound, outputs=[])
    bound.upon(_idle, enter=dropped, outputs=[_drop_idle, _leave])
    bound.upon(_too_slow, enter=dropped, outputs=[_abort_slow, _leave])
    bound.upon(lost, enter=dropped, outputs=[_leave])
    dropped.upon(_permission_granted, enter=dropped, outputs=[])
    dropped.upon(_permission_refused, enter=dropped, outputs=[])
    dropped.upon(_bind, enter=dropped, outputs=[])
    dropped.upon(_command, enter=dropped, outputs=[])
    dropped.upon(_ping, enter=dropped, outputs=[])
    dropped.upon(_bind_deadline, enter=dropped, outputs=[])
    dropped.upon(_idle, enter=dropped, outputs=[])
    dropped.upon(_too_slow, enter=dropped, outputs=[])
    dropped.upon(lost, enter=dropped, outputs=[])
