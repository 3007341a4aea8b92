"""A hostile Transit peer against our receiver, over real TCP, our side in
its own process so its peak memory can be read from /proc
(docs/security.md, "Transit")."""

import os

from twisted.internet import defer
from twisted.trial import unittest

from wormhole._transit import _codec

from ._support import MiB, flood, memory_kb, start_victim

ALLOWED_GROWTH_KB = 8 * 1024


class HugeRecord(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def test_4_gib_record(self):
        """The sender completes the handshake, sends go, announces a record
        of 4 GiB and pours junk after it. The receiver hangs up once the
        length is in, its application learns why, and its peak memory
        grows by less than 8 MiB while up to 64 MiB are pushed at it."""
        key = os.urandom(32)
        victim = start_victim(self, "transit", key)
        hints = (yield victim.next_json())["hints"]
        [port] = {h["port"] for h in hints if h.get("hostname") == "127.0.0.1"}
        before = memory_kb(victim.pid)
        theirs = _codec.receiver_handshake(key)

        def prologue(received):
            if not received.startswith(theirs):
                return None
            return b"go\n" + (2 ** 32 - 1).to_bytes(4, "big")

        peer = yield flood(port, lambda received: None, 0)
        peer.transport.loseConnection()  # a first, silent dialer is harmless
        yield peer.lost
        peer = yield flood(port, prologue, 64 * MiB)
        peer.transport.write(_codec.sender_handshake(key))
        sent = yield peer.lost
        result = yield victim.next_json()
        growth = memory_kb(victim.pid) - before
        print(f"hostile transit: sent {sent}, victim said {result}, grew {growth} KiB")
        # the limit is 16 MiB while the pipe is being set up, the expected
        # size once the application connected its consumer: which one the
        # length meets depends on whether TCP split "go" from it
        self.assertIn(result["error"], [
            "ConnectionClosed: the transit connection closed after 0 of 1000000 bytes "
            f"(record number 0 announced {2 ** 32 - 41} bytes; the limit is {limit} "
            "(docs/security.md))" for limit in (16777216, 1000000)])
        self.assertLess(sent, 64 * MiB)
        self.assertLess(growth, ALLOWED_GROWTH_KB, f"peak RSS grew by {growth} KiB")
