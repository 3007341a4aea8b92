"""The transfer session (Dilated File Transfer, "Protocol Details"): it
lasts as long as the control channel; either side ends it by closing its
control channel; outstanding offers are then cancelled; the mailbox is
closed only after.

Our mapping of the spec's "control subchannel #0" onto Dilation's named
subprotocols (docs/transfer-v2.md): each side opens one subchannel named
``transfer-v2-control`` and writes its control messages on it; the one
the peer opened is where we read theirs. Closing ours says "I am done";
seeing theirs close means the peer is done.

The machine decides; its neighbour is wired once (``wire``), an
``ISessionDelegate``: ``start_dilation(negotiated)``, ``opened(negotiated)``,
``start_failed(error)``, ``cancel_offers(reason)``, ``close_control()``
and ``closed(reason)``.
"""
from automat import MethodicalMachine
from zope.interface import implementer

from .._automat_private import trace_hook
from . import _versions as V
from ._interfaces import ISession, ISessionDelegate


@implementer(ISession)
class Session:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, our_mode, our_features=None):
        self._our_mode = our_mode
        self._our_features = our_features
        self._d = None

    def wire(self, delegate):
        """Once, before the peer's versions: the ISessionDelegate."""
        self._d = ISessionDelegate(delegate)

    def got_versions(self, their_app_versions):
        """The peer's app_versions: transfer-v2, classic, or no deal."""
        try:
            negotiated = V.negotiate(self._our_mode, their_app_versions, self._our_features)
        except V.PeerUsesClassic as e:
            return self._got_classic(e)
        except V.TransferError as e:
            return self._got_incompatible(e)
        return self._got_transfer_v2(negotiated)

    @m.state(initial=True)
    def S0_negotiating(self): pass  # noqa

    @m.state()
    def S1_connecting(self): pass  # noqa

    @m.state()
    def S2_open(self): pass  # noqa

    @m.state()
    def S3_closing(self): pass  # noqa

    @m.state()
    def S4_closed(self): pass  # noqa

    @m.state()
    def S5_abandoned(self): pass  # noqa

    @m.input()
    def _got_transfer_v2(self, negotiated): pass  # noqa

    @m.input()
    def _got_classic(self, error): pass  # noqa

    @m.input()
    def _got_incompatible(self, error): pass  # noqa

    @m.input()
    def control_connected(self): pass  # noqa

    @m.input()
    def connect_failed(self, error): pass  # noqa

    @m.input()
    def their_control_closed(self): pass  # noqa

    @m.input()
    def our_control_closed(self): pass  # noqa

    @m.input()
    def close(self): pass  # noqa

    @m.input()
    def peer_unreachable(self, seconds): pass  # noqa

    @m.output()
    def _dilate(self, negotiated):
        self._negotiated = negotiated
        self._d.start_dilation(negotiated)

    @m.output()
    def _announce_open(self):
        self._d.opened(self._negotiated)

    @m.output()
    def _fail_start(self, error):
        self._d.start_failed(error)

    @m.output()
    def _cancel_for_peer(self):
        self._d.cancel_offers("the peer ended the session")

    @m.output()
    def _cancel_for_us(self):
        self._d.cancel_offers("the session was closed")

    @m.output()
    def _cancel_for_unreachable(self, seconds):
        self._d.cancel_offers(f"the peer has been unreachable for {seconds} s")

    @m.output()
    def _fail_start_unreachable(self, seconds):
        self._d.start_failed(V.TransferError(
            f"could not reach the peer's Dilation within {seconds} s"))

    @m.output()
    def _announce_unreachable(self, seconds):
        # our control channel cannot close without the peer: it is left to
        # the wormhole's close (Dilation abandons its subchannels)
        self._d.closed(f"the peer has been unreachable for {seconds} s")

    @m.output()
    def _close_ours(self):
        self._d.close_control()

    @m.output()
    def _announce_closed(self):
        self._d.closed("closed")

    @m.output()
    def _announce_never_opened(self):
        self._d.start_failed(V.TransferError("the session was closed before it opened"))
        self._d.closed("closed before it opened")

    S0_negotiating.upon(_got_transfer_v2, enter=S1_connecting, outputs=[_dilate])
    S0_negotiating.upon(_got_classic, enter=S4_closed, outputs=[_fail_start])
    S0_negotiating.upon(_got_incompatible, enter=S4_closed, outputs=[_fail_start])
    S0_negotiating.upon(close, enter=S4_closed, outputs=[_announce_never_opened])
    # the wormhole failed before the peer's versions came (wrong code, closed)
    S0_negotiating.upon(connect_failed, enter=S4_closed, outputs=[_fail_start, _announce_closed])

    S1_connecting.upon(control_connected, enter=S2_open, outputs=[_announce_open])
    S1_connecting.upon(connect_failed, enter=S4_closed, outputs=[_cancel_for_us, _fail_start])
    # the peer may open and close its control before ours is up
    S1_connecting.upon(their_control_closed, enter=S5_abandoned,
                       outputs=[_cancel_for_peer, _announce_never_opened])
    S1_connecting.upon(close, enter=S5_abandoned, outputs=[_cancel_for_us, _announce_never_opened])

    # the peer went away without closing (killed, network gone): after the
    # application's peer_timeout (TransferSession) the session is over
    S1_connecting.upon(peer_unreachable, enter=S4_closed,
                       outputs=[_cancel_for_unreachable, _fail_start_unreachable,
                                _announce_unreachable])
    S2_open.upon(peer_unreachable, enter=S4_closed,
                 outputs=[_cancel_for_unreachable, _announce_unreachable])
    S3_closing.upon(peer_unreachable, enter=S4_closed, outputs=[_announce_unreachable])
    S5_abandoned.upon(peer_unreachable, enter=S4_closed, outputs=[])
    S2_open.upon(their_control_closed, enter=S3_closing, outputs=[_cancel_for_peer, _close_ours])
    S2_open.upon(close, enter=S3_closing, outputs=[_cancel_for_us, _close_ours])
    # Dilation gave up on our control subchannel: the session is over
    S2_open.upon(our_control_closed, enter=S4_closed, outputs=[_cancel_for_peer,
                                                               _announce_closed])

    S3_closing.upon(our_control_closed, enter=S4_closed, outputs=[_announce_closed])
    # our control came up after all: close it, and that ends the session
    S3_closing.upon(control_connected, enter=S3_closing, outputs=[_close_ours])
    S3_closing.upon(connect_failed, enter=S4_closed, outputs=[_announce_closed])
    S3_closing.upon(their_control_closed, enter=S3_closing, outputs=[])
    S3_closing.upon(close, enter=S3_closing, outputs=[])

    # closed before our control came up: close it when it does
    S5_abandoned.upon(control_connected, enter=S5_abandoned, outputs=[_close_ours])
    S5_abandoned.upon(our_control_closed, enter=S4_closed, outputs=[])
    S5_abandoned.upon(connect_failed, enter=S4_closed, outputs=[])
    S5_abandoned.upon(their_control_closed, enter=S5_abandoned, outputs=[])
    S5_abandoned.upon(close, enter=S5_abandoned, outputs=[])

    S4_closed.upon(control_connected, enter=S4_closed, outputs=[_close_ours])
    # closed before the peer's versions came (close() in S0): the session
    # never started, so what they say changes nothing
    for _input in (_got_transfer_v2, _got_classic, _got_incompatible):
        S4_closed.upon(_input, enter=S4_closed, outputs=[])
    for _input in (connect_failed, their_control_closed, our_control_closed, close,
                   peer_unreachable):
        S4_closed.upon(_input, enter=S4_closed, outputs=[])
    del _input
