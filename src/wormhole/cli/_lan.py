"""``--lan`` for send, share and receive (docs/lan.md; docs/cli.md,
"Options"): before the command runs, the sender starts its
LAN Mailbox and the receiver finds it; from there the command is the usual
one, pointed at that server, with no Transit relay (direct connections
only), so nothing is dialled beyond the local network.
"""
from twisted.internet import defer, task

from ..lan import LanError, find, nameplate_of_code, nameplates, serve
from ..session import escape_text

# what the peer runs, by our command
PEER_RUNS = {"send": "receive {code}", "share": "share --code {code} [PATH]..."}


def relay_url_line(lan_mailbox, code, command="send"):
    """The one extra line a LAN sender prints: how a peer that cannot
    browse mDNS (the reference, another client) reaches the same server."""
    peer = PEER_RUNS[command].format(code=code)
    # no relay either: a peer left with the public one would try to reach
    # it (a DNS lookup at least) for a file
    return (f"LAN Mailbox {lan_mailbox.url} (nameplate {lan_mailbox.nameplate}). A peer "
            f"without mDNS: wormhole --relay-url {lan_mailbox.url} --transit-helper '' "
            f"{peer}")


@defer.inlineCallbacks
def with_lan(reactor, command, cfg, name):
    """Run ``command(reactor, cfg)`` (``name``: send, share or receive)
    with a LAN Mailbox of ours (send; share without --code) or the one
    announcing the code's nameplate (receive; share --code)."""
    # one reactor turn first: the reactor's Ctrl-C handler is installed
    # only then, and what follows (loading zeroconf and our Mailbox
    # server) is the slow part of a start
    yield task.deferLater(reactor, 0, lambda: None)
    # direct connections only: no relay, for classic and transfer-v2 alike
    cfg.transit_helper = None
    if name == "receive" or (name == "share" and cfg.code):
        cfg.relay_url = yield _found(reactor, cfg)
        return (yield defer.maybeDeferred(command, reactor, cfg))
    given = nameplate_of_code(cfg.code) if cfg.code else None
    lan = yield serve(reactor, nameplate=given)
    trigger = reactor.addSystemEventTrigger("before", "shutdown", lan.stop)
    try:
        cfg.relay_url = lan.url
        made = not cfg.code
        cfg.code = cfg.code or lan.make_code(cfg.code_length)
        print(relay_url_line(lan, cfg.code, name), file=cfg.stderr, flush=True)
        if made and name == "share":
            # share says nothing of a code given with --code: this one
            # was made here, so it is said as an allocated one would be
            print(f"Wormhole code is: {cfg.code}\nOn the other computer, please run:\n\n"
                  f"wormhole share --lan --code {cfg.code} [PATH]...\n",
                  file=cfg.stderr, flush=True)
        return (yield defer.maybeDeferred(command, reactor, cfg))
    finally:
        # the goodbye (docs/lan.md, "How it works"), also after a failure
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
