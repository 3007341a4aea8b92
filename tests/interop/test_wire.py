"""Wire facts of the reference client and server, observed through a
recording proxy (wiretap.py) and pinned here; docs/interop.md lists them.

Each test runs the reference CLI pair through the tap, to the reference
server and to ours, so a fact that holds on one but not the other shows up
as a failure naming the server.
"""
import json
import re

from twisted.internet import defer

from wormhole._version import client_version

from . import harness
from .harness import InteropTestCase, our_classic_cli_argv, ref_cli_argv

SIDE = re.compile(r"^[0-9a-f]{10}$")
MSG_ID = re.compile(r"^[0-9a-f]{4}$")


class ReferenceWire:
    """Mixin: the facts, parametrised by ``start_server`` and ``cli`` (the
    CLI used on both ends; the reference's unless a class says ours)."""

    cli = staticmethod(ref_cli_argv)
    client_version = ["python", "0.24.0"]
    implementation = "python"

    @defer.inlineCallbacks
    def observe_text_exchange(self):
        srv = yield self.start_server()
        tap = self.start_tap(srv.url)
        send, recv, code = yield self.send_allocated_text(
            tap.url, self.cli, self.cli, "wire facts")
        self.assertExited(send)
        self.assertExited(recv)
        self.assertEqual(recv.stdout, b"wire facts\n")
        self.assertEqual(tap.connections, 2)
        return tap, code

    @defer.inlineCallbacks
    def test_every_frame_is_a_text_frame(self):
        """Both directions use text-mode WebSocket frames (the reference
        client asserts that what it receives is not binary, the "binary-mode"
        of Mailbox server protocol, "WebSocket Transport" notwithstanding)."""
        tap, _ = yield self.observe_text_exchange()
        self.assertTrue(tap.frames)
        self.assertEqual({mode for (_, _, mode) in tap.frames}, {"text"})

    @defer.inlineCallbacks
    def test_bind_is_sent_first_with_side_and_client_version(self):
        """The client's first message is bind: appid, a 10-hex-digit side,
        client_version (["python", "0.24.0"] from the reference,
        ["wormhole-twisted", ours] from us) and a 4-hex-digit id, nothing
        else."""
        tap, _ = yield self.observe_text_exchange()
        for n in (0, 1):
            first = tap.messages("c2s", connection=n)[0]
            self.assertEqual(first["type"], "bind")
            self.assertEqual(set(first), {"type", "appid", "side",
                                          "client_version", "id"})
            self.assertEqual(first["appid"], harness.CLI_APPID)
            self.assertRegex(first["side"], SIDE)
            self.assertRegex(first["id"], MSG_ID)
            self.assertEqual(first["client_version"][0], self.implementation)
            if self.client_version is not None:
                self.assertEqual(first["client_version"],
                                 self.client_version)

    @defer.inlineCallbacks
    def test_welcome_and_acks(self):
        """The server's first message is welcome (with a "welcome" dict and
        a float server_tx); every client message with an id is acked with
        that id."""
        tap, _ = yield self.observe_text_exchange()
        for n in (0, 1):
            s2c = tap.messages("s2c", connection=n)
            self.assertEqual(s2c[0]["type"], "welcome")
            self.assertIsInstance(s2c[0]["welcome"], dict)
            self.assertIsInstance(s2c[0]["server_tx"], float)
            acked = [m["id"] for m in s2c if m["type"] == "ack"]
            sent = [m["id"] for m in tap.messages("c2s", connection=n)]
            self.assertEqual(sorted(acked), sorted(sent))

    @defer.inlineCallbacks
    def test_sender_and_receiver_command_sequences(self):
        """The sender (allocated code) sends bind, allocate, claim, open,
        add pake, release, add version, add 0, close(mood happy); the
        receiver the same without allocate.  release and the version add
        may swap; close is always last."""
        tap, code = yield self.observe_text_exchange()
        nameplate = code.split("-")[0]
        for n, head in ((0, ["bind", "allocate", "claim"]),
                        (1, ["bind", "claim"])):
            c2s = tap.messages("c2s", connection=n)
            kinds = [m["type"] if m["type"] != "add"
                     else "add:" + m["phase"] for m in c2s]
            self.assertEqual(kinds[:len(head)], head)
            self.assertEqual(kinds[len(head):len(head) + 2],
                             ["open", "add:pake"])
            self.assertEqual(sorted(kinds[len(head) + 2:-2]),
                             sorted(["release", "add:version"]))
            self.assertEqual(kinds[-2:], ["add:0", "close"])
            claim = [m for m in c2s if m["type"] == "claim"][0]
            self.assertEqual(claim["nameplate"], nameplate)
            release = [m for m in c2s if m["type"] == "release"][0]
            self.assertEqual(release["nameplate"], nameplate)
            close = c2s[-1]
            self.assertEqual(close["mood"], "happy")
            opened = [m for m in c2s if m["type"] == "open"][0]
            self.assertEqual(close["mailbox"], opened["mailbox"])

    @defer.inlineCallbacks
    def test_pake_body_and_encrypted_bodies(self):
        """The pake body is hex of the UTF-8 JSON {"pake_v1": hex} with a
        33-byte SPAKE2 element; version and numbered phases are hex of
        nonce(24) + SecretBox ciphertext (MAC 16 + plaintext)."""
        tap, _ = yield self.observe_text_exchange()
        adds = tap.messages("c2s", type="add")
        pakes = [m for m in adds if m["phase"] == "pake"]
        self.assertEqual(len(pakes), 2)
        for m in pakes:
            body = json.loads(bytes.fromhex(m["body"]).decode("utf-8"))
            self.assertEqual(list(body), ["pake_v1"])
            self.assertEqual(len(bytes.fromhex(body["pake_v1"])), 33)
        for m in adds:
            if m["phase"] != "pake":
                self.assertGreater(len(bytes.fromhex(m["body"])), 24 + 16)

    @defer.inlineCallbacks
    def test_messages_echo_side_phase_body_and_id(self):
        """Each add comes back to both sides as a message carrying the
        adder's side, the phase, the body and the add's id."""
        tap, _ = yield self.observe_text_exchange()
        sides = {n: tap.messages("c2s", "bind", n)[0]["side"]
                 for n in (0, 1)}
        for n in (0, 1):
            got = {(m["side"], m["phase"], m["body"], m["id"])
                   for m in tap.messages("s2c", "message", n)}
            for other in (0, 1):
                for add in tap.messages("c2s", "add", other):
                    self.assertIn((sides[other], add["phase"], add["body"],
                                   add["id"]), got)


