"""Recording fakes for the client machines' unit tests.

A fake provides an interface and appends ``("mailbox.add_message", phase,
body)`` to a shared list, so a test feeds inputs to one machine and asserts
the exact, ordered list of what it asked of its neighbours.
"""

from zope.interface import implementer
from zope.interface.interface import Method


def make_fake(iface, prefix, events, returns=None):
    """An object providing ``iface`` that records every call."""
    returns = returns or {}

    @implementer(iface)
    class Fake:
        def __repr__(self):
            return f"<Fake {prefix}>"

    fake = Fake()
    for name in iface.names(all=True):
        if isinstance(iface[name], Method):
            def record(*args, _name=name, **kwargs):
                events.append((f"{prefix}.{_name}",) + args + tuple(sorted(kwargs.items())))
                return returns.get(_name)
            setattr(fake, name, record)
    return fake


def recorded_connector(url, clock, net, status, events, **kwargs):
    """A RendezvousConnector on ``clock`` whose connections ``net`` (a
    fakes.FakeNetwork, or None for real ones) hands out, wired to recording fakes of its six
    neighbours (Boss "b", Nameplate "n", Mailbox "m", Allocator "a",
    Lister "l", Terminator "t")."""
    from wormhole import _interfaces
    from wormhole._rendezvous import RendezvousConnector
    from wormhole.journal import ImmediateJournal
    from wormhole.timing import DebugTiming
    rc = RendezvousConnector(url, "appid", "side1", clock, ImmediateJournal(), None,
                             DebugTiming(), ("python", "0.1.0"), status,
                             endpoint_factory=net.endpoint_factory if net else None, **kwargs)
    rc.wire(*(make_fake(iface, prefix, events) for iface, prefix in (
        (_interfaces.IBoss, "b"), (_interfaces.INameplate, "n"),
        (_interfaces.IMailbox, "m"), (_interfaces.IAllocator, "a"),
        (_interfaces.ILister, "l"), (_interfaces.ITerminator, "t"))))
    return rc
