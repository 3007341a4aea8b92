"""Two L2 Noise sessions, a Leader's and a Follower's, past their
handshake (Dilation protocol, "L2 protocol"): for tests of what travels inside."""
from wormhole._dilation import _framing as F

KEY = b"\x01" * 32


def pair(key_l=KEY, key_f=KEY):
    """A Leader and a Follower session after the Noise handshake."""
    leader = F.NoiseSession(F.derive_dilation_key(key_l), True)
    follower = F.NoiseSession(F.derive_dilation_key(key_f), False)
    r_f = F.FrameReader(b"")
    r_l = F.FrameReader(b"")
    [m1] = r_f.add_data(leader.write_handshake())
    follower.read_handshake(m1)
    [m2] = r_l.add_data(follower.write_handshake())
    leader.read_handshake(m2)
    return leader, follower