class ReferenceWireOnReferenceServer(ReferenceWire, InteropTestCase):
    """The facts as the reference server delivers them."""

    def start_server(self):
        return self.start_ref_server()

    @defer.inlineCallbacks
    def test_reference_server_welcome_and_responses(self):
        """The reference server's welcome carries "your-address" (the
        client's IP and port); its allocated/claimed/released/closed
        responses carry no id (clients must not need one)."""
        tap, _ = yield self.observe_text_exchange()
        welcome = tap.messages("s2c", "welcome")[0]["welcome"]
        self.assertEqual(welcome["your-address"]["ipv4"], "127.0.0.1")
        for kind in ("allocated", "claimed", "released", "closed"):
            for m in tap.messages("s2c", kind):
                self.assertNotIn("id", m)


class ReferenceWireOnOurServer(ReferenceWire, InteropTestCase):
    """The same facts with our server in the middle."""

    def start_server(self):
        return self.start_our_server()

    @defer.inlineCallbacks
    def test_reference_client_ignores_your_address(self):
        """Our welcome carries "your-address" (docs/server.md, "Wire
        differences from the reference (decided here)"), naming the port
        each connection came from; the reference 0.24 CLI pair ignores it
        and completes the exchange."""
        tap, _ = yield self.observe_text_exchange()
        for n in (0, 1):
            welcome = tap.messages("s2c", "welcome", n)[0]["welcome"]
            self.assertEqual(welcome["your-address"]["ipv4"], "127.0.0.1")
            self.assertIsInstance(welcome["your-address"]["port"], int)


class OurCLIWireOnReferenceServer(ReferenceWire, InteropTestCase):
    """Our CLI pair through the tap to the reference server: the same
    facts, but our own client_version: it names this implementation, so
    operators' statistics tell it apart from the reference. With
    --classic: these are the classic protocol's facts (two of ours would
    otherwise dilate, docs/transfer-v2.md "The CLI")."""

    cli = staticmethod(our_classic_cli_argv)
    client_version = list(client_version())
    implementation = "wormhole-twisted"

    def start_server(self):
        return self.start_ref_server()


class OurClientWire(InteropTestCase):
    """Our client library seen through the tap, next to the reference
    library peer, on the reference server: it must look like the
    reference client on the wire (the facts above)."""

    @defer.inlineCallbacks
    def test_our_client_speaks_like_the_reference(self):
        """Our client: text frames only; bind first with appid, a
        10-hex side and an id; then claim, open, add pake, release and
        add version (either order), add 0, close(mood happy) -- the
        reference receiver's sequence; every id 4 hex digits and acked."""
        from twisted.internet import reactor

        import wormhole
        srv = yield self.start_ref_server()
        tap = self.start_tap(srv.url)
        w = wormhole.create("example.com/interop-wire", tap.url, reactor)
        w.set_code("5-wire-check")
        yield self.poll_until(lambda: tap.messages("c2s", connection=0),
                              "our client's first message")
        peer = self.spawn(harness.ref_peer_argv(
            {"relay_url": tap.url, "appid": "example.com/interop-wire",
             "code": "5-wire-check",
             "steps": [["send", "theirs"], ["recv", 1]]}), "reference peer")
        w.send_message(b"ours")
        got = yield w.get_message()
        yield w.close()
        yield peer.when_ended()
        self.assertExited(peer)
        self.assertEqual(got, b"theirs")
        ours = [(m) for (n, d, m) in tap.log if n == 0 and d == "c2s"]
        bind = ours[0]
        self.assertEqual(bind["type"], "bind")
        self.assertEqual(bind["appid"], "example.com/interop-wire")
        self.assertRegex(bind["side"], SIDE)
        self.assertEqual(set(bind), {"type", "appid", "side",
                                     "client_version", "id"})
        self.assertEqual(bind["client_version"], list(client_version()))
        for m in ours:
            self.assertRegex(m["id"], MSG_ID)
        kinds = [m["type"] if m["type"] != "add" else "add:" + m["phase"]
                 for m in ours]
        self.assertEqual(kinds[:4], ["bind", "claim", "open", "add:pake"])
        self.assertEqual(sorted(kinds[4:6]), ["add:version", "release"])
        self.assertEqual(kinds[6:], ["add:0", "close"])
        self.assertEqual(ours[-1]["mood"], "happy")
        self.assertEqual({mode for (n, _, mode) in tap.frames if n == 0},
                         {"text"})
        acked = {m["id"] for m in tap.messages("s2c", "ack", 0)}
        self.assertEqual(acked, {m["id"] for m in ours})
