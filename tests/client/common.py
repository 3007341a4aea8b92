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
