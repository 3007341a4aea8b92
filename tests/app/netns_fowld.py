"""One ``fowld`` on our library and one on the reference 0.24, forwarding
streams both ways through Dilation, inside a network namespace that has
only loopback (run by test_fowld under ``unshare -n``: the reference
advertises every local address, which here is 127.0.0.1).

Usage (inside the namespace): python -m tests.app.netns_fowld REFERENCE_VENV
Prints one JSON line: {"ok": true, ...} or {"ok": false, "error": ...}.

Our fowld allocates the code, the reference's types it. Then two
forwards: a listener on our side whose connections reach a TCP service on
the reference's side, and the mirror; over each, bytes go both ways.
(fowld's "ping" command is not exercised: fowl 26.8.0's pong callback
fails on any library, docs/api.md.)
"""

import json
import os
import sys

from twisted.internet import defer, endpoints, protocol, task

from tests._processes import child_env, free_port
from wormhole_mailbox.testing import start_mailbox_server

PAYLOAD = 100_000
WAIT = 60.0  # seconds for any one step; the whole run is bounded by the test


class Fowld(protocol.ProcessProtocol):
    """A fowld child: JSON commands on stdin, JSON messages on stdout."""

    def __init__(self, name):
        self.name = name
        self.buf = b""
        self.messages = []
        self.waiting = []  # (kind, Deferred)
        self.stderr = b""
        self.ended = defer.Deferred()

    def outReceived(self, data):
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            self.messages.append(msg)
            for w in list(self.waiting):
                if msg.get("kind") in w[0]:
                    self.waiting.remove(w)
                    self.messages.remove(msg)
                    w[1].callback(msg)
                    break

    def errReceived(self, data):
        self.stderr += data

    def processEnded(self, reason):
        for kind, d in self.waiting:
            d.errback(RuntimeError(f"{self.name} ended before {kind!r}: "
                                   f"{self.stderr.decode(errors='replace')[-1500:]}"))
        self.waiting = []
        self.ended.callback(None)

    def command(self, **cmd):
        self.transport.write(json.dumps(cmd).encode() + b"\n")

    def next(self, reactor, *kinds):
        """The next unread message of one of ``kinds``."""
        for msg in self.messages:
            if msg.get("kind") in kinds:
                self.messages.remove(msg)
                return defer.succeed(msg)
        d = defer.Deferred()
        self.waiting.append((kinds, d))
        return d.addTimeout(WAIT, reactor)

    def stop(self):
        if not self.ended.called:
            self.transport.signalProcess("KILL")
        return self.ended


class Collect(protocol.Protocol):
    def connectionMade(self):
        self.got = b""
        self.want = None
        self.enough = defer.Deferred()
        self.factory.made.callback(self)

    def dataReceived(self, data):
        self.got += data
        if self.want is not None and len(self.got) >= self.want and not self.enough.called:
            self.enough.callback(self.got)

    def wait_for(self, reactor, n):
        self.want = n
        if len(self.got) >= n and not self.enough.called:
            self.enough.callback(self.got)
        return self.enough.addTimeout(WAIT, reactor)


def collect_factory():
    f = protocol.Factory.forProtocol(Collect)
    f.made = defer.Deferred()
    return f


def spawn_fowld(reactor, fowld, url, name):
    p = Fowld(name)
    reactor.spawnProcess(p, fowld, [fowld, "--mailbox", url], env=child_env())
    return p


@defer.inlineCallbacks
def forward(reactor, listening_side, connecting_side, name):
    """``listening_side`` listens on a local port whose connections reach a
    TCP service next to ``connecting_side``; bytes go both ways."""
    service_port, listen_port = free_port(), free_port()
    service = collect_factory()
    port = yield endpoints.TCP4ServerEndpoint(reactor, service_port,
                                              interface="127.0.0.1").listen(service)
    try:
        # as fowl's own test_forward: the listening side's "local" (roost),
        # then the far side's "remote" (fledge) for the same name. Each
        # fowld reads its stdin in its own time, so the fledge request can
        # reach the peer before its roost exists; fowl then reports
        # "No service permitted" and we ask again (at most 5 times)
        listening_side.command(kind="local", name=name, local_listen_port=listen_port,
                               remote_connect_port=service_port)
        for _attempt in range(5):
            connecting_side.command(kind="remote", name=name)
            msg = yield connecting_side.next(reactor, "awaiting-connect", "error")
            if msg["kind"] == "awaiting-connect":
                break
        else:
            raise RuntimeError(f"fledge of {name!r} kept failing: {msg}")
        yield listening_side.next(reactor, "listening")
        client_f = collect_factory()
        client = yield endpoints.TCP4ClientEndpoint(reactor, "127.0.0.1", listen_port).connect(
            client_f)
        there = yield service.made.addTimeout(WAIT, reactor)
        out, back = os.urandom(PAYLOAD), os.urandom(PAYLOAD)
        client.transport.write(out)
        got_there = yield there.wait_for(reactor, PAYLOAD)
        there.transport.write(back)
        got_back = yield client.wait_for(reactor, PAYLOAD)
        client.transport.loseConnection()
        return {"there_ok": got_there == out, "back_ok": got_back == back}
    finally:
        yield port.stopListening()


@defer.inlineCallbacks
def run(reactor, ref_venv):
    result = {"ok": False}
    cleanups = []
    processes = []
    try:
        srv = yield start_mailbox_server(reactor)
        cleanups.append(srv.stop)
        ours = spawn_fowld(reactor, os.path.join(os.path.dirname(sys.executable), "fowld"),
                           srv.url, "our fowld")
        cleanups.append(ours.stop)
        processes.append(ours)
        yield ours.next(reactor, "welcome")
        ours.command(kind="allocate-code")
        code = (yield ours.next(reactor, "code-allocated"))["code"]
        ref = spawn_fowld(reactor, os.path.join(ref_venv, "bin", "fowld"), srv.url,
                          "reference fowld")
        cleanups.append(ref.stop)
        processes.append(ref)
        yield ref.next(reactor, "welcome")
        ref.command(kind="set-code", code=code)
        a = yield ours.next(reactor, "peer-connected")
        b = yield ref.next(reactor, "peer-connected")
        result["verifiers_match"] = a["verifier"] == b["verifier"]
        result["ours_to_ref"] = yield forward(reactor, ours, ref, "to-ref")
        result["ref_to_ours"] = yield forward(reactor, ref, ours, "to-ours")
        result["ok"] = True
    except Exception as e:  # the test prints it
        result["error"] = f"{type(e).__name__}: {e}"
        result["unread"] = {p.name: p.messages[-5:] for p in processes}
        result["stderr"] = {p.name: p.stderr.decode(errors="replace")[-1500:] for p in processes}
    finally:
        for c in reversed(cleanups):
            try:
                yield c()
            except Exception:  # ignored: every cleanup runs; the result above is the report
                pass
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    task.react(run, sys.argv[1:])
