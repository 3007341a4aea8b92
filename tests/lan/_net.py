"""A local network with no way out, on this machine (docs/lan.md,
"Tests"): host namespaces joined by a bridge in a hub namespace.

    10.77.0.0/24 on the bridge ``br0`` (namespace ``hub``)
      ├── host a 10.77.0.11
      ├── host b 10.77.0.12
      └── ...

Multicast (224.0.0.0/4) is routed onto the LAN link. There is no route
anywhere else: the default route leads into an interface named
``outside`` (one end of a veth pair with nothing behind it) where an
iptables rule rejects and counts every packet, so a process that tries to
reach anything beyond the LAN (a public Mailbox, a relay, even a DNS
server) is counted, and ``check_sealed`` (in every test's cleanup) fails
the test.
Every namespace name
starts with a prefix unique to this run and test; ``build`` registers the
teardown (deleting only what it made) before it creates anything.
Needs root, ip(8) and iptables(8).
"""
import itertools
import os
import subprocess

from ..nat._net import Internet, need_tools

SUBNET = "10.77.0"
_runs = itertools.count()


def _run(*argv):
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE).stdout.decode()


class Lan(Internet):
    """``ns[host]`` are namespace names, ``address[host]`` the hosts' LAN
    addresses; ``argv(host, cmd)`` runs ``cmd`` in one, ``sh`` a shell
    line (both, and the teardown, are the NAT tests' own)."""

    def __init__(self, prefix):
        super().__init__(prefix)
        self.address = {}

    @classmethod
    def build(cls, testcase, hosts=("a", "b")):
        need_tools()
        lan = cls(f"l34n{os.getpid()}x{next(_runs)}")
        testcase.addCleanup(lan.teardown)
        testcase.addCleanup(lan.check_sealed, testcase)
        lan._add("hub")
        lan.sh("hub", "ip link add br0 type bridge && ip link set br0 up")
        for i, host in enumerate(hosts):
            lan._add(host)
            address = f"{SUBNET}.{11 + i}"
            lan.address[host] = address
            a, b = f"v{i}h", "eth0"
            _run("ip", "link", "add", a, "netns", lan.ns["hub"], "type", "veth",
                 "peer", "name", f"v{i}x", "netns", lan.ns[host])
            lan.sh("hub", f"ip link set {a} master br0 && ip link set {a} up")
            lan.sh(host, f"ip link set v{i}x name {b} && ip addr add {address}/24 dev {b} "
                         f"&& ip link set {b} up && ip route add 224.0.0.0/4 dev {b} "
                         "&& ip link add outside type veth peer name beyond "
                         "&& ip link set outside up && ip link set beyond up "
                         "&& ip route add default dev outside "
                         "&& iptables -w -A OUTPUT -o outside -j REJECT")
        return lan

    def _add(self, role):
        name = f"{self.prefix}{role}"
        _run("ip", "netns", "add", name)
        self.ns[role] = name
        self.sh(role, "ip link set lo up")

    def outside_attempts(self):
        """{host: packets sent towards anything beyond the LAN}."""
        counts = {}
        for host, name in self.ns.items():
            if host == "hub":
                continue
            out = _run("ip", "netns", "exec", name, "iptables", "-w", "-L", "OUTPUT",
                       "-v", "-x", "-n")
            for line in out.splitlines():
                fields = line.split()
                if "REJECT" in fields and "outside" in fields:
                    counts[host] = int(fields[0])
        return counts

    def check_sealed(self, testcase):
        if not self.ns:
            return
        tried = {h: n for h, n in self.outside_attempts().items() if n}
        if tried:
            raise AssertionError(f"something tried to leave the LAN (packets per host): "
                                 f"{tried}")
