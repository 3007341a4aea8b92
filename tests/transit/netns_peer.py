"""Our Transit dialing a *listening* reference Transit, inside a network
namespace that has only loopback.

The reference listens on every interface and advertises every address it
finds; our tests may touch 127.0.0.1 only. So test_interop runs this module
under ``unshare -n`` (a fresh namespace: just ``lo``, brought up first),
where the reference can listen freely and everything it advertises is
loopback. Our side uses ``no_listen`` so that it is the one that dials.

Usage (inside the namespace): python -m tests.transit.netns_peer OUR_ROLE
Prints one JSON line: {"ok": true, "describe": ..., "their_hints": [...]}
or {"ok": false, "error": ...}.
"""

import json
import os
import sys

from twisted.internet import defer, task

from wormhole.transit import TransitReceiver, TransitSender

from ._support import ReferenceTransit


class _Cleanups:
    def __init__(self):
        self.cleanups = []

    def addCleanup(self, f, *args):
        self.cleanups.append((f, args))

    @defer.inlineCallbacks
    def run(self):
        for f, args in reversed(self.cleanups):
            yield f(*args)


@defer.inlineCallbacks
def exchange(reactor, our_role):
    cleanups = _Cleanups()
    try:
        their_role = "receiver" if our_role == "sender" else "sender"
        cls = TransitSender if our_role == "sender" else TransitReceiver
        key = os.urandom(32)
        theirs = yield ReferenceTransit.start(cleanups, their_role, no_listen=False)
        ours = cls(None, no_listen=True, reactor=reactor)
        our_hints = yield ours.get_connection_hints()
        ours.add_connection_hints(theirs.hints)
        ours.set_transit_key(key)
        # the reference must have its key before we dial it (it drops
        # earlier inbound connections; ours holds them instead)
        yield theirs.start_connecting(our_hints, key)
        d = ours.connect()
        yield theirs.connected()
        pipe = yield d
        out = [b"to the reference", os.urandom(100000)]
        for r in out:
            pipe.send_record(r)
        got = yield theirs.receive_records(len(out))
        assert got == out, "the reference received other records"
        theirs.send_record(b"from the reference")
        back = yield pipe.receive_record()
        assert back == b"from the reference", f"we received {back!r}"
        yield theirs.close()
        return {"ok": True, "describe": pipe.describe(), "their_hints": theirs.hints}
    except Exception as e:  # noqa: BLE001 -- reported to the test, which fails on it
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}
    finally:
        yield cleanups.run()


def main(reactor, our_role):
    d = exchange(reactor, our_role)
    d.addCallback(lambda result: print(json.dumps(result), flush=True))
    return d


if __name__ == "__main__":
    task.react(main, [sys.argv[1]])
