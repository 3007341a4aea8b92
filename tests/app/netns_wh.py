"""critical-wormhole-tools' ``wh nc`` (netcat over a Dilated wormhole),
one listener and one connector, inside a network namespace that has only
loopback (run by test_wh under ``unshare -n``: Dilation listens on every
address and advertises them all, which here are 127.0.0.1 only).

Usage (inside the namespace):
    python -m tests.app.netns_wh LISTENER_LIBRARY CONNECTOR_LIBRARY
each "reference" or "ours" (tests/app/_apps.py). Prints one JSON line:
{"ok": true, "there": ..., "connector_exit": ...}
or {"ok": false, "error": ...}.

The way its users run it: ``wh nc -l`` prints "Code: CODE" and waits;
``wh nc CODE`` on the other machine says "Connected!"; what is typed at
the connector comes out of the listener's stdout; the end of the
connector's input ends the connector (the listener, as on the reference,
goes on waiting). (wh 0.3.0's listener never attaches its own
stdin to the subchannel, so nothing goes the other way, on either
library: docs/api.md.)
"""

import json
import sys

from twisted.internet import defer, protocol, task

from wormhole_mailbox.testing import start_mailbox_server

from ._apps import app_env, apps_bin

WAIT = 60.0  # seconds for any one step; the whole run is bounded by the test
THERE = b"typed at the connector\n"


class Wh(protocol.ProcessProtocol):
    """A ``wh`` child: waits for text on its stdout or stderr."""

    def __init__(self):
        self.out = {1: b"", 2: b""}
        self.waiting = []  # (fd, text, Deferred)
        self.ended = defer.Deferred()

    def childDataReceived(self, fd, data):
        self.out[fd] = self.out.get(fd, b"") + data
        for w in list(self.waiting):
            if w[1] in self.out[w[0]]:
                self.waiting.remove(w)
                w[2].callback(self.out[w[0]])

    def when(self, reactor, fd, text):
        d = defer.Deferred()
        if text in self.out[fd]:
            d.callback(self.out[fd])
        else:
            self.waiting.append((fd, text, d))
        return d.addTimeout(WAIT, reactor)

    def processEnded(self, reason):
        self.ended.callback(getattr(reason.value, "exitCode", None))

    def stop(self):
        if not self.ended.called:
            self.transport.signalProcess("KILL")
        return self.ended


def ended(reactor, p):
    """The exit code once ``p`` ended by itself (within WAIT), else "running"."""
    d = defer.Deferred()
    timer = reactor.callLater(WAIT, lambda: d.called or d.callback("running"))

    def done(code):
        if not d.called:
            timer.cancel()
            d.callback(code)
    p.ended.addCallback(lambda code: done(code) or code)
    return d


def spawn(reactor, library, url, *args):
    p = Wh()
    wh = apps_bin("wh")
    reactor.spawnProcess(p, wh, [wh, "--relay", url, "nc", *args], env=app_env(library),
                         path="/")
    return p


@defer.inlineCallbacks
def run(reactor, listener_library, connector_library):
    result = {"ok": False}
    srv = yield start_mailbox_server(reactor)
    procs = []
    try:
        listener = spawn(reactor, listener_library, srv.url, "-l")
        procs.append(listener)
        err = yield listener.when(reactor, 2, b"Code: ")
        code = err.split(b"Code: ", 1)[1].split()[0].decode()
        connector = spawn(reactor, connector_library, srv.url, code)
        procs.append(connector)
        yield connector.when(reactor, 2, b"Connected!")
        connector.transport.write(THERE)
        yield listener.when(reactor, 1, THERE)
        result["there"] = True
        # the end of the connector's input ends it
        connector.transport.closeStdin()
        result["connector_exit"] = yield ended(reactor, connector)
        result["ok"] = True
    except Exception as e:  # noqa: BLE001 -- reported in the JSON line
        result["error"] = f"{type(e).__name__}: {e}"
        result["output"] = [{fd: out.decode(errors="replace")[-2000:]
                             for fd, out in p.out.items()} for p in procs]
    finally:
        for p in procs:
            yield p.stop()
        yield srv.stop()
    print(json.dumps(result))


if __name__ == "__main__":
    task.react(run, sys.argv[1:])
