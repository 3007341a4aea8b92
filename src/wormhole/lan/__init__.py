"""Rendezvous on a local network with no Mailbox server anywhere
(docs/lan.md; docs/api.md, "On a local network").

The sender runs our Mailbox server in its own process and announces it by
multicast DNS; the receiver finds it by the code's nameplate; from there
on everything is the usual wormhole, over the found server::

    lan = yield wormhole.lan.serve(reactor)          # sender
    w = wormhole.create(appid, lan.url, reactor)
    w.set_code(lan.make_code())
    ...
    yield lan.stop()                                 # goodbye packets

    url = yield wormhole.lan.find(reactor, "7")      # receiver
    w = wormhole.create(appid, url, reactor)
    w.set_code("7-guitarist-revenge")

Needs the ``lan`` extra (zeroconf and our Mailbox server); without it
``serve`` and ``find`` fail with LanUnavailable saying so. Importing this
module needs neither.
"""

from ._find import FIND_TIMEOUT, find, nameplates
from ._records import (
    SERVICE_TYPE,
    TTL,
    AmbiguousNameplate,
    LanError,
    LanUnavailable,
    NameplateTaken,
    NoSenderFound,
    nameplate_of,
)
from ._serve import LanMailbox, serve

__all__ = ["serve", "find", "nameplates", "LanMailbox", "LanError", "LanUnavailable",
           "NoSenderFound", "AmbiguousNameplate", "NameplateTaken", "SERVICE_TYPE", "TTL",
           "FIND_TIMEOUT", "nameplate_of", "nameplate_of_code"]


def nameplate_of_code(code):
    """The nameplate of a code ("7" of "7-guitarist-revenge")."""
    return code.split("-", 1)[0]
