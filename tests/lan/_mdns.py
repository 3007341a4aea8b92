"""Run as a script inside a namespace of ``_net`` (tests/lan):

    python -m tests.lan._mdns watch            print "added N" / "removed N"
                                               for every _wormhole._tcp change
    python -m tests.lan._mdns forge N PORT     announce nameplate N for this
                                               host's PORT without probing
                                               (a forgery: mDNS lets anyone
                                               answer), until killed
"""
import socket
import sys
import threading

import zeroconf as z

from wormhole.lan import SERVICE_TYPE, nameplate_of


def watch():
    zc = z.Zeroconf(ip_version=z.IPVersion.V4Only)

    def changed(zeroconf, service_type, name, state_change):
        word = "removed" if state_change is z.ServiceStateChange.Removed else "added"
        print(f"{word} {nameplate_of(name)}", flush=True)
    z.ServiceBrowser(zc, SERVICE_TYPE, handlers=[changed])
    print("watching", flush=True)
    threading.Event().wait()  # zeroconf's threads report; until killed


def forge(nameplate, port):
    address = sys.argv[4]
    zc = z.Zeroconf(interfaces=[address], ip_version=z.IPVersion.V4Only)
    info = z.ServiceInfo(SERVICE_TYPE, f"{nameplate}.{SERVICE_TYPE}", port=port,
                         properties={"txtvers": "1", "protovers": "1", "path": "/v1"},
                         server="forger.local.", addresses=[socket.inet_aton(address)])
    # cooperating_responders: no probe, so the name held by the real
    # sender is announced a second time
    zc.register_service(info, cooperating_responders=True)
    print("forging", flush=True)
    threading.Event().wait()  # zeroconf's threads answer; until killed


if __name__ == "__main__":
    if sys.argv[1] == "watch":
        watch()
    else:
        forge(sys.argv[2], int(sys.argv[3]))
