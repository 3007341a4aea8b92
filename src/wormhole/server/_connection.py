# -*- test-case-name: tests.server.test_connection -*-
"""The per-connection protocol machines of the Mailbox server (spec 003).

``Connection`` follows one WebSocket through permission, `bind` and the bound
commands; once bound, its nameplate use (allocate/claim/release) and mailbox
use (open/add/close) are two small machines of their own. Every message is
decoded and checked (``_messages``) before it reaches a machine, so the
machines have no ``if``s about the wire. Everything a connection sends goes
through ``IChannelStore.after_commit``, so it leaves only once the changes
made before it are committed (spec 003 "Persistence").
"""

from __future__ import annotations

from automat import MethodicalMachine
from twisted.logger import Logger
from zope.interface import implementer

from ._interfaces import (IConnection, IMailboxListener, ITransportGlue,
                          IUsageRecorder)
from ._messages import BadMessage, check_type, decode, fields, safe_orig
from ._metrics import MailboxMetrics
from ._model import ModelError
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


class _NameplateUse:
    """allocate / claim / release on one connection (spec 003 "Nameplates":
    one allocation, one claim and one release per connection)."""

    _machine = MethodicalMachine()

    def __init__(self, conn):
        self._conn = conn
        self.name = None  # the nameplate allocated or claimed here

    @_machine.state(initial=True)
    def idle(self):
        "nothing allocated or claimed yet"

    @_machine.state()
    def allocated(self):
        "allocated (which also claims) and not yet claimed explicitly"

    @_machine.state()
    def claimed(self):
        "claimed"

    @_machine.state()
    def released(self):
        "released: this connection is done with nameplates"

    @_machine.input()
    def allocate(self, orig):
        "allocate"

    @_machine.input()
    def claim(self, orig, name):
        "claim"

    @_machine.input()
    def release_own(self, orig):
        "release without a name, or naming the nameplate held here"

    @_machine.input()
    def release_named(self, orig, name):
        "release naming a nameplate other than the one held here"

    @_machine.output()
    def _do_allocate(self, orig):
        conn = self._conn
        try:
            self.name = conn.app.allocate(conn.side, conn.now)
        except ModelError as e:
            return conn.error(str(e), orig)
        conn.respond(orig, {"type": "allocated", "nameplate": self.name})

    @_machine.output()
    def _do_claim(self, orig, name):
        conn = self._conn
        # the connection is tied to the nameplate it asked for even when the
        # claim is refused (crowded), so that its release names the same one
        self.name = name
        try:
            mailbox_id = conn.app.claim(name, conn.side, conn.now)
        except ModelError as e:
            return conn.error(str(e), orig)
        conn.respond(orig, {"type": "claimed", "mailbox": mailbox_id})

    @_machine.output()
    def _do_release_own(self, orig):
        self._release(orig, self.name)

    @_machine.output()
    def _do_release_named(self, orig, name):
        self._release(orig, name)

    def _release(self, orig, name):
        conn = self._conn
        try:
            conn.app.release(name, conn.side, conn.now)
        except ModelError as e:
            return conn.error(str(e), orig)
        conn.respond(orig, {"type": "released"})

    @_machine.output()
    def _err_release_first(self, orig):
        self._conn.error("release without nameplate must follow claim", orig)

    @_machine.output()
    def _err_greedy(self, orig):
        self._conn.error("you already allocated one, don't be greedy", orig)

    @_machine.output()
    def _err_allocate_after_claim(self, orig):
        self._conn.error("allocate must come before claim: this connection "
                         "already claimed a nameplate", orig)

    @_machine.output()
    def _err_one_claim(self, orig, name):
        self._conn.error("only one claim per connection", orig)

    @_machine.output()
    def _err_same_nameplate(self, orig, name):
        self._conn.error("release and claim must use same nameplate", orig)

    @_machine.output()
    def _err_after_release(self, orig):
        self._conn.error("this connection already released its nameplate; "
                         "use a new connection for a new nameplate", orig)

    @_machine.output()
    def _err_one_release(self, orig):
        self._conn.error("only one release per connection", orig)

    idle.upon(allocate, enter=allocated, outputs=[_do_allocate])
    idle.upon(claim, enter=claimed, outputs=[_do_claim])
    idle.upon(release_own, enter=idle, outputs=[_err_release_first])
    idle.upon(release_named, enter=released, outputs=[_do_release_named])
    allocated.upon(allocate, enter=allocated, outputs=[_err_greedy])
    allocated.upon(claim, enter=claimed, outputs=[_do_claim])
    allocated.upon(release_own, enter=released, outputs=[_do_release_own])
    allocated.upon(release_named, enter=allocated,
                   outputs=[_err_same_nameplate])
    claimed.upon(allocate, enter=claimed, outputs=[_err_allocate_after_claim])
    claimed.upon(claim, enter=claimed, outputs=[_err_one_claim])
    claimed.upon(release_own, enter=released, outputs=[_do_release_own])
    claimed.upon(release_named, enter=claimed, outputs=[_err_same_nameplate])
    released.upon(allocate, enter=released, outputs=[_err_after_release])
    released.upon(claim, enter=released, outputs=[_err_one_claim])
    released.upon(release_own, enter=released, outputs=[_err_one_release])
    released.upon(release_named, enter=released, outputs=[_err_one_release])


