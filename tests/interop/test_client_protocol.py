"""Client-to-client facts of the reference (Client-to-client protocol,
File-transfer protocol),
observed by a raw peer that does the PAKE itself (rawpeer.py) and so can
read the reference's decrypted ``version`` phase and application messages.
These also check our ``wormhole._crypto`` against the reference: key
agreement, phase keys, SecretBox framing and the verifier.
"""
import json

from twisted.internet import defer, reactor

from .harness import CLI_APPID, InteropTestCase, our_cli_argv, ref_cli_argv, ref_peer_argv
from .rawpeer import run_raw_peer

TEXT = "Grüße ✓\nline two"
ANSWER = b'{"answer": {"message_ack": "ok"}}'


class CLIProtocol:
    """Mixin: what a `wormhole` CLI (``cli_argv``) says to its peer."""

    @defer.inlineCallbacks
    def test_cli_sender_version_and_offer(self):
        """`wormhole send --text` sends the version plaintext
        {"app_versions": {}} and then, as phase 0, the offer
        {"offer": {"message": TEXT}} as json.dumps with its default
        separators and ASCII escapes (the bytes pinned exactly)."""
        yield self.start_ref_server()
        r = yield self.text_to_raw_peer(self.classic, "4-purple-sausages")
        self.assertEqual(r.peer_version_bytes, b'{"app_versions": {}}')

    @defer.inlineCallbacks
    def text_to_raw_peer(self, options, code):
        """`wormhole send --text` with ``options`` to a raw classic peer:
        the offer bytes are pinned exactly; returns the raw peer's run."""
        srv = yield self.start_ref_server()
        send = self.spawn(self.cli_argv(srv.url, "send", *options, "--text", TEXT,
                                        "--code", code),
                          "sender")
        r = yield run_raw_peer(reactor, srv.url, CLI_APPID, code, to_send=[ANSWER],
                               expect=1)
        yield send.ended()
        self.assertExited(send)
        self.assertEqual(
            r.peer_messages,
            [b'{"offer": {"message": "Gr\\u00fc\\u00dfe \\u2713\\nline two"}}'])
        self.assertEqual(json.loads(r.peer_messages[0]),
                         {"offer": {"message": TEXT}})
        self.assertEqual(r.mood, "happy")
        return r

    @defer.inlineCallbacks
    def test_cli_receiver_answer(self):
        """`wormhole receive` answers a text offer with exactly
        {"answer": {"message_ack": "ok"}} (phase 0) and prints the text."""
        srv = yield self.start_ref_server()
        recv = self.spawn(self.cli_argv(srv.url, "receive", *self.classic,
                                        "5-purple-sausages"),
                          "receiver")
        offer = json.dumps({"offer": {"message": "plain"}}).encode("utf-8")
        r = yield run_raw_peer(reactor, srv.url, CLI_APPID,
                               "5-purple-sausages", to_send=[offer],
                               expect=1)
        yield recv.ended()
        self.assertExited(recv)
        self.assertEqual(recv.stdout, b"plain\n")
        self.assertEqual(r.peer_version_bytes, b'{"app_versions": {}}')
        self.assertEqual(r.peer_messages, [ANSWER])


class ReferenceCLIProtocol(CLIProtocol, InteropTestCase):
    """The reference CLI: these pin the bytes."""
    cli_argv = staticmethod(ref_cli_argv)
    classic = ()


class OurCLIProtocol(CLIProtocol, InteropTestCase):
    """Our CLI must say exactly the same bytes (with --classic: by default
    it also announces transfer-v2 in its version message,
    docs/transfer-v2.md)."""
    cli_argv = staticmethod(our_cli_argv)
    classic = ("--classic",)

    @defer.inlineCallbacks
    def test_cli_sender_of_a_text_says_the_same_bytes(self):
        """Without --classic too, a text goes as classic's offer on a
        wormhole that announces no transfer-v2 nor Dilation
        (docs/transfer-v2.md "Text"): the reference's version message, the
        same offer bytes."""
        r = yield self.text_to_raw_peer((), "7-purple-sausages")
        self.assertEqual(r.peer_version_bytes, b'{"app_versions": {}}')


