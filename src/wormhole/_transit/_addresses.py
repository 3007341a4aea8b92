"""Which local addresses we listen on and advertise (Transit protocol).

By default Transit "detects all of the host's IP addresses" and offers each
as a ``direct-tcp-v1`` hint, leaving out 127.0.0.1 when the host has any
other address (a loopback hint only helps a peer on the same machine).
``listen_addresses=[...]`` or the environment variable
``WORMHOLE_TRANSIT_ADDRESSES`` (comma-separated) restricts both what we
bind and what we advertise: tests use ``127.0.0.1`` only.
"""

import ipaddress
import os
import socket
import struct

ADDRESSES_ENV = "WORMHOLE_TRANSIT_ADDRESSES"
# a fixed listening port (the CLI's --listen-port), e.g. one forwarded on
# the router (magic-wormhole#673; docs/transit.md,
# "Through a NAT: hole punching")
LISTEN_PORT_ENV = "WORMHOLE_LISTEN_PORT"
_SIOCGIFADDR = 0x8915  # Linux: an interface's IPv4 address


def _check(addresses, where):
    out = []
    for a in addresses:
        try:
            out.append(str(ipaddress.ip_address(a.strip())))
        except ValueError:
            raise ValueError(f"{where}: {a!r} is not an IP address") from None
    if not out:
        raise ValueError(f"{where}: no address given")
    return out


def configured_addresses(listen_addresses=None, environ=None):
    """The restriction, if any: a list of addresses, or None for "all"."""
    if listen_addresses is not None:
        if isinstance(listen_addresses, str):
            raise TypeError("listen_addresses must be a list of addresses, not a string")
        return _check(list(listen_addresses), "listen_addresses")
    environ = os.environ if environ is None else environ
    value = environ.get(ADDRESSES_ENV, "").strip()
    if value:
        return _check([a for a in value.split(",") if a.strip()], ADDRESSES_ENV)
    return None


def configured_listen_port(listen_port=None, environ=None):
    """The fixed port Transit and Dilation listen on, or None (any free
    port): ``listen_port`` if given, else ``$WORMHOLE_LISTEN_PORT``."""
    if listen_port is None:
        environ = os.environ if environ is None else environ
        value = environ.get(LISTEN_PORT_ENV, "").strip()
        if not value:
            return None
        where = LISTEN_PORT_ENV
    else:
        value, where = listen_port, "listen_port"
    try:
        port = int(value)
    except (TypeError, ValueError):
        port = 0
    if isinstance(value, bool) or not 0 < port < 65536:
        raise ValueError(f"{where}: {value!r} is not a TCP port (1..65535)")
    return port


def _interface_addresses():
    found = []
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return found
    try:
        import fcntl
    except ImportError:  # not Linux-like: fall back to the host name
        return found
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for name in names:
            try:
                packed = fcntl.ioctl(s.fileno(), _SIOCGIFADDR,
                                     struct.pack("256s", name[:15].encode()))
            except OSError:
                continue  # no IPv4 address on this interface
            found.append(socket.inet_ntoa(packed[20:24]))
    finally:
        s.close()
    return found


def discover_addresses():
    """Every IPv4 address of this host, loopback dropped if others exist."""
    found = _interface_addresses()
    if not found:
        try:
            infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
            found = [info[4][0] for info in infos]
        except OSError:
            found = []
    found = sorted(set(found) | {"127.0.0.1"})
    others = [a for a in found if not a.startswith("127.")]
    return others or ["127.0.0.1"]
