"""This implementation's name and version.

``client_version`` is what ``bind`` tells the Mailbox server (Mailbox server
protocol, "Connection-Specific (Client-to-Server) Messages": ``[implementation,
version]``): it names this implementation, so
operators' statistics do not count it as the 2015 reference 0.1.0.
``wormhole.__version__`` stays a plain version string for applications
that print or compare it.
"""

IMPLEMENTATION = "wormhole-twisted"
__version__ = "0.1.0"


def client_version():
    """``(implementation, version)`` as sent in ``bind``."""
    return (IMPLEMENTATION, __version__)
