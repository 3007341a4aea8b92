"""A minimal, linear wormhole peer that speaks the wire protocol directly.

It exists to *look inside* what the reference sends: a recording proxy sees
only ciphertext, but a peer that does the PAKE itself can decrypt the
reference's ``version`` phase and application messages and hand the
plaintext to a test.  It uses our sans-I/O ``wormhole._crypto`` (so it is
also an interop test of that module) and nothing else of our client; it
is deliberately not a state machine and not for production: one code
given in advance, no reconnection, no ordering beyond what a test needs.

Wire steps (Mailbox server protocol, "All Message Types"; Client-to-client
protocol): bind, claim
the code's nameplate, open the mailbox, add ``pake``; on the peer's pake,
derive the key, release the nameplate and add ``version``; decrypt the
peer's version and numbered phases; add our own numbered phases; close
with a mood.
"""
import json
import os

from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol, connectWS
from twisted.internet import defer

from wormhole import _crypto


class RawResult:
    def __init__(self):
        self.side = os.urandom(5).hex()
        self.peer_side = None
        self.key = None
        self.peer_version = None      # the decrypted plaintext, parsed
        self.peer_version_bytes = None  # ... and as sent
        self.peer_messages = []       # decrypted numbered phases, in order
        self.peer_other = {}          # other phases (e.g. dilate-0): bytes
        self.mood = None
        self.welcome = None
        self.errors = []


class _RawProtocol(WebSocketClientProtocol):

    def onOpen(self):
        f = self.factory
        self.r = f.result
        self.nameplate = f.code.split("-", 1)[0]
        self.sp, self.pake_body = _crypto.make_pake(f.code, f.appid)
        self.sent_phase = 0
        self.peer_phases = {}
        self.mailbox = None
        self.closing = False
        self.send(type="bind", appid=f.appid, side=self.r.side,
                  client_version=["interop-rawpeer", "0"])
        self.send(type="claim", nameplate=self.nameplate)

    def send(self, **msg):
        msg["id"] = os.urandom(2).hex()
        # text frames: the reference client refuses binary ones
        # (docs/interop.md, "Frames")
        self.sendMessage(json.dumps(msg).encode("utf-8"), False)

    def add(self, phase, body):
        self.send(type="add", phase=phase, body=body.hex())

    def encrypt_add(self, phase, plaintext):
        key = _crypto.derive_phase_key(self.r.key, self.r.side, phase)
        self.add(phase, _crypto.encrypt_data(key, plaintext))

    def onMessage(self, payload, isBinary):
        msg = json.loads(payload.decode("utf-8"))
        kind = msg.get("type")
        if kind == "welcome":
            self.r.welcome = msg.get("welcome")
        elif kind == "claimed":
            self.mailbox = msg["mailbox"]
            self.send(type="open", mailbox=self.mailbox)
            self.add("pake", self.pake_body)
        elif kind == "message" and msg["side"] != self.r.side:
            self.got_peer(msg["phase"], bytes.fromhex(msg["body"]),
                          msg["side"])
        elif kind == "error":
            self.r.errors.append(msg)
        elif kind == "closed":
            self.sendClose()

    def got_peer(self, phase, body, side):
        f = self.factory
        if phase == "pake":
            self.r.peer_side = side
            self.r.key = _crypto.finish_pake(self.sp, body)
            self.send(type="release", nameplate=self.nameplate)
            version = dict(f.version_extra, app_versions=f.versions)
            self.encrypt_add("version", json.dumps(version).encode("utf-8"))
            for plaintext in f.to_send:
                self.encrypt_add(str(self.sent_phase), plaintext)
                self.sent_phase += 1
            return
        key = _crypto.derive_phase_key(self.r.key, side, phase)
        try:
            plaintext = _crypto.decrypt_data(key, body)
        except _crypto.DecryptError:
            self.finish("scary")
            return
        if phase == "version":
            self.r.peer_version_bytes = plaintext
            self.r.peer_version = json.loads(plaintext.decode("utf-8"))
        elif phase.isdigit():
            self.peer_phases[int(phase)] = plaintext
            self.r.peer_messages = [self.peer_phases[i]
                                    for i in sorted(self.peer_phases)]
        else:
            self.r.peer_other[phase] = plaintext
            if f.on_other is not None:
                f.on_other(self, phase, plaintext)
        if f.done_when(self.r):
            self.finish("happy")

    def finish(self, mood):
        if self.closing:
            return
        self.closing = True
        self.r.mood = mood
        self.send(type="close", mailbox=self.mailbox, mood=mood)

    def onClose(self, wasClean, code, reason):
        d, self.factory.done = self.factory.done, None
        if d is not None:
            d.callback(self.r)


def run_raw_peer(reactor, url, appid, code, to_send=(), expect=0,
                 versions=None, timeout=60.0, version_extra=None,
                 on_other=None, done_when=None):
    """Connect, exchange, close; fires with a RawResult once the server
    closed the connection (after our ``close``).

    By default the exchange is done once the peer's version and ``expect``
    numbered messages arrived; ``done_when(result)`` replaces that test.
    ``version_extra`` adds keys before ``app_versions`` in our version
    (e.g. can-dilate); ``on_other(protocol, phase, plaintext)`` sees other
    decrypted phases (``dilate-N``) and may answer with
    ``protocol.encrypt_add(phase, plaintext)``."""
    f = WebSocketClientFactory(url)
    f.protocol = _RawProtocol
    f.result = RawResult()
    f.appid, f.code = appid, code
    f.to_send, f.expect = list(to_send), expect
    f.versions = versions if versions is not None else {}
    f.version_extra = version_extra or {}
    f.on_other = on_other
    f.done_when = done_when or (lambda r: r.peer_version is not None
                                and len(r.peer_messages) >= expect)
    f.done = defer.Deferred()
    connector = connectWS(f)
    # a stuck exchange ends with whatever was collected, for the test to
    # report, instead of hanging until trial's own timeout
    checker = reactor.callLater(timeout, connector.disconnect)

    def stop_checker(result):
        if checker.active():
            checker.cancel()
        return result
    return f.done.addBoth(stop_checker)
