"""A hostile Dilation peer against our listening port, over real TCP, our
side in its own process so its peak memory can be read from /proc
(docs/security.md, "Dilation")."""

import os

from twisted.internet import defer
from twisted.trial import unittest

from wormhole._dilation._framing import (
    FOLLOWER_HANDSHAKE,
    LEADER_HANDSHAKE,
    FrameReader,
    NoiseSession,
    derive_dilation_key,
)

from ._support import MiB, flood, memory_kb, start_victim

FLOOD = 64 * MiB
# what the victim may grow by: one 1 MiB socket read, the frame limit for
# nothing, and the interpreter's noise. Buffering the flood would be 64 MiB.
ALLOWED_GROWTH_KB = 8 * 1024


class DilationListener(unittest.TestCase):
    timeout = 60

    @defer.inlineCallbacks
    def attack(self, prologue):
        key = derive_dilation_key(os.urandom(32))
        victim = start_victim(self, "dilation", key)
        port = (yield victim.next_json())["port"]
        before = memory_kb(victim.pid)
        peer = yield flood(port, prologue(key), FLOOD)
        sent = yield peer.lost
        dropped = yield victim.next_json()
        growth = memory_kb(victim.pid) - before
        print(f"hostile dilation: sent {sent}, victim said {dropped}, grew {growth} KiB")
        return dropped, sent, growth

    @defer.inlineCallbacks
    def test_length_before_handshake(self):
        """Anyone who reaches the port, key or no key: the right handshake
        line and then a 2**31-byte frame. The victim hangs up once the 4
        length bytes are in, says why, and its peak memory grows by less
        than 8 MiB while we push up to 64 MiB at it."""
        def prologue(key):
            return lambda received: FOLLOWER_HANDSHAKE + (2 ** 31 - 1).to_bytes(4, "big")
        dropped, sent, growth = yield self.attack(prologue)
        port = dropped["dropped"].split("<-tcp:")[1].split(" ")[0]
        self.assertEqual(dropped, {"dropped": (
            f"Dilation connection <-tcp:{port} dropped: peer announced a handshake frame of "
            "2147483647 bytes; the limit is 1024 (docs/security.md)")})
        self.assertLess(sent, 64 * MiB)
        self.assertLess(growth, ALLOWED_GROWTH_KB, f"peak RSS grew by {growth} KiB")

    @defer.inlineCallbacks
    def test_length_after_noise_handshake(self):
        """A peer that knows the key completes Noise as the Follower, sends
        its KCM and then a 2**32-1-byte frame: refused against the 16 MiB
        limit before any of it is buffered."""
        def prologue(key):
            noise = NoiseSession(key, is_leader=False)
            reader = FrameReader(LEADER_HANDSHAKE)
            state = {"sent_line": False}

            def ready(received):
                if not state["sent_line"]:
                    state["sent_line"] = True
                    state["fed"] = 0
                frames = reader.add_data(received[state["fed"]:])
                state["fed"] = len(received)
                if not frames:
                    return None
                noise.read_handshake(frames[0])
                return (FOLLOWER_HANDSHAKE + noise.write_handshake()
                        + noise.encrypt_frame(b"\x00") + (2 ** 32 - 1).to_bytes(4, "big"))
            return ready
        dropped, sent, growth = yield self.attack(prologue)
        self.assertLess(sent, 64 * MiB)
        self.assertTrue(dropped["dropped"].endswith(
            "dropped: peer announced a frame of 4294967295 bytes; the limit is 16777216 "
            "(docs/security.md)"), dropped)
        self.assertLess(growth, ALLOWED_GROWTH_KB, f"peak RSS grew by {growth} KiB")
