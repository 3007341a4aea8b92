# -*- test-case-name: tests.unit.server.test_connection -*-
"""One bound connection's use of a nameplate (Mailbox server protocol, "Nameplates"):
allocate, claim and release, each at most once, as an Automat machine of
its own. ``Connection`` makes one at `bind` and routes the nameplate
commands to it; the machine answers through the connection."""

from __future__ import annotations

from automat import MethodicalMachine

from ._model import ModelError


class _NameplateUse:
    """allocate / claim / release on one connection (Mailbox server protocol, "Nameplates":
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
