"""The few things we ask of multicast DNS, as blocking calls on the
``zeroconf`` library (run off the reactor's thread by ``_bridge``).

``IMulticastDNS`` is what ``serve`` and ``find`` use; the unit tests give
them a fake with the same Interface (tests/unit/lan/_fakes.py).
"""

import asyncio
import socket

from zope.interface import Interface, implementer

from ._records import (
    SERVICE_TYPE,
    TTL,
    TXT,
    Announcement,
    NameplateTaken,
    instance_name,
    parse_txt,
)

# after the first answer, how long we keep listening for a second
# responder that claims the same nameplate (mDNS responders delay their
# multicast answers by 20-120 ms, RFC 6762, 6)
SETTLE = 0.6


class IMulticastDNS(Interface):
    def open():
        """Join the multicast group on the chosen interfaces."""

    def claim(nameplate, server, port, addresses):
        """Probe for ``nameplate``'s name, then announce it: raise
        NameplateTaken when another responder already holds it."""

    def lookup(nameplate, timeout):
        """Ask for ``nameplate``'s service for up to ``timeout`` seconds;
        return every Announcement heard for it (a list, maybe empty)."""

    def nameplates(timeout):
        """Browse ``_wormhole._tcp`` for ``timeout`` seconds; return the
        nameplates heard (a sorted list)."""

    def close():
        """Say goodbye for everything claimed (TTL 0) and leave."""


@implementer(IMulticastDNS)
class ZeroconfMDNS:
    def __init__(self, zeroconf, addresses=None):
        self._z = zeroconf
        self._addresses = list(addresses or [])
        self._zc = None

    def open(self):
        z = self._z
        interfaces = self._addresses or z.InterfaceChoice.All
        self._zc = z.Zeroconf(interfaces=interfaces, ip_version=z.IPVersion.V4Only)

    def claim(self, nameplate, server, port, addresses):
        z = self._z
        info = z.ServiceInfo(
            SERVICE_TYPE, instance_name(nameplate), port=port, properties=TXT,
            server=server, addresses=[socket.inet_aton(a) for a in addresses],
            host_ttl=TTL, other_ttl=TTL)
        try:
            # the probe of RFC 6762, 8.1: three queries 250 ms apart; a
            # responder that holds the name answers, and we back off
            self._zc.register_service(info, allow_name_change=False)
        except z.NonUniqueNameException:
            raise NameplateTaken(f"nameplate {nameplate} is already announced on "
                                 "this network") from None

    def lookup(self, nameplate, timeout):
        z = self._z
        name = instance_name(nameplate)
        info = z.ServiceInfo(SERVICE_TYPE, name)
        if not info.request(self._zc, int(timeout * 1000)):
            return self._heard(name)
        asyncio.run_coroutine_threadsafe(asyncio.sleep(SETTLE), self._zc.loop).result()
        return self._heard(name)

    def _heard(self, name):
        """Every live SRV record for ``name`` in the cache, with its host's
        addresses and the TXT properties (read on zeroconf's own loop)."""
        z = self._z

        async def read():
            cache = self._zc.cache
            now = z.current_time_millis()

            def live(records, kind):
                return [r for r in records if isinstance(r, kind) and not r.is_expired(now)]
            props = {}
            for t in live(cache.async_entries_with_name(name), z.DNSText):
                props = parse_txt(t.text)
            found = []
            for srv in live(cache.async_entries_with_name(name), z.DNSService):
                addrs = [socket.inet_ntoa(a.address)
                         for a in live(cache.async_entries_with_name(srv.server), z.DNSAddress)
                         if len(a.address) == 4]
                found.append(Announcement(srv.server, srv.port, addrs, props))
            return found
        return asyncio.run_coroutine_threadsafe(read(), self._zc.loop).result()

    def nameplates(self, timeout):
        from ._records import nameplate_of
        heard = set()

        def changed(zeroconf, service_type, name, state_change):
            if state_change is not self._z.ServiceStateChange.Removed:
                np = nameplate_of(name)
                if np is not None:
                    heard.add(np)
        browser = self._z.ServiceBrowser(self._zc, SERVICE_TYPE, handlers=[changed])
        try:
            asyncio.run_coroutine_threadsafe(asyncio.sleep(timeout), self._zc.loop).result()
        finally:
            browser.cancel()
        return sorted(heard, key=lambda n: (len(n), n))

    def close(self):
        if self._zc is not None:
            # unregisters every service first: the goodbye (TTL 0) packets
            self._zc.close()
            self._zc = None
