"""Our client library, in this process, against the reference 0.24 CLI as
the peer (a subprocess), on the reference 0.8 server and on ours.

The text-transfer messages are those of the File-transfer protocol: the sender's
``{"offer": {"message": TEXT}}``, the receiver's
``{"answer": {"message_ack": "ok"}}``.
"""

import json

from twisted.internet import defer, reactor

import wormhole
from wormhole import errors

from ..interop.harness import CLI_APPID, InteropTestCase, mailbox_moods, ref_cli_argv


class LibraryInterop(InteropTestCase):
    def create(self, url):
        return wormhole.create(CLI_APPID, url, reactor)

    @defer.inlineCallbacks
    def receive_from_ref(self, server):
        code = "31-guitarist-revenge"
        send = self.spawn(ref_cli_argv(server.url, "send", "--text", "hi from ref",
                                       "--code", code), "ref sender")
        w = self.create(server.url)
        w.set_code(code)
        offer = json.loads((yield w.get_message()))
        self.assertEqual(offer, {"offer": {"message": "hi from ref"}})
        w.send_message(json.dumps({"answer": {"message_ack": "ok"}}).encode())
        yield send.ended()
        self.assertExited(send)
        self.assertEqual((yield w.close()), "happy")

    @defer.inlineCallbacks
    def send_to_ref(self, server):
        w = self.create(server.url)
        w.allocate_code()
        code = yield w.get_code()
        recv = self.spawn(ref_cli_argv(server.url, "receive", code), "ref receiver")
        w.send_message(json.dumps({"offer": {"message": "hi from ours"}}).encode())
        answer = json.loads((yield w.get_message()))
        self.assertEqual(answer, {"answer": {"message_ack": "ok"}})
        yield recv.ended()
        self.assertExited(recv)
        self.assertEqual(recv.stdout, b"hi from ours\n")
        self.assertEqual((yield w.close()), "happy")

    @defer.inlineCallbacks
    def test_ref_server_receive(self):
        """Reference sender -> our library, on the reference server."""
        server = yield self.start_ref_server()
        yield self.receive_from_ref(server)

    @defer.inlineCallbacks
    def test_ref_server_send(self):
        """Our library (allocated code) -> reference receiver, reference server."""
        server = yield self.start_ref_server()
        yield self.send_to_ref(server)

    @defer.inlineCallbacks
    def test_our_server_both_ways(self):
        """Both directions with the reference CLI on our server."""
        server = yield self.start_our_server()
        yield self.receive_from_ref(server)
        yield self.send_to_ref(server)

    @defer.inlineCallbacks
    def test_wrong_code_ref_server(self):
        """A wrong code against the reference: WrongPasswordError here, the
        reference exits non-zero, the server records scary."""
        server = yield self.start_ref_server()
        send = self.spawn(ref_cli_argv(server.url, "send", "--text", "x",
                                       "--code", "32-guitarist-revenge"), "ref sender")
        w = self.create(server.url)
        w.set_code("32-guitarist-revenged")
        yield self.assertFailure(w.get_message(), errors.WrongPasswordError)
        yield self.assertFailure(w.close(), errors.WrongPasswordError)
        yield send.ended()
        self.assertNotEqual(send.exit_code, 0)
        rows = yield self.wait_for_moods(server, lambda rows: mailbox_moods(rows))
        self.assertEqual(mailbox_moods(rows), ["scary"])
