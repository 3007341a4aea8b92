"""Status as immutable values, pushed to ``create(on_status_update=)``.

Each change makes a new ``WormholeStatus`` (attrs ``evolve``): how the
Mailbox connection is doing, and where the code stands (``ConsumedCode``
once the peer has shown up and the nameplate is released, so a human
knows the code cannot be used again). The peer classes are for Dilation's
``DilationStatus`` (a later issue fills them in). Applications written for
the reference import these names from ``wormhole._status``.
"""

from typing import Optional, Union

from attrs import evolve, frozen


@frozen
class Connecting:
    url: str
    last_attempt: float


@frozen
class Connected:
    url: str


@frozen
class Disconnected:
    pass


@frozen
class Failed:
    reason: str


@frozen
class Closed:
    pass


MailboxConnection = Union[Connecting, Connected, Disconnected, Failed, Closed]


@frozen
class NoCode:
    pass


@frozen
class AllocatedCode:
    code: str


@frozen
class ConsumedCode:
    pass


CodeStatus = Union[NoCode, AllocatedCode, ConsumedCode]


@frozen
class WormholeStatus:
    mailbox_connection: MailboxConnection = Disconnected()
    code: CodeStatus = NoCode()


@frozen
class NoPeer:
    pass


@frozen
class ConnectingPeer:
    last_attempt: float


@frozen
class ConnectedPeer:
    connected_at: float
    expires_at: Optional[float]
    hint_description: str


@frozen
class ReconnectingPeer:
    last_attempt: float


PeerConnection = Union[NoPeer, ConnectingPeer, ConnectedPeer, ReconnectingPeer]


@frozen
class DilationStatus:
    mailbox: WormholeStatus
    generation: int
    peer_connection: PeerConnection = NoPeer()


class StatusTracker:
    """Keeps the current WormholeStatus; hands each new one to the
    application in a later turn (never from inside a transition)."""

    def __init__(self, on_status_update, eventual_queue):
        self._callback = on_status_update
        self._eq = eventual_queue
        self.current = WormholeStatus()

    def mailbox(self, connection):
        self._update(evolve(self.current, mailbox_connection=connection))

    def code(self, code_status):
        self._update(evolve(self.current, code=code_status))

    def _update(self, status):
        if status == self.current:
            return
        self.current = status
        if self._callback is not None:
            self._eq.eventually(self._callback, status)
