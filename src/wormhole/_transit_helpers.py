"""Helpers the reference 0.24 exports from ``wormhole.transit`` that are
not Transit machinery, kept because applications and their tests import
them (docs/api.md "Helpers kept from the reference's transit module")."""

import socket

from twisted.internet import defer


def allocate_tcp_port():
    """A TCP port on 127.0.0.1 that was free a moment ago: bound (never
    listened on) and closed at once. Another process may take it before
    the caller does; tests use it to tell a child process its port."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # so the caller can bind the port at once although ours was closed
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def there_can_be_only_one(contenders):
    """Race Deferreds: the result fires with the first success and the
    other contenders are cancelled; when every one fails it fails with the
    first failure. Cancelling the result cancels every contender.
    An empty list is refused (ValueError): nothing could ever win."""
    contenders = list(contenders)
    if not contenders:
        raise ValueError("there_can_be_only_one() needs at least one Deferred")
    failures = []

    def cancel_all(_=None):
        for c in contenders:
            c.cancel()

    result = defer.Deferred(canceller=cancel_all)

    def won(value, winner):
        if not result.called:
            result.callback(value)
            for c in contenders:
                if c is not winner:
                    c.cancel()

    def lost(f):
        failures.append(f)
        if len(failures) == len(contenders) and not result.called:
            result.errback(failures[0])

    for c in contenders:
        # each contender's own chain ends here: a cancelled loser's
        # CancelledError is not an unhandled error
        c.addCallbacks(won, lost, callbackArgs=(c,))
    return result
