#!/usr/bin/env python
"""A whole transfer through the library's session API (docs/api.md
"Sessions"): ``wormhole.session.Transfer`` on both sides, every event
printed as it comes, a policy that answers with a Deferred; then, on our
own servers, a ``Share`` both ways (what ``wormhole share`` does).

    python misc/session-example.py                  # both sides here, on our own
                                                    # Mailbox server and relay (127.0.0.1)
    python misc/session-example.py send PATH...     # on the public servers: prints the code
    python misc/session-example.py receive CODE [FOLDER]

Run it with the project's venv python. Exits 0 when the transfer
succeeded, 1 (with the ``Failed`` event printed) when it did not.
"""
import os
import shutil
import sys
import tempfile

from twisted.internet import defer, task
from zope.interface import implementer

import wormhole
from wormhole import session

APPID = "lothar.com/wormhole/text-or-file-xfer"  # the `wormhole` command's
MAILBOX = "ws://relay.magic-wormhole.io:4000/v1"
RELAY = "tcp:transit.magic-wormhole.io:4001"


@implementer(session.ITransferObserver)
class Printer:
    def __init__(self, side):
        self._side = side

    def event(self, event):
        if not isinstance(event, session.Progress):  # one line per event, but bytes
            print(f"{self._side}: {event!r}", flush=True)


@implementer(session.IReceivePolicy)
class Accept:
    """Takes anything under 1 GB, after thinking about it for a moment."""

    def __init__(self, reactor):
        self._reactor = reactor

    def decide(self, offer):
        return task.deferLater(self._reactor, 0.1, lambda: offer.size < 10 ** 9)


@defer.inlineCallbacks
def send(reactor, paths, mailbox=MAILBOX, relay=RELAY, code_to=None):
    w = wormhole.create(APPID, mailbox, reactor, **session.wormhole_options("send"))
    try:
        w.allocate_code()
        code = yield w.get_code()
        print(f"code: {code}", flush=True)
        if code_to is not None:
            code_to.callback(code)
        yield session.Transfer(reactor, w, APPID, Printer("send"),
                               transit_helper=relay).send(paths)
    finally:
        yield w.close()


@defer.inlineCallbacks
def receive(reactor, code, folder, mailbox=MAILBOX, relay=RELAY):
    w = wormhole.create(APPID, mailbox, reactor, **session.wormhole_options("receive"))
    try:
        w.set_code(code)
        yield session.Transfer(reactor, w, APPID, Printer("receive"), Accept(reactor),
                               folder=folder, transit_helper=relay).receive()
    finally:
        yield w.close()


@defer.inlineCallbacks
def here(reactor):
    """Both sides in this process, on our own servers on 127.0.0.1."""
    from wormhole_mailbox.testing import start_mailbox_server
    from wormhole_relay.testing import start_transit_relay
    work = tempfile.mkdtemp(prefix="session-example-")
    mailbox = yield start_mailbox_server(reactor, port=0)
    relay = yield start_transit_relay(reactor, port=0)
    try:
        src = os.path.join(work, "hello.bin")
        with open(src, "wb") as f:
            f.write(os.urandom(1_000_000))
        folder = os.path.join(work, "inbox")
        os.makedirs(folder)
        code = defer.Deferred()
        sending = send(reactor, [src], mailbox.url, relay.hint, code_to=code)
        receiving = receive(reactor, (yield code), folder, mailbox.url, relay.hint)
        yield defer.gatherResults([sending, receiving], consumeErrors=True)
        with open(src, "rb") as a, open(os.path.join(folder, "hello.bin"), "rb") as b:
            if a.read() != b.read():
                raise RuntimeError("the received file differs")
        print("the file arrived whole", flush=True)
        yield share_both_ways(reactor, work, mailbox.url, relay.hint)
        print("both shared files arrived", flush=True)
    finally:
        yield relay.stop()
        yield mailbox.stop()
        shutil.rmtree(work)


@defer.inlineCallbacks
def share_both_ways(reactor, work, mailbox, relay):
    """Two Shares: each side offers one file, accepts the other's, and
    ends once the other's file is in (``end()`` waits for its own offer)."""
    sides = []
    for name in ("left", "right"):
        w = wormhole.create(APPID, mailbox, reactor, **session.share_options())
        folder = os.path.join(work, name)
        os.makedirs(folder)
        with open(os.path.join(folder, f"from-{name}.txt"), "w") as f:
            f.write(f"hello from the {name}\n")
        sides.append((w, folder))
    (left, left_folder), (right, right_folder) = sides
    left.allocate_code()
    right.set_code((yield left.get_code()))
    results = []
    try:
        for (w, folder), side in ((sides[0], "left"), (sides[1], "right")):
            seen = Printer(f"share {side}")
            share = session.Share(reactor, w, APPID, seen, Accept(reactor), folder=folder,
                                  transit_helper=relay)
            ran = share.run([os.path.join(folder, f"from-{side}.txt")])
            results.append((share, ran))
        # each side ends once its own offer and the other's are done
        for share, _ in results:
            share.end()
        yield defer.gatherResults([ran for _, ran in results], consumeErrors=True)
        for folder, other in ((left_folder, "right"), (right_folder, "left")):
            with open(os.path.join(folder, f"from-{other}.txt")) as f:
                if f.read() != f"hello from the {other}\n":
                    raise RuntimeError("a shared file differs")
    finally:
        yield defer.gatherResults([left.close(), right.close()], consumeErrors=True)


def main(reactor, *argv):
    if not argv:
        return here(reactor)
    if argv[0] == "send" and len(argv) > 1:
        return send(reactor, list(argv[1:]))
    if argv[0] == "receive" and len(argv) in (2, 3):
        return receive(reactor, argv[1], argv[2] if len(argv) == 3 else ".")
    print(__doc__, file=sys.stderr)
    raise SystemExit(2)


if __name__ == "__main__":
    task.react(main, sys.argv[1:])
