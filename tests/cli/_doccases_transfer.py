"""The cases of docs/cli.md "Messages" about a transfer once the peers
met: the Transit and Dilation legs, a peer leaving or falling silent
mid-file (held at a chosen byte by the gate of _gate.py), what a receiver
refuses or keeps. Support for tests/cli/test_documented_transfers.py."""
import os
import re

from twisted.internet import defer, reactor

from ._docscenarios import (
    BIG,
    PEER_TIMEOUT,
    PROMPT,
    SHORT_TIMER,
    Case,
    closed_port,
    code,
    silent_relay,
)
from ._gate import start_gate
from ._shortened_cli import SENT

HALF = BIG // 2
SMALL = 1000 * 1000
V2_WAIT = ("--peer-timeout", PEER_TIMEOUT)


def _pair(t, helper, *protocol, send_args=(), recv_args=("--accept-file",)):
    c = code()
    send = t.send(c, "--no-listen", *protocol, *send_args, "a.bin",
                  cwd=t.folder("a.bin", size=1000), helper=helper)
    recv = t.receive(c, "--no-listen", *recv_args, cwd=t.folder(), helper=helper)
    return send, recv


def classic_no_transit(t):
    """Both --no-listen, the relay's port closed."""
    send, recv = _pair(t, f"tcp:127.0.0.1:{closed_port()}", "--classic")
    return t.ended(sender=send, receiver=recv)


def v2_no_path(t):
    """Both --no-listen: with a relay whose port is closed, and with no
    relay at all (an empty --transit-helper)."""
    send, recv = _pair(t, f"tcp:127.0.0.1:{closed_port()}")
    send2, recv2 = _pair(t, "")
    return t.ended(sender=send, receiver=recv, sender_no_relay=send2, receiver_no_relay=recv2)


@defer.inlineCallbacks
def v2_relay_answers(t):
    """Both --no-listen, a "relay" that accepts TCP and never pairs:
    the session's wait (--peer-timeout, shorter than 60 s) ends it."""
    port = yield silent_relay(t)
    send, recv = _pair(t, f"tcp:127.0.0.1:{port}", *V2_WAIT, recv_args=("--accept-file",
                                                                        *V2_WAIT))
    return (yield t.ended(sender=send, receiver=recv))


@defer.inlineCallbacks
def v2_withdrawn(t):
    """The sender is killed while the receiver's human is asked."""
    c = code()
    send = t.send(c, "a.bin", cwd=t.folder("a.bin"))
    recv = t.receive(c, *V2_WAIT, cwd=t.folder())
    yield recv.wait_for(PROMPT)
    send.kill()
    return (yield t.ended(receiver=recv))


@defer.inlineCallbacks
def v2_sender_killed(t):
    """transfer-v2, the sender killed at half: the receiver waits
    --peer-timeout, says the sender went away, and what it keeps."""
    send, recv = yield t.gated(HALF, recv_args=("--accept-file", *V2_WAIT))
    send.kill()
    yield send.ended
    t.gate.drain()
    yield recv.ended
    t.assertTrue(all(n.startswith(".wormhole-partial-") for n in os.listdir(t.out)))
    return {"receiver": recv}


@defer.inlineCallbacks
def v2_receiver_killed(t):
    send, recv = yield t.gated(HALF, send_args=V2_WAIT)
    recv.kill()
    yield send.ended
    return {"sender": send}


@defer.inlineCallbacks
def v2_peer_gone(t):
    """Both ways, at once."""
    left, right = yield defer.gatherResults([v2_receiver_killed(t), v2_sender_killed(t)])
    return {**left, **right}


