"""Network constants (compared between peers) and local limits (P2P-D0)."""

import math

import attrs

# opcodes (P2P mesh protocol, "Opcodes")
ACK, NACK, PING, SET_CONNECTION_OPT, ANNOUNCE, CHANGE_KEY = 0, 1, 2, 3, 4, 5
SHOUT, SPEAK, WHISPER, FIND_NODE, FIND_VALUE, STORE = 6, 7, 8, 9, 10, 11
RESERVED_OPCODES = (12, 13, 14)
CUSTOM = 15

OPCODE_NAMES = {
    ACK: "ACK", NACK: "NACK", PING: "PING",
    SET_CONNECTION_OPT: "SET_CONNECTION_OPT", ANNOUNCE: "ANNOUNCE",
    CHANGE_KEY: "CHANGE_KEY", SHOUT: "SHOUT", SPEAK: "SPEAK",
    WHISPER: "WHISPER", FIND_NODE: "FIND_NODE", FIND_VALUE: "FIND_VALUE",
    STORE: "STORE", CUSTOM: "CUSTOM",
}

# connection options (P2P mesh protocol, "Connection Options and Settings")
OPT_COMPRESSION, OPT_PREFERRED, OPT_SUBNET = 0, 1, 2

KEY_SIZES = (2048, 3072, 4096)  # P2P-D1.1


def ell_max(k, tau):
    """P2P-D6.4: kτ + 2k − ⌈k·log2(k+1)⌉, an upper bound on the contacts
    of a full routing table of τ fixed buckets."""
    return k * tau + 2 * k - math.ceil(k * math.log2(k + 1))


def _check_subnet(instance, attribute, value):
    c = instance
    if not c.k >= 1:
        raise ValueError("k must be >= 1")
    if not 1 <= c.alpha <= c.k:
        raise ValueError("alpha must be in 1..k")
    if c.tau % 8 or not 8 <= c.tau <= 256:
        raise ValueError("tau must be a multiple of 8 in 8..256")
    if c.beta not in KEY_SIZES:
        raise ValueError(f"beta must be one of {KEY_SIZES}")
    if not 1 <= c.ell <= ell_max(c.k, c.tau):
        raise ValueError(f"ell must be in 1..{ell_max(c.k, c.tau)}")
    if c.transport != "tcp":
        raise ValueError('transport must be "tcp" in v1')
    raw = c.description.encode("utf-8")
    if len(raw) > 256 or not c.description.startswith("d1:"):
        raise ValueError('description: UTF-8, at most 256 bytes, starts "d1:"')


@attrs.frozen
class SubnetConfig:
    """The seven constants two peers compare at connect (P2P-D0, P2P-D6.2)."""
    k: int = 20
    alpha: int = 3
    tau: int = 256
    beta: int = 2048
    ell: int = attrs.field(default=8, validator=_check_subnet)
    transport: str = "tcp"
    description: str = "d1:default"

    def as_setting(self):
        """The SET_CONNECTION_OPT [2, setting] list (P2P mesh protocol, "Subnet")."""
        return [self.k, self.alpha, self.tau, self.beta, self.ell,
                self.transport, self.description]


@attrs.frozen
class LocalLimits:
    """Local settings, not compared between peers (P2P-D0)."""
    max_transmission: int = 16 * 1024 * 1024
    max_depth: int = 32
    seen_size: int = 4096
    cache_size: int = 1024
    max_connections: int = 128
    max_value: int = 64 * 1024
    max_store_key: int = 256
    max_entries: int = 65536
    # P2P-D0 "compression order": ids of P2P-D3.3 (zlib, snappy, gzip,
    # bz2, lzma); the methods offered at connect, in preference order
    compression: tuple = (4, 5, 2, 1, 3)
    # what this node wants to receive, sent as [1, m] (P2P-D3.4); None
    # lets the peer decide
    preferred_compression: int | None = None
    # P2P-D6.7 timeouts, seconds
    dial_timeout: float = 10.0
    handshake_timeout: float = 10.0
    request_timeout: float = 5.0
    whisper_timeout: float = 30.0
    idle_ping: float = 60.0
    transient_idle: float = 30.0
    outbound_rerun: float = 60.0
    # P2P-D7.4
    refresh_interval: float = 3600.0
    replicate_interval: float = 3600.0
    republish_interval: float = 86400.0
    expiry: float = 90000.0
    # SPEAK is not forwarded unless local policy opts in (P2P-D5.5)
    forward_speak: bool = False
    # queues of one link: answers owed to the peer (a slow CUSTOM handler
    # holds later ones back), bytes queued while the peer does not read
    max_pending_answers: int = 1024
    max_queued_bytes: int = 32 * 1024 * 1024
    # WHISPERs relayed and waiting for their answer (P2P-D6.10)
    max_relayed: int = 4096
