"""Helpers for the Dilation interop tests: the reference peer as a
subprocess of its own venv, stopped by PID."""

import json
import os
import signal

from twisted.internet import defer, protocol

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
REF_PEER = os.path.join(HERE, "ref_peer.py")


def reference_python():
    venv = os.environ.get("WORMHOLE_REFERENCE_VENV") or os.path.join(REPO_ROOT, ".venv-ref")
    path = os.path.join(venv, "bin", "python")
    if not os.access(path, os.X_OK):
        # a failure, never a skip: a skipped interop test hides regressions
        raise AssertionError(f"the reference implementation is not installed ({path} "
                             "missing): run `./dev test`")
    return path


def _child_env():
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
           and not k.startswith("WORMHOLE_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


class _Peer(protocol.ProcessProtocol):
    def __init__(self):
        self.buf = b""
        self.lines = []
        self.waiting = []
        self.stderr = b""
        self.ended = defer.Deferred()
        self.pid = None

    def outReceived(self, data):
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            if self.waiting:
                self.waiting.pop(0).callback(line)
            else:
                self.lines.append(line)

    def errReceived(self, data):
        self.stderr += data

    def processEnded(self, reason):
        for d in self.waiting:
            d.errback(AssertionError("reference peer ended; stderr: "
                                     + self.stderr.decode(errors="replace")[-3000:]))
        self.waiting = []
        self.ended.callback(None)

    @defer.inlineCallbacks
    def read(self):
        if self.lines:
            line = self.lines.pop(0)
        else:
            d = defer.Deferred()
            self.waiting.append(d)
            line = yield d
        msg = json.loads(line)
        if "error" in msg:
            raise AssertionError(f"reference peer failed: {msg['error']}; stderr: "
                                 + self.stderr.decode(errors="replace")[-3000:])
        return msg

    @defer.inlineCallbacks
    def stop(self):
        if not self.ended.called:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            from twisted.internet import reactor
            timer = reactor.callLater(5, self._kill)
            yield self.ended
            if timer.active():
                timer.cancel()

    def _kill(self):
        if not self.ended.called:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def spawn_reference_peer(reactor, url, code, relay, no_listen, ping_interval=None):
    proto = _Peer()
    argv = [reference_python(), REF_PEER, url, code, relay, "1" if no_listen else "0"]
    if ping_interval is not None:
        argv.append(str(ping_interval))
    t = reactor.spawnProcess(proto, argv[0], argv, env=_child_env())
    proto.pid = t.pid
    return proto
