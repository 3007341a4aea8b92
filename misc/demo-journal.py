#!/usr/bin/env python
"""A journalled wormhole application (Journalled mode names this file).

Two people exchange a few lines through a wormhole, each with this
program, and either program may be killed at any moment (SIGKILL, a power
cut) and started again with the same STATE file: it carries on from its
last checkpoint, and each line reaches the other side exactly once,
whenever and however often either side died.

    demo-journal.py STATE --code 7-guitarist-revenge [--relay-url URL] LINE...
    demo-journal.py STATE            # after a crash: resume from STATE

The exchange (the same on both sides): send the first line; each time a
line of the peer's arrives, send the next one, and after the last one
``bye``; when the peer's ``bye`` arrives, close the wormhole. Every event
(the start, each message, the close) is one transaction of the journal:
the state changes, the checkpoint is written (atomically: a temporary file
renamed over STATE), and only then does anything leave the process, the
wormhole's messages and this program's own output alike (docs/journal.md).
The program exits 0 once the wormhole has closed, printing
``closed: happy``.

Run it with the project's venv python.
"""

import argparse
import json
import os
import sys

BYE = "bye"
RELAY_URL = "ws://relay.magic-wormhole.io:4000/v1"
APPID = "lothar.com/wormhole/demo-journal"


class FileStore:
    """The checkpoint: one JSON file, replaced atomically (written under a
    temporary name, flushed to disk, renamed over the old one), so a crash
    leaves either the old checkpoint or the new one, never half of one."""

    def __init__(self, path):
        self.path = path

    def exists(self):
        return os.path.exists(self.path)

    def load(self):
        with open(self.path, encoding="utf-8") as f:
            return json.load(f)

    def save(self, data):
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


class ChatApp:
    """The application of the snippet in Journalled mode, 'Wormhole
    Support', made whole: all of its state is ``self.state`` plus
    ``self.w.serialize()``."""

    def __init__(self, reactor, store, out=print, on_done=None):
        self.reactor = reactor
        self.store = store
        self.out = out
        self.on_done = on_done or (lambda: None)
        self.state = None
        self.w = None
        self.j = self.make_journal()

    def make_journal(self):
        import wormhole
        return wormhole.Journal(self.save_checkpoint)

    # -- starting and restarting ------------------------------------------
    def start_new(self, relay_url, code, lines, **wormhole_options):
        import wormhole
        self.state = {"code": code, "outbox": list(lines) + [BYE], "sent": 0,
                      "received": [], "closed": None}
        self.w = wormhole.create(APPID, relay_url, self.reactor, delegate=self,
                                 journal=self.j, **wormhole_options)
        # a non-wormhole event: performed in the journal's context (11.2)
        with self.j.process():
            self.w.set_code(code)
            self.send_next()

    def resume(self, **wormhole_options):
        import wormhole
        data = self.store.load()
        self.state = data["state"]
        if self.state["closed"] is not None:
            # died after the last checkpoint but before exiting
            self.reactor.callLater(0, self.finished)
            return
        self.w = wormhole.from_serialized(data["wormhole"], self.reactor, delegate=self,
                                          journal=self.j, **wormhole_options)

    # -- the application's logic --------------------------------------------
    def send_next(self):
        sent = self.state["sent"]
        if sent < len(self.state["outbox"]):
            self.w.send_message(self.state["outbox"][sent].encode("utf-8"))
            self.state["sent"] = sent + 1

    # wormhole events arrive inside the journal's context (Journalled mode,
    # "Wormhole Support")
    def wormhole_got_code(self, code):
        pass

    def wormhole_got_welcome(self, welcome):
        pass

    def wormhole_got_unverified_key(self, key):
        pass

    def wormhole_got_verifier(self, verifier):
        pass

    def wormhole_got_versions(self, versions):
        pass

    def wormhole_got_message(self, data):
        text = data.decode("utf-8")
        self.state["received"].append(text)
        if text == BYE:
            self.w.close()
        else:
            self.j.queue_outbound(self.out, f"received: {text}")
            self.send_next()

    def wormhole_closed(self, result):
        self.state["closed"] = result if isinstance(result, str) else repr(result)
        self.j.queue_outbound(self.finished)

    def finished(self):
        self.out(f"closed: {self.state['closed']}")
        self.on_done()

    # -- the checkpoint -----------------------------------------------------
    def save_checkpoint(self):
        data = {"state": self.state,
                "wormhole": self.w.serialize() if self.w is not None else None}
        self.store.save(data)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("state", help="the checkpoint file (resumed from if it exists)")
    parser.add_argument("--code", help="the wormhole code both sides use (a new exchange)")
    parser.add_argument("--relay-url", default=RELAY_URL, help="the Mailbox server")
    parser.add_argument("lines", nargs="*", help="what to send, one message each")
    args = parser.parse_intermixed_args(argv)
    from twisted.internet import reactor
    store = FileStore(args.state)
    app = ChatApp(reactor, store, out=lambda text: print(text, flush=True),
                  on_done=reactor.stop)
    if store.exists():
        reactor.callWhenRunning(app.resume)
    elif args.code and args.lines:
        reactor.callWhenRunning(app.start_new, args.relay_url, args.code, args.lines)
    else:
        parser.error(f"{args.state} does not exist: a new exchange needs --code and LINEs")
    reactor.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
