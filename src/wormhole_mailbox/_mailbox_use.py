# -*- test-case-name: tests.unit.server.test_connection -*-
"""One bound connection's use of a mailbox (Mailbox server protocol, "Mailboxes"): open,
add and close, as an Automat machine of its own. ``Connection`` makes one
at `bind` and routes the mailbox commands to it; the machine answers
through the connection and listens to the mailbox while it is open."""

from __future__ import annotations

from automat import MethodicalMachine

from ._model import ModelError


class _MailboxUse:
    """open / add / close on one connection (Mailbox server protocol, "Mailboxes": one open
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
