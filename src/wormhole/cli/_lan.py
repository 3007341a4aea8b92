"""``--lan`` for send, share and receive (docs/lan.md; docs/cli.md,
"On a local network"): before the command runs, the sender starts its
LAN Mailbox and the receiver finds it; from there the command is the usual
one, pointed at that server, with no Transit relay (direct connections
only), so nothing is dialled beyond the local network.
"""
from twisted.internet import defer

from .._escape import escape_text
from ..lan import LanError, find, nameplate_of_code, nameplates, serve

ROLES = {"send": "sender", "share": "sender", "receive": "receiver"}


def relay_url_line(lan_mailbox, code):
    """The one extra line a LAN sender prints: how a peer that cannot
    browse mDNS (the reference, another client) reaches the same server."""
    return (f"LAN Mailbox {lan_mailbox.url} (nameplate {lan_mailbox.nameplate}). A peer "
            f"without mDNS: wormhole --relay-url {lan_mailbox.url} receive {code}")


@defer.inlineCallbacks
def with_lan(reactor, command, cfg, role):
    """Run ``command(reactor, cfg)`` with a LAN Mailbox (``role``
    "sender") or the one announcing the code's nameplate ("receiver")."""
    # direct connections only: no relay, for classic and transfer-v2 alike
    cfg.transit_helper = None
    if ROLES[role] == "receiver":
        cfg.relay_url = yield _found(reactor, cfg)
        return (yield defer.maybeDeferred(command, reactor, cfg))
    given = nameplate_of_code(cfg.code) if cfg.code else None
    lan = yield serve(reactor, nameplate=given)
    trigger = reactor.addSystemEventTrigger("before", "shutdown", lan.stop)
    try:
        cfg.relay_url = lan.url
        cfg.code = cfg.code or lan.make_code(cfg.code_length)
        print(relay_url_line(lan, cfg.code), file=cfg.stderr, flush=True)
        return (yield defer.maybeDeferred(command, reactor, cfg))
    finally:
        # the goodbye (docs/lan.md, "Goodbyes"), also after a failure
        reactor.removeSystemEventTrigger(trigger)
        yield lan.stop()


@defer.inlineCallbacks
def _found(reactor, cfg):
    if cfg.code:
        url = yield find(reactor, nameplate_of_code(cfg.code))
        return url
    # no code yet: the prompt completes from the one sender announcing
    heard = yield nameplates(reactor)
    if len(heard) == 1:
        return (yield find(reactor, heard[0]))
    if not heard:
        raise LanError("no sender on this network announces a wormhole code: check that "
                       "the sender runs 'wormhole send --lan' on the same network")
    shown = ", ".join(escape_text(n) for n in heard)
    raise LanError(f"several senders on this network ({shown}): give the code, "
                   "as in 'wormhole receive --lan CODE'")
