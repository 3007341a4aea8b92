"""The course every ``wormhole send`` takes once the peer is known
(docs/transfer-v2.md "The CLI"): announce the code, then transfer-v2 when
the peer speaks it and can dilate, else the classic protocol on the same
wormhole, saying which one is used."""
import attrs
from twisted.internet import defer

from ..session import PeerError
from ._announce import ConsumedNote, announce_code, verified_or_declined
from ._common import make_wormhole, run_and_close
from ._v2_session import (
    first_connection,
    peer_speaks_v2,
    sending_session,
    started,
    wormhole_kwargs,
)
from .ui.connection_path import ConnectionPath
from .ui.screen import say
from .ui.wording import CLASSIC_USED, peer_says


def _no_refusal(w, reason):
    return None


@defer.inlineCallbacks
def send_v2_or_classic(reactor, cfg, classic, over_v2, refuse_classic=_no_refusal,
                       with_wormhole=False):
    """Announce the code, then ``over_v2(session, path)`` once a
    transfer-v2 session is open, or ``classic(cfg, w)`` on the same
    wormhole when the peer does not speak transfer-v2 or cannot dilate
    (``refuse_classic(w, reason)`` may refuse that first, by raising);
    ``with_wormhole``: ``over_v2(session, path, w)``, to tell the peer
    through the mailbox why nothing comes.
    Fires with run_and_close's result: True once done, False when
    interrupted."""
    note = ConsumedNote(cfg.stdout)
    w = make_wormhole(reactor, cfg, "send", on_status_update=note.status_update,
                      **wormhole_kwargs(cfg, "send"))

    @defer.inlineCallbacks
    def body():
        yield announce_code(cfg, w)
        if not peer_speaks_v2((yield w.get_versions())):
            refuse_classic(w, "the receiver only speaks the classic protocol")
            say(cfg, CLASSIC_USED)
            yield classic(cfg, w)
            return
        yield verified_or_declined(reactor, cfg, w)
        path = ConnectionPath(cfg)
        first = first_connection(reactor, cfg)
        session = sending_session(reactor, cfg, w, path, peer_says(cfg), first)
        if not (yield started(cfg, session, first)):
            refuse_classic(w, "the receiver cannot dilate, so only the classic protocol is left")
            # the human already said yes to the verifier
            yield classic(attrs.evolve(cfg, verify=False), w)
            return
        # the receiver stopping on purpose says so in the mailbox
        peer = PeerError.watching(w, session, "receiver")
        try:
            yield peer.unless_error(over_v2(session, path, *((w,) if with_wormhole else ())))
        except Exception:
            if peer.error is not None:
                raise peer.error from None
            raise
    return (yield run_and_close(reactor, cfg, w, body))
