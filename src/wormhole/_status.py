"""Status as immutable values, pushed to ``create(on_status_update=)``
and to ``dilate(on_status_update=)`` (Dilation protocol, "Initiating Dilation",
``status_update``).

Each change makes a new ``WormholeStatus`` (attrs ``evolve``): how the
Mailbox connection is doing (``mailbox_connection``), whether a shared
key exists and whether the peer has proved it (``peer_key``), and where
the code stands (``ConsumedCode`` once the peer has shown up and the
nameplate is released, so a human knows the code cannot be used again).
``DilationStatus`` wraps the current ``WormholeStatus`` with the Dilation
generation, the peer connection and the hints heard so far.

The names, fields and defaults are the reference 0.24's, because
applications written for it import them from here and compare values
(docs/api.md, "Status", which also lists the aliases this module keeps
for its own older names).
"""

from typing import Optional, Union

from attrs import Factory, evolve, frozen

# -- the Mailbox connection ----------------------------------------------

@frozen
class Disconnected:
    pass


@frozen
class Connecting:
    url: str
    last_attempt: float


@frozen
class Connected:
    url: str


@frozen
class Failed:
    reason: str


@frozen
class Closed:
    pass


ConnectionStatus = Union[Disconnected, Connecting, Connected, Failed, Closed]
MailboxConnection = ConnectionStatus  # this project's first name for it


# -- the shared key ------------------------------------------------------

@frozen
class NoKey:
    """No PAKE message from the peer yet."""


@frozen
class AllegedSharedKey:
    """A key exists, but nothing from the peer has decrypted with it yet."""


@frozen
class ConfirmedKey:
    """A message from the peer decrypted: both sides have the same key
    (Client API, "Events", the "happy" mood)."""


PeerSharedKey = Union[NoKey, AllegedSharedKey, ConfirmedKey]


# -- the code --------------------------------------------------------------

@frozen
class NoCode:
    pass


@frozen
class AllocatedCode:
    """A code is known (allocated here or typed in); the code itself comes
    from ``get_code()``, as in the reference, so this value has no field."""


@frozen
class ConsumedCode:
    """The code's nameplate is used up: both sides have claimed it and the
    server has released it, so nobody else can join with this code."""


CodeStatus = Union[NoCode, AllocatedCode, ConsumedCode]


@frozen
class WormholeStatus:
    """What ``on_status_update`` reports for a wormhole: the Mailbox
    server connection, the shared key and the code."""
    mailbox_connection: ConnectionStatus = Disconnected()
    peer_key: PeerSharedKey = NoKey()
    code: CodeStatus = NoCode()


# -- Dilation's peer connection -------------------------------------------

@frozen
class NoPeer:
    pass


@frozen
class ConnectingPeer:
    last_attempt: float


@frozen
class ConnectedPeer:
    """Dilation has a connection to the peer: since ``connected_at``, over
    the hint ``hint_description`` (``expires_at``: when it is given up
    if nothing is heard, or None)."""
    connected_at: float
    expires_at: Optional[float]
    hint_description: str
    # ours, not the reference's: for a connection the peer opened to our
    # listener (hint_description "inbound"), where it came from, "HOST:PORT"
    peer_address: Optional[str] = None


@frozen
class ReconnectingPeer:
    last_attempt: float


@frozen
class StoppedPeer:
    """Dilation was stopped (the wormhole closed)."""


PeerConnection = Union[NoPeer, ConnectingPeer, ConnectedPeer, ReconnectingPeer, StoppedPeer]


@frozen
class DilationHint:
    """One way to reach the peer that the peer told us about (Dilation
    protocol, "Connection Hint Format"): ``host:port`` and whether it is direct or via a
    Transit relay."""
    url: str
    is_direct: bool


@frozen
class DilationStatus:
    """What ``on_status_update`` reports for a Dilation: the mailbox's
    ``WormholeStatus``, the ``generation`` of the connection, the peer
    connection and the hints."""
    mailbox: WormholeStatus
    generation: int
    peer_connection: PeerConnection = NoPeer()
    hints: set = Factory(set)


class StatusTracker:
    """Keeps the current WormholeStatus; hands each new one to the
    application in a later turn (never from inside a transition), and to
    each subscriber (Dilation's status reporter) at once."""

    def __init__(self, on_status_update, eventual_queue):
        self._callback = on_status_update
        self._eq = eventual_queue
        self._subscribers = []
        self.current = WormholeStatus()

    def subscribe(self, subscriber):
        """``subscriber(status)`` is called with every later WormholeStatus."""
        self._subscribers.append(subscriber)

    def mailbox(self, connection):
        self._update(evolve(self.current, mailbox_connection=connection))

    def peer_key(self, key_status):
        self._update(evolve(self.current, peer_key=key_status))

    def code(self, code_status):
        self._update(evolve(self.current, code=code_status))

    def _update(self, status):
        if status == self.current:
            return
        self.current = status
        if self._callback is not None:
            self._eq.eventually(self._callback, status)
        for subscriber in self._subscribers:
            subscriber(status)