@defer.inlineCallbacks
def share_both_failed(t):
    """Two ``share`` sides each offering a file, held at half by the gate
    (one Dilation connection each way): every offer stalls, and each side
    gives up on both directions after --peer-timeout (exit 1)."""
    c1 = code()
    _, port = yield start_gate(t, reactor, t.relay_port, HALF)
    sides = {}
    for name, offered in (("first", "one.bin"), ("second", "two.bin")):
        sides[name] = t.cli(name, "share", "--no-listen", "--hide-progress", "--accept-file",
                            *V2_WAIT, "--code", c1, offered,
                            cwd=t.folder(offered, size=BIG),
                            helper=f"tcp:127.0.0.1:{port}", stdin=b"")
    return (yield t.ended(**sides))


@defer.inlineCallbacks
def sent_nothing(t):
    c = code()
    share = t.cli("share", "share", "--hide-progress", "--code", c, cwd=t.folder(), stdin=b"")
    recv = t.receive(c, "--accept-file", cwd=t.folder())
    return (yield t.ended(receiver=recv, share=share))


@defer.inlineCallbacks
def stalled(t):
    """Classic, held at half: the sender's wait for the receiver to read
    (120 s, STALL_TIMEOUT) shortened by _shortened_cli.py."""
    send, recv = yield t.gated(HALF, send_args=("--classic",),
                               send_shorten=("--stall", SHORT_TIMER))
    yield send.ended
    return {"sender": send}


@defer.inlineCallbacks
def unconfirmed(t):
    """Classic, a 1 MB file all sent into the gate, which keeps its last
    bytes from the receiver: no confirmation comes (ACK_TIMEOUT, 120 s,
    shortened)."""
    send, recv = yield t.gated(SMALL, send_args=("--classic",), size=SMALL,
                               send_shorten=("--ack", SHORT_TIMER))
    yield send.ended
    return {"sender": send}


@defer.inlineCallbacks
def refused(t):
    """Our receiver would overwrite a file (it refuses, both exit 3); a
    human says no; the offer is bigger than the receiving disk's free
    space (a sparse file)."""
    c1, c2, c3 = code(), code(), code()
    full = t.folder("a.bin")
    send1 = t.send(c1, "a.bin", cwd=t.folder("a.bin"))
    recv1 = t.receive(c1, "--accept-file", cwd=full)
    send2 = t.send(c2, "a.bin", cwd=t.folder("a.bin"))
    recv2 = t.receive(c2, cwd=t.folder(), stdin=b"n\n")
    src = t.folder()
    dst = t.folder()
    st = os.statvfs(dst)
    with open(os.path.join(src, "huge.bin"), "wb") as f:
        f.truncate(st.f_bavail * st.f_frsize + 10**9)
    send3 = t.send(c3, "huge.bin", cwd=src)
    recv3 = t.receive(c3, "--accept-file", cwd=dst)
    return (yield t.ended(sender=send1, receiver=recv1, rejecting=recv2, other=send2,
                          full=recv3, huge=send3))


@defer.inlineCallbacks
def classic_receiver_killed(t):
    """Classic: the receiver killed at half; and killed once every byte
    left the sender (held by the gate before the receiver has them all),
    as _shortened_cli.py --say-sent tells."""
    (send, recv), (send2, recv2) = yield defer.gatherResults([
        t.gated(HALF, send_args=("--classic",)),
        t.gated(SMALL, send_args=("--classic",), size=SMALL, send_shorten=("--say-sent",))])
    recv.kill()
    yield send2.wait_for(re.escape(SENT.encode()))
    recv2.kill()
    return (yield t.ended(sender=send, sender_of_all=send2))


@defer.inlineCallbacks
def classic_sender_killed(t):
    send, recv = yield t.gated(HALF, send_args=("--classic",))
    send.kill()
    yield send.ended
    t.gate.drain()
    yield recv.ended
    t.assertEqual(os.listdir(t.out), [])  # nothing under the final name
    return {"receiver": recv}


@defer.inlineCallbacks
def several_offers(t):
    """Two files over transfer-v2; the receiver already has one of them."""
    c = code()
    out = t.folder("a.txt")
    send = t.send(c, "a.txt", "b.txt", cwd=t.folder("a.txt", "b.txt"))
    recv = t.receive(c, "--accept-file", cwd=out)
    return (yield t.ended(sender=send, receiver=recv))


