"""A recording fake of multicast DNS for wormhole.lan (docs/architecture.md,
"Recording fakes"): no socket, no thread."""
from twisted.internet import defer
from zope.interface import implementer

from wormhole.lan._records import NameplateTaken
from wormhole.lan._zeroconf import IMulticastDNS


@implementer(IMulticastDNS)
class FakeMDNS:
    """``taken``: nameplates another responder holds; ``heard``: what a
    lookup hears ({nameplate: [Announcement]})."""

    def __init__(self, calls, taken=(), heard=None, browsed=()):
        self.calls = calls
        self.taken = set(taken)
        self.heard = heard or {}
        self.browsed = list(browsed)

    def open(self):
        self.calls.append(("open",))

    def claim(self, nameplate, server, port, addresses):
        self.calls.append(("claim", nameplate, port, tuple(addresses)))
        if nameplate in self.taken:
            raise NameplateTaken(f"nameplate {nameplate} is taken")
        self.taken.add(nameplate)

    def lookup(self, nameplate, timeout):
        self.calls.append(("lookup", nameplate, timeout))
        return list(self.heard.get(nameplate, []))

    def nameplates(self, timeout):
        self.calls.append(("nameplates", timeout))
        return self.browsed

    def close(self):
        self.calls.append(("close",))


class InlineBridge:
    """ThreadBridge's ``run`` on the caller's thread, the timeout noted."""

    def __init__(self, calls):
        self.calls = calls

    def run(self, timeout, f, *args):
        return defer.maybeDeferred(f, *args)


class FixedOrder:
    """An rng whose shuffle keeps the order and whose sample takes the
    first ones: candidates() becomes 1..9, 10, 11..."""

    def shuffle(self, items):
        pass

    def sample(self, population, k):
        return list(population)[:k]
