"""A receiver finds the LAN Mailbox that announces a nameplate
(docs/lan.md, "How it works")."""

from twisted.internet import defer

from ._records import LanError, choose, instance_name

# how long we ask for a nameplate before saying no sender has it: the
# question is repeated at growing intervals within it (RFC 6762, 5.2),
# so a lost packet or two costs time, not the answer
FIND_TIMEOUT = 5.0
# how long `nameplates()` listens to what is announced
BROWSE_TIMEOUT = 2.0
# opening and closing the multicast sockets, bounded
SOCKET_TIMEOUT = 10.0


def _with_mdns(reactor, mdns, bridge, addresses):
    from ._bridge import ThreadBridge, load_zeroconf
    if mdns is None:
        from ._zeroconf import ZeroconfMDNS
        mdns = ZeroconfMDNS(load_zeroconf(), addresses)
    return mdns, bridge or ThreadBridge(reactor)


@defer.inlineCallbacks
def _session(reactor, mdns, bridge, addresses, timeout, call, *args):
    mdns, bridge = _with_mdns(reactor, mdns, bridge, addresses)
    yield bridge.run(SOCKET_TIMEOUT, mdns.open)
    try:
        return (yield bridge.run(timeout + SOCKET_TIMEOUT, call(mdns), *args))
    finally:
        try:
            yield bridge.run(SOCKET_TIMEOUT, mdns.close)
        except Exception:
            pass


@defer.inlineCallbacks
def find(reactor, nameplate, timeout=FIND_TIMEOUT, addresses=None, mdns=None, bridge=None):
    """Fires with the Mailbox URL (``ws://ADDRESS:PORT/v1``) of the one
    sender announcing ``nameplate``; fails with NoSenderFound after
    ``timeout`` seconds without an answer, AmbiguousNameplate when two
    different senders answer."""
    try:
        instance_name(nameplate)
    except ValueError as e:
        raise LanError(str(e)) from None
    heard = yield _session(reactor, mdns, bridge, addresses, timeout,
                           lambda m: m.lookup, nameplate, timeout)
    return choose(nameplate, heard)


def nameplates(reactor, timeout=BROWSE_TIMEOUT, addresses=None, mdns=None, bridge=None):
    """Fires with the nameplates announced on this network, heard within
    ``timeout`` seconds (sorted, shortest first)."""
    return _session(reactor, mdns, bridge, addresses, timeout,
                    lambda m: m.nameplates, timeout)