@defer.inlineCallbacks
def read_fails(t):
    """Classic: reading our own file fails after 1 MB (an EIO injected by
    _shortened_cli.py, as a failing disk gives)."""
    c = code()
    send = t.send(c, "--classic", "big.bin", cwd=t.folder("big.bin", size=BIG),
                  shorten=("--fail-read", str(SMALL)))
    recv = t.receive(c, "--accept-file", cwd=t.folder())
    return (yield t.ended(sender=send, receiver=recv))


@defer.inlineCallbacks
def wrong_hash(t):
    """Classic: the receiver acknowledges with another sha256 (a receiver
    whose ack is changed by _shortened_cli.py)."""
    c = code()
    send = t.send(c, "--classic", "a.bin", cwd=t.folder("a.bin"))
    recv = t.receive(c, "--accept-file", cwd=t.folder(), shorten=("--wrong-ack",))
    return (yield t.ended(sender=send, receiver=recv))


@defer.inlineCallbacks
def sender_silent(t):
    """A classic sender whose human is asked about the verifier sends no
    offer meanwhile; classic, held at half by the gate: no more data
    comes. The receivers' --peer-timeout is short."""
    c = code()
    asking = t.send(c, "--classic", "--verify", "a.bin", cwd=t.folder("a.bin"))
    recv = t.receive(c, *V2_WAIT, cwd=t.folder())
    send, recv2 = yield t.gated(HALF, send_args=("--classic",),
                                recv_args=("--accept-file", *V2_WAIT))
    yield defer.gatherResults([recv.ended, recv2.ended])
    asking.kill()
    return {"receiver": recv, "receiver_of_data": recv2}


@defer.inlineCallbacks
def v2_stalled(t):
    """transfer-v2 held at half by the gate, twice at once: the side that
    waits --peer-timeout (short) gives up first, the other's is longer."""
    long_wait = ("--peer-timeout", "60")
    (send, _), (_, recv) = yield defer.gatherResults([
        t.gated(HALF, send_args=V2_WAIT, recv_args=("--accept-file", *long_wait)),
        t.gated(HALF, send_args=long_wait, recv_args=("--accept-file", *V2_WAIT))])
    return (yield t.ended(sender=send, receiver=recv))


@defer.inlineCallbacks
def disk_fails(t):
    """Classic: the receiver may write no file bigger than 100 kB
    (RLIMIT_FSIZE, set by _shortened_cli.py): its write of a 1 MB file
    fails as on a full disk, and so does its unpacking of a folder whose
    small zipfile holds 1 MB of zeros. And a directory whose zipfile the
    sender damaged (_shortened_cli.py --damage-zip) after building it."""
    c1, c2, c3 = code(), code(), code()
    send = t.send(c1, "--classic", "a.bin", cwd=t.folder("a.bin", size=SMALL))
    recv = t.receive(c1, "--accept-file", cwd=t.folder(), shorten=("--fsize", "100000"))
    src = t.folder()
    os.makedirs(os.path.join(src, "d"))
    with open(os.path.join(src, "d", "a.txt"), "w") as f:
        f.write("some text\n")
    send2 = t.send(c2, "--classic", "d", cwd=src, shorten=("--damage-zip",))
    recv2 = t.receive(c2, "--accept-file", cwd=t.folder())
    zeros = t.folder()
    os.makedirs(os.path.join(zeros, "z"))
    with open(os.path.join(zeros, "z", "zeros.bin"), "wb") as f:
        f.write(bytes(SMALL))
    send3 = t.send(c3, "--classic", "z", cwd=zeros)
    recv3 = t.receive(c3, "--accept-file", cwd=t.folder(), shorten=("--fsize", "100000"))
    return (yield t.ended(sender=send, receiver=recv, zip_sender=send2, zip_receiver=recv2,
                          unpacking_sender=send3, unpacking_receiver=recv3))


