"""misc/demo-journal.py's application as a process that dies where its
kill plan says (tests/journal/demo.py), by SIGKILL to itself: the crash
tests (test_crash.py) run it, from the repository root, as

    python -m tests.journal.journal_app STATE --relay-url URL --code CODE \\
        [--kill POSITION:N] LINE...

It resumes from STATE when the file exists. On a clean end it prints
``closed: RESULT`` (the demo's) and ``transactions: N`` (how many changing
transactions this lifetime made) and exits 0.
"""

import argparse
import os
import signal
import sys

from tests.journal.demo import KillableChatApp, demo


def sigkill_self():
    os.kill(os.getpid(), signal.SIGKILL)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("state")
    parser.add_argument("--relay-url", required=True)
    parser.add_argument("--code", required=True)
    parser.add_argument("--kill", help="POSITION:N, see tests/journal/demo.py")
    parser.add_argument("lines", nargs="+")
    args = parser.parse_args(argv)
    from twisted.internet import reactor

    def out(text):
        print(text, flush=True)

    def done():
        out(f"transactions: {app.changing}")
        reactor.stop()

    def on_death():
        if app.kill[0] == "released":
            # what was released is in the transport's buffer: let two
            # reactor iterations write it to the socket before dying
            reactor.callLater(0, reactor.callLater, 0, sigkill_self)
        else:
            sigkill_self()

    store = demo.FileStore(args.state)
    app = KillableChatApp(reactor, store, out=out, on_done=done)
    kill = None
    if args.kill:
        position, n = args.kill.split(":")
        kill = (position, int(n))
    app.setup_kill(kill, on_death)
    options = dict(_reconnect_delay=0.2, _reconnect_max_delay=1.0)
    if store.exists():
        reactor.callWhenRunning(app.resume, **options)
    else:
        reactor.callWhenRunning(app.start_new, args.relay_url, args.code, args.lines,
                                **options)
    reactor.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
