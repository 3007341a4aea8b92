"""The Terminator machine: close nameplate and mailbox, then the connection.

Client API, "Closing": ``close()`` has finished when every nameplate and mailbox
has been released on the server and the WebSocket is closed. If the server
will never serve us again (no first connection, or a welcome error), there
is nobody to release anything with: we stop without waiting.
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook


@implementer(_interfaces.ITerminator)
class Terminator:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    @m.serializer()
    def serialize(self, state):
        return {"state": state}

    @m.unserializer()
    def _restore(self, record):
        return record["state"]

    def wire(self, boss, rendezvous_connector, nameplate, mailbox):
        self._B = _interfaces.IBoss(boss)
        self._RC = _interfaces.IRendezvousConnector(rendezvous_connector)
        self._N = _interfaces.INameplate(nameplate)
        self._M = _interfaces.IMailbox(mailbox)

    @m.state(initial=True, serialized="S_open")
    def S_open(self): pass  # noqa

    @m.state(serialized="S_closing_nameplate_and_mailbox")
    def S_closing_nameplate_and_mailbox(self): pass  # noqa

    @m.state(serialized="S_closing_nameplate")
    def S_closing_nameplate(self): pass  # noqa

    @m.state(serialized="S_closing_mailbox")
    def S_closing_mailbox(self): pass  # noqa

    @m.state(serialized="S_stopping")
    def S_stopping(self): pass  # noqa

    @m.state(serialized="S_stopped")
    def S_stopped(self): pass  # noqa

    @m.input()
    def close(self, mood): pass  # noqa

    @m.input()
    def nameplate_done(self): pass  # noqa

    @m.input()
    def mailbox_done(self): pass  # noqa

    @m.input()
    def stopped(self): pass  # noqa

    @m.input()
    def connection_failed(self): pass  # noqa

    @m.state(serialized="S_open_without_server")
    def S_open_without_server(self): pass  # noqa

    @m.output()
    def close_both(self, mood):
        self._N.close()
        self._M.close(mood)

    @m.output()
    def stop_connection(self):
        self._RC.stop()

    @m.output()
    def tell_boss(self):
        self._B.closed()

    S_open.upon(close, enter=S_closing_nameplate_and_mailbox, outputs=[close_both])
    S_closing_nameplate_and_mailbox.upon(nameplate_done, enter=S_closing_mailbox, outputs=[])
    S_closing_nameplate_and_mailbox.upon(mailbox_done, enter=S_closing_nameplate, outputs=[])
    S_closing_nameplate.upon(nameplate_done, enter=S_stopping, outputs=[stop_connection])
    S_closing_mailbox.upon(mailbox_done, enter=S_stopping, outputs=[stop_connection])
    S_stopping.upon(stopped, enter=S_stopped, outputs=[tell_boss])

    S_open.upon(connection_failed, enter=S_open_without_server, outputs=[])
    S_open_without_server.upon(close, enter=S_stopping, outputs=[close_both, stop_connection])
    S_closing_nameplate_and_mailbox.upon(connection_failed, enter=S_stopping,
                                         outputs=[stop_connection])
    S_closing_nameplate.upon(connection_failed, enter=S_stopping, outputs=[stop_connection])
    S_closing_mailbox.upon(connection_failed, enter=S_stopping, outputs=[stop_connection])
    # what the nameplate and mailbox report after we gave up on them
    S_stopping.upon(nameplate_done, enter=S_stopping, outputs=[])
    S_stopping.upon(mailbox_done, enter=S_stopping, outputs=[])
    S_stopping.upon(connection_failed, enter=S_stopping, outputs=[])
    S_stopped.upon(nameplate_done, enter=S_stopped, outputs=[])
    S_stopped.upon(mailbox_done, enter=S_stopped, outputs=[])
    S_stopped.upon(connection_failed, enter=S_stopped, outputs=[])