class _MailboxUse:
    """open / add / close on one connection (spec 003 "Mailboxes": one open
    and one close per connection)."""

    _machine = MethodicalMachine()

    def __init__(self, conn):
        self._conn = conn
        self.mailbox_id = None

    @_machine.state(initial=True)
    def idle(self):
        "no mailbox opened yet"

    @_machine.state()
    def opened(self):
        "subscribed to a mailbox"

    @_machine.state()
    def closed(self):
        "closed: this connection is done with mailboxes"

    @_machine.input()
    def open(self, orig, mailbox_id):
        "open"

    @_machine.input()
    def add(self, orig, phase, body):
        "add"

    @_machine.input()
    def close_own(self, orig, mood):
        "close without a mailbox, or naming the one opened here"

    @_machine.input()
    def close_named(self, orig, mailbox_id, mood):
        "close naming a mailbox other than the one opened here"

    @_machine.input()
    def lost(self):
        "the connection went away"

    @_machine.output()
    def _do_open(self, orig, mailbox_id):
        conn = self._conn
        try:
            old = conn.app.open(mailbox_id, conn.side, conn, conn.now)
        except ModelError as e:
            return conn.error(str(e), orig)
        self.mailbox_id = mailbox_id
        for message in old:
            conn.deliver(message)

    @_machine.output()
    def _do_add(self, orig, phase, body):
        conn = self._conn
        if self.mailbox_id is None:
            # the open was refused (e.g. crowded): as if never opened
            return conn.error("must open mailbox before adding (your open "
                              "was refused)", orig)
        try:
            conn.app.add(self.mailbox_id, conn.side, phase, body, conn.now,
                         orig.get("id"), conn.now)
        except ModelError as e:
            conn.error(str(e), orig)
        else:
            conn.counted_message(body)

    @_machine.output()
    def _do_close_own(self, orig, mood):
        self._close(orig, self.mailbox_id, mood)

    @_machine.output()
    def _do_close_named(self, orig, mailbox_id, mood):
        self._close(orig, mailbox_id, mood)

    def _close(self, orig, mailbox_id, mood):
        conn = self._conn
        if mailbox_id is not None:
            conn.app.stop_listening(mailbox_id, conn)
        try:
            conn.app.close(mailbox_id, conn.side, mood or "happy", conn.now)
        except ModelError as e:
            return conn.error(str(e), orig)
        conn.respond(orig, {"type": "closed"})

    @_machine.output()
    def _stop_listening(self):
        if self.mailbox_id is not None:
            self._conn.app.stop_listening(self.mailbox_id, self._conn)

    @_machine.output()
    def _err_open_first(self, orig, phase, body):
        self._conn.error("must open mailbox before adding", orig)

    @_machine.output()
    def _err_close_needs_open(self, orig, mood):
        self._conn.error("close without mailbox must follow open", orig)

    @_machine.output()
    def _err_one_open(self, orig, mailbox_id):
        self._conn.error("only one open per connection", orig)

    @_machine.output()
    def _err_same_mailbox(self, orig, mailbox_id, mood):
        self._conn.error("open and close must use same mailbox", orig)

    @_machine.output()
    def _err_add_after_close(self, orig, phase, body):
        self._conn.error("this connection already closed its mailbox; "
                         "open it again on a new connection to add", orig)

    @_machine.output()
    def _err_one_close(self, orig):
        self._conn.error("only one close per connection", orig)

    idle.upon(open, enter=opened, outputs=[_do_open])
    idle.upon(add, enter=idle, outputs=[_err_open_first])
    idle.upon(close_own, enter=idle, outputs=[_err_close_needs_open])
    idle.upon(close_named, enter=closed, outputs=[_do_close_named])
    idle.upon(lost, enter=idle, outputs=[])
    opened.upon(open, enter=opened, outputs=[_err_one_open])
    opened.upon(add, enter=opened, outputs=[_do_add])
    opened.upon(close_own, enter=closed, outputs=[_do_close_own])
    opened.upon(close_named, enter=opened, outputs=[_err_same_mailbox])
    opened.upon(lost, enter=closed, outputs=[_stop_listening])
    closed.upon(open, enter=closed, outputs=[_err_one_open])
    closed.upon(add, enter=closed, outputs=[_err_add_after_close])
    closed.upon(close_own, enter=closed, outputs=[_err_one_close])
    closed.upon(close_named, enter=closed, outputs=[_err_one_close])
    closed.upon(lost, enter=closed, outputs=[])


@implementer(IConnection, IMailboxListener)
class Connection:
    """One client's WebSocket, from `welcome` to goodbye (spec 003)."""

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

    def connected(self):
        policy = self._ctx.policy
        welcome = dict(self._ctx.welcome)
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
        # spec 003: direct responses carry the command's `id` and `server_rx`
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
        # spec 003: an `ack` carrying `id` for every command
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
        # spec 003 "bind": client_version is [implementation, version]
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
        # spec 003: a client that binds without (valid) submit-permissions
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
    # spec 003: a server that allows all access "proceeds anyway"
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
