"""``wormhole.tor_manager``: where the reference 0.24 keeps ``get_tor``.

Only the signature is here: Tor support is the Tor issue's work (it
replaces this module). Until then ``get_tor`` fails with a NoTorError
saying so, instead of an ImportError or a silent direct connection.
"""

import sys

from twisted.internet import defer

from .errors import NoTorError

__all__ = ["get_tor"]


def get_tor(reactor, launch_tor=False, tor_control_port=None, timing=None,
            stderr=sys.stderr):
    """A Deferred for an ITorManager (the reference's signature); here it
    always fails with NoTorError."""
    return defer.fail(NoTorError(
        "this version of wormhole-twisted cannot use Tor yet (get_tor is not "
        "implemented); run without Tor"))
