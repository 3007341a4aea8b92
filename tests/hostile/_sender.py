"""A hostile sender for the File-transfer protocol,
built on our library at the lowest level the protocol allows: the
Deferred-mode wormhole for raw JSON messages, ``TransitSender`` for raw
records. Nothing the CLI's own sender checks stands in its way.
"""
import json

from twisted.internet import defer, reactor

from wormhole import create
from wormhole.transit import TransitSender

APPID = "lothar.com/wormhole/text-or-file-xfer"


class HostileSender:

    def __init__(self, testcase, url, code):
        self.w = create(APPID, url, reactor)
        testcase.addCleanup(lambda: self.w.close().addErrback(lambda f: None))
        self.w.set_code(code)
        self._testcase = testcase
        self.transit = None
        self.their_hints = []

    def send(self, message):
        """Any JSON value, or raw bytes, as one wormhole message."""
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.w.send_message(body)

    def confirmed(self):
        """Fires once the receiver's key and versions arrived."""
        return self.w.get_verifier()

    @defer.inlineCallbacks
    def offer_with_transit(self, offer):
        """Our transit message (no hints: the victim listens on
        127.0.0.1), the offer, then every message until the answer:
        returns the answer message."""
        self.transit = TransitSender(None, no_listen=True, reactor=reactor)
        self._testcase.addCleanup(self.transit.stop)
        self.send({"transit": {"abilities-v1": self.transit.get_connection_abilities(),
                               "hints-v1": []}})
        self.send({"offer": offer})
        while True:
            msg = json.loads((yield self.w.get_message()))
            if "transit" in msg:
                self.transit.add_connection_hints(msg["transit"].get("hints-v1", []))
            if "answer" in msg or "error" in msg:
                return msg

    @defer.inlineCallbacks
    def connect(self):
        """The record pipe to the victim (after a file_ack)."""
        self.transit.set_transit_key(self.w.derive_key(APPID + "/transit-key", 32))
        pipe = yield self.transit.connect()
        self._testcase.addCleanup(pipe.close)
        return pipe


def send_in_records(pipe, data, size=64 * 1024):
    for i in range(0, len(data), size):
        pipe.send_record(data[i:i + size])
