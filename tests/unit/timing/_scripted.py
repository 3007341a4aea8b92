"""Scripted bundles: what two clients of a text transfer would record,
built event by event on a server clock, so tests know every time exactly.

``text_transfer(tmpdir_maker, sender_skew, receiver_skew)`` returns the
sender's and the receiver's bundle as lists of events (the JSON shape
DebugTiming writes). A skew is how far that client's clock is ahead of the
server's; every message takes LATENCY seconds each way.
"""
LATENCY = 0.001


class ScriptedClient:
    def __init__(self, role, side, skew=0.0, identify=True):
        self.side = side
        self.skew = skew
        self.events = []
        self._n = 0
        if identify and role:
            self.event("command", 0.0, role=role)

    def event(self, name, t, stop=None, **details):
        self.events.append({"name": name, "start": t + self.skew,
                            "stop": None if stop is None else stop + self.skew,
                            "details": details})

    def tx(self, t, mtype, response=None, **fields):
        """Send at server time ``t``; the server gets it at t+LATENCY and
        acks (and answers, if ``response``) at once."""
        self._n += 1
        mid = f"{self._n:04x}"
        self.event("ws_send", t, _side=self.side, type=mtype, id=mid, **fields)
        here = t + LATENCY
        self.rx(here + LATENCY, "ack", id=mid, server_tx=here)
        if response:
            self.rx(here + LATENCY, response, id=mid, server_rx=here, server_tx=here)
        return here

    def rx(self, t, mtype, **fields):
        """Receive at server time ``t`` (sent by the server LATENCY before,
        unless the fields say when)."""
        fields.setdefault("server_tx", t - LATENCY)
        self.event("ws_receive", t, _side=self.side, message=dict(type=mtype, **fields))


def text_transfer(sender_skew=0.0, receiver_skew=0.0, identify=True):
    """The sender starts at 0, allocates, waits; the receiver starts at
    2.0 (an idle stretch the renderer cuts); the rest takes milliseconds.
    Returns (sender, receiver) ScriptedClients."""
    s = ScriptedClient("sender", "aaaa000001", sender_skew, identify)
    r = ScriptedClient("receiver", "bbbb000002", receiver_skew, identify)
    if identify:
        s.event("wormhole", 0.001, side=s.side)
        r.event("wormhole", 2.001, side=r.side)
    # connect: welcome 10 ms after the start
    s.rx(0.011, "welcome", welcome={})
    s.tx(0.012, "bind", appid="a", side=s.side)
    s.tx(0.013, "allocate", response="allocated")
    s.tx(0.016, "claim", response="claimed", nameplate="4")
    s.tx(0.019, "open", mailbox="mb")
    s.event("pake1", 0.019, 0.020)
    at = s.tx(0.020, "add", phase="pake", body="00")
    s.rx(at + LATENCY, "message", side=s.side, phase="pake", body="00", server_rx=at)
    r.rx(2.011, "welcome", welcome={})
    r.tx(2.012, "bind", appid="a", side=r.side)
    r.tx(2.013, "claim", response="claimed", nameplate="4")
    r.tx(2.016, "open", mailbox="mb")
    # the server replays the sender's pake on open
    r.rx(2.018, "message", side=s.side, phase="pake", body="00", server_rx=at)
    r.event("pake1", 2.018, 2.019)
    at = r.tx(2.019, "add", phase="pake", body="11")
    r.event("pake2", 2.020, 2.022)
    r.tx(2.022, "release", response="released", nameplate="4")
    s.rx(at + LATENCY, "message", side=r.side, phase="pake", body="11", server_rx=at)
    s.event("pake2", 2.021, 2.023)
    sv = s.tx(2.023, "add", phase="version", body="22")
    s.tx(2.024, "release", response="released", nameplate="4")
    rv = r.tx(2.023, "add", phase="version", body="33")
    r.rx(sv + LATENCY, "message", side=s.side, phase="version", body="22", server_rx=sv)
    r.event("got version", 2.026)
    s.rx(rv + LATENCY, "message", side=r.side, phase="version", body="33", server_rx=rv)
    s.event("got version", 2.027)
    # text mode: the offer (phase 0) one way, the answer the other
    at = s.tx(2.028, "add", phase="0", body="44")
    r.rx(at + LATENCY, "message", side=s.side, phase="0", body="44", server_rx=at)
    at = r.tx(2.031, "add", phase="0", body="55")
    s.rx(at + LATENCY, "message", side=r.side, phase="0", body="55", server_rx=at)
    r.tx(2.032, "close", response="closed", mailbox="mb", mood="happy")
    s.tx(2.035, "close", response="closed", mailbox="mb", mood="happy")
    for c in (s, r):
        c.events.sort(key=lambda ev: ev["start"])
    return s, r