class ReferenceLibraryProtocol(InteropTestCase):

    @defer.inlineCallbacks
    def library_version(self, create_kwargs):
        srv = yield self.start_ref_server()
        script = {"relay_url": srv.url, "appid": "example.com/interop",
                  "code": "6-purple-sausages",
                  "versions": {"feature": [1, "two"]},
                  "create_kwargs": create_kwargs,
                  "steps": [["verifier", None], ["versions", None],
                            ["send", "m0"], ["recv", 1]]}
        peer = self.spawn(ref_peer_argv(script), "reference library peer")
        r = yield run_raw_peer(reactor, srv.url, "example.com/interop",
                               "6-purple-sausages", to_send=[b"r0"],
                               expect=1, versions={"mine": True})
        yield peer.ended()
        self.assertExited(peer)
        events = peer.events()
        self.assertIn({"event": "versions", "versions": {"mine": True}},
                      events)
        self.assertIn("r0", [e.get("text") for e in events])
        self.assertEqual(r.peer_messages, [b"m0"])
        return r, events

    @defer.inlineCallbacks
    def test_library_version_without_dilation(self):
        """create(versions=V) sends exactly {"app_versions": V}."""
        r, _ = yield self.library_version({})
        self.assertEqual(r.peer_version_bytes,
                         b'{"app_versions": {"feature": [1, "two"]}}')

    @defer.inlineCallbacks
    def test_library_version_with_dilation(self):
        """create(dilation=True) adds can-dilate ["ged"] and the
        dilation-abilities, before app_versions, in this key order."""
        r, _ = yield self.library_version({"dilation": True})
        self.assertEqual(
            r.peer_version_bytes,
            b'{"can-dilate": ["ged"], "dilation-abilities": '
            b'[{"type": "direct-tcp-v1"}, {"type": "relay-v1"}], '
            b'"app_versions": {"feature": [1, "two"]}}')

    @defer.inlineCallbacks
    def test_verifier_matches_our_derivation(self):
        """The reference's get_verifier() equals our
        _crypto.derive_verifier of the key our raw peer agreed with it."""
        from wormhole import _crypto
        r, events = yield self.library_version({})
        verifiers = [e["hex"] for e in events if e["event"] == "verifier"]
        self.assertEqual(verifiers, [_crypto.derive_verifier(r.key).hex()])


class OurClientProtocol(InteropTestCase):
    """Our library's client-to-client plaintexts, read by the raw peer,
    must be the reference's bytes (above) for the same inputs."""

    @defer.inlineCallbacks
    def our_version(self, **create_kwargs):
        import wormhole
        srv = yield self.start_ref_server()
        w = wormhole.create("example.com/interop", srv.url, reactor,
                            versions={"feature": [1, "two"]},
                            **create_kwargs)
        w.set_code("6-purple-sausages")
        raw = run_raw_peer(reactor, srv.url, "example.com/interop",
                           "6-purple-sausages", to_send=[b"r0"],
                           expect=1, versions={"mine": True})
        w.send_message(b"m0")
        got = yield w.get_message()
        versions = yield w.get_versions()
        yield w.close()
        r = yield raw
        self.assertEqual(got, b"r0")
        self.assertEqual(versions, {"mine": True})
        self.assertEqual(r.peer_messages, [b"m0"])
        return r

    @defer.inlineCallbacks
    def test_version_without_dilation(self):
        """create(versions=V) sends exactly {"app_versions": V}, as the
        reference does."""
        r = yield self.our_version()
        self.assertEqual(r.peer_version_bytes,
                         b'{"app_versions": {"feature": [1, "two"]}}')

    @defer.inlineCallbacks
    def test_version_with_dilation(self):
        """create(dilation=True) sends the reference's bytes: can-dilate,
        dilation-abilities, then app_versions."""
        r = yield self.our_version(dilation=True)
        self.assertEqual(
            r.peer_version_bytes,
            b'{"can-dilate": ["ged"], "dilation-abilities": '
            b'[{"type": "direct-tcp-v1"}, {"type": "relay-v1"}], '
            b'"app_versions": {"feature": [1, "two"]}}')