TRANSFER_MESSAGES = {
    "no Transit connection (the peer left after accepting, or neither direct nor relay "
    "works)": Case(classic_no_transit, {"sender": [0], "receiver": [0]}),
    "transfer-v2: no way through (the relay cannot be reached and no direct connection can "
    "be made; checked 2 s after both sides began dilating, each relay tried once with a TCP "
    "connection: `wormhole.session.FirstConnection`)": Case(
        v2_no_path, {"sender": [0], "receiver": [0], "sender_no_relay": [1],
                     "receiver_no_relay": [1]}),
    "transfer-v2: a relay answers or a direct path may exist, yet no connection comes within "
    "the session's 60 s (or `--peer-timeout`)": Case(
        v2_relay_answers, {"sender": [0], "receiver": [0]}),
    "transfer-v2: the sender withdraws its offer (or goes away) while the receiver's human is "
    "asked": Case(v2_withdrawn, {"receiver": [0]}),
    "transfer-v2: an offer interrupted mid-way (either side stopped, the peer gone, a "
    "failure)": Case(v2_sender_killed, {"receiver": [0]}),
    "`share`: our offer failed (the peer acknowledged it with a wrong hash, ...) and the "
    "peer's offers failed too": Case(
        share_both_failed, {"first": [0, 1, 2], "second": [0, 1, 2]},
        unchecked={3: "a function's name, not a message"}),
    "transfer-v2: the sender closes the session having sent nothing": Case(
        sent_nothing, {"receiver": [0]}),
    "the receiver reads nothing for 120 s mid-transfer (suspended, its network gone silent)":
        Case(stalled, {"sender": [0]}),
    "no confirmation after all bytes were sent (within 120 s plus 1 s per 20 MB, its time to "
    "hash the file again)": Case(unconfirmed, {"sender": [0]}),
    "the receiver refuses": Case(
        refused, {"receiver": [0], "sender": [4], "other": [3], "rejecting": [2], "full": [1]}),
    "the receiver goes away mid-transfer (quits, is killed, its network fails)": Case(
        classic_receiver_killed, {"sender": [0], "sender_of_all": [1]}),
    "the sender goes away mid-transfer": Case(classic_sender_killed, {"receiver": [0]}),
    "transfer-v2: the peer goes away mid-offer (killed, network gone for `--peer-timeout`, at "
    "most 60 s without a connection)": Case(v2_peer_gone, {"sender": [0], "receiver": [1]}),
    "transfer-v2: several offers, some did not complete": Case(
        several_offers, {"sender": [0, 3], "receiver": [2, 3]},
        unchecked={1: "an offer that failed: the row 'transfer-v2: the peer stops mid-offer, "
                      "connection kept up' prints it"}),
    "our own file cannot be read mid-way": Case(read_fails, {"sender": [0]}),
    "the receiver's hash differs": Case(wrong_hash, {"sender": [0]}),
    "the sender, once there, goes silent (receiver)": Case(
        sender_silent, {"receiver": [0], "receiver_of_data": [1]}),
    "transfer-v2: the peer stops mid-offer, connection kept up": Case(
        v2_stalled, {"sender": [1], "receiver": [0]},
        unchecked={2: "the prefix of several offers: row 'transfer-v2: several offers'",
                   3: "the other side's report, as in row 'the peer sent another `error`'"}),
    "a damaged zipfile, or the disk fails the receiver": Case(
        disk_fails, {"receiver": [1], "zip_receiver": [0], "unpacking_receiver": [2]},
        unchecked={3: "the file cannot be made or renamed once the room check passed: as "
                      "root (this machine) no folder refuses us, a name too long gets a "
                      "shorter temporary name (it lands), and a rename failing needs a "
                      "race"}),
}
