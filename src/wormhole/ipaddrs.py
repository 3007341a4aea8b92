"""``wormhole.ipaddrs``: this host's IPv4 addresses, as the reference 0.24
exports them (``find_addresses()``), from the same discovery Transit and
Dilation use for their direct hints (Transit protocol, "On finding a direct
connection").
"""

from ._transit._addresses import _interface_addresses, discover_addresses

__all__ = ["find_addresses"]


def find_addresses():
    """Every IPv4 address of this host, 127.0.0.1 first (the reference
    lists loopback too; Transit's own hints leave it out when others
    exist)."""
    found = set(_interface_addresses()) | set(discover_addresses()) | {"127.0.0.1"}
    return ["127.0.0.1"] + sorted(a for a in found if a != "127.0.0.1")
