"""Opening a transfer-v2 session from the command line (docs/transfer-v2.md
"The CLI"): what the wormhole announces, whether the peer speaks
transfer-v2, the session's timeouts and Dilation options, and its start
(or the fallback to classic when the peer cannot dilate), watched by
``wormhole.session.FirstConnection`` so that a session with no way to the peer fails
in seconds, naming the leg."""
import os

from twisted.internet import defer

from .. import transfer_v2 as T
from ..errors import TransferError
from ..session import FirstConnection, OldPeerCannotDilateError, parse_relay_string
from ..transfer_v2 import app_versions, speaks_transfer_v2
from .ui.progress import PEER_TIMEOUT_HINT
from .ui.screen import say
from .ui.wording import CANNOT_DILATE, V2_USED

# how long a session survives without any connection to the peer (a peer
# that was killed never closes; Dilation would try to reconnect forever):
# then it ends, and a resumable file keeps its bytes for the next attempt.
# A shorter --peer-timeout shortens it too.
PEER_TIMEOUT = 60.0
# transfer-v2 features left out of what we declare, comma-separated: for
# tests that need a peer of ours without one (docs/cli.md "Streams")
WITHOUT_FEATURES = "WORMHOLE_TRANSFER_V2_WITHOUT"


def our_features():
    """The features we declare: all we have, less those the environment
    names in WITHOUT_FEATURES."""
    left_out = set(os.environ.get(WITHOUT_FEATURES, "").split(","))
    return {k: v for k, v in app_versions("send")["transfer-v2"]["features"].items()
            if k not in left_out}


def wormhole_kwargs(cfg, mode):
    """What ``make_wormhole`` adds for transfer-v2 (nothing with --classic)."""
    if cfg.classic:
        return {}
    return {"versions": app_versions(mode, our_features()), "dilation": True}


def peer_speaks_v2(versions):
    """Whether the peer's ``app_versions`` announce a transfer-v2 we speak."""
    return speaks_transfer_v2(versions)


def check_transit_helper(cfg):
    """A malformed --transit-helper fails before a code is allocated, as
    with the classic sender (its own message)."""
    if cfg.transit_helper:
        try:
            parse_relay_string(cfg.transit_helper)
        except ValueError as e:
            raise TransferError(f"bad --transit-helper {cfg.transit_helper!r}: {e}") from None


def timeouts(cfg):
    """A session's timeouts: Dilation without the peer for PEER_TIMEOUT
    (or --peer-timeout if shorter), and an offer's silence of
    ``--peer-timeout`` (docs/security.md)."""
    unreachable = PEER_TIMEOUT
    if cfg.peer_timeout is not None:
        unreachable = min(PEER_TIMEOUT, cfg.peer_timeout)
    return {"peer_timeout": unreachable, "inactivity_timeout": cfg.peer_timeout,
            "timeout_hint": PEER_TIMEOUT_HINT}


def dilate_kwargs(cfg, path, first=None):
    """``w.dilate()``'s options from the command line; ``path`` (a
    ``ConnectionPath``) and ``first`` (a ``FirstConnection``)
    follow Dilation's status."""
    def status_update(status):
        path.status_update(status)
        if first is not None:
            first.status_update(status)
    kwargs = {"no_listen": not cfg.listen, "status_update": status_update}
    if cfg.peer_timeout is not None:
        # a subchannel we closed waits this long for the peer's CLOSE
        # (docs/cli.md, "Options"): a peer that took our offer and stopped
        # reading must not hold the command for Dilation's 300 s
        kwargs["close_timeout"] = cfg.peer_timeout
    if cfg.transit_helper:
        kwargs["transit_relay_location"] = cfg.transit_helper
    return kwargs


def first_connection(reactor, cfg):
    """The watch on a session's first connection, from the command line:
    its failure names the options that turn each leg on."""
    return FirstConnection(reactor, listen=cfg.listen, transit_helper=cfg.transit_helper,
                           hints=(": --no-listen", " (--transit-helper)"))


def sending_session(reactor, cfg, w, path, on_text, first=None):
    """The TransferSession of ``wormhole send`` (mode ``send``)."""
    return T.TransferSession(reactor, w, "send", dilate_kwargs=dilate_kwargs(cfg, path, first),
                             on_text=on_text, features=our_features(), **timeouts(cfg))


def receiving_session(reactor, cfg, w, mode, receiving, on_text, path, first=None):
    """A TransferSession whose offers go to ``receiving`` (a
    ``Receiving``): ``wormhole receive`` (mode ``receive``) and
    ``wormhole share`` (``connect``)."""
    return T.TransferSession(reactor, w, mode, on_offer=receiving.on_offer, on_text=on_text,
                             on_totals=receiving.totals, on_refused=receiving.refused,
                             dilate_kwargs=dilate_kwargs(cfg, path, first),
                             free_space=cfg.free_space, features=our_features(),
                             **timeouts(cfg))


@defer.inlineCallbacks
def opened(session, first):
    """``session.start()``, watched by ``first`` (a FirstConnection): a
    session that cannot reach the peer fails with the leg named
    (``wormhole.session.FirstConnection``)."""
    first.watch(session)
    try:
        yield session.start()
    except OldPeerCannotDilateError:
        raise
    except Exception as e:
        raise first.explain(e) from None
    finally:
        first.stop()
    return session


@defer.inlineCallbacks
def started(cfg, session, first):
    """Start ``session``: True once it is open (we say transfer-v2 is
    used), False when the peer announced transfer-v2 but cannot dilate:
    its version message has no ``can-dilate`` version we share. The
    library gives applications no accessor for that message, but
    ``w.dilate()`` finds out at once, from it, before any Dilation
    message is sent; we say the classic protocol is used, and the caller
    falls back to it on the same wormhole."""
    try:
        yield opened(session, first)
    except OldPeerCannotDilateError:
        say(cfg, CANNOT_DILATE)
        return False
    say(cfg, V2_USED)
    return True

