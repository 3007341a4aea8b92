"""A small internet on this machine (docs/transit.md,
"Through a NAT: hole punching"): network namespaces joined by veth pairs,
routers doing NAT with iptables.

    public segment 198.18.0.0/24 (a bridge in the namespace ``pub``, which
    also runs the Mailbox server and the relay at 198.18.0.1)
      ├── router A (wan 198.18.0.11) ── 10.0.1.0/24 ── host A (10.0.1.2)
      ├── router B (wan 198.18.0.12) ── 10.0.2.0/24 ── host B (10.0.2.2)
      └── host P, on the public segment itself (198.18.0.20)

Router behaviours (RFC 4787 terms):

- ``full-cone``: endpoint-independent mapping and filtering (MASQUERADE
  keeps the source port; every inbound TCP port is forwarded to the host)
- ``port-restricted``: endpoint-independent mapping, address-and-port-
  dependent filtering (only replies to what the host sent pass)
- ``symmetric``: endpoint-dependent mapping with random ports
  (MASQUERADE --random-fully) and the same filtering

Unsolicited TCP to a router is dropped without a RST, as home routers do.
Every namespace name starts with a prefix unique to this run and test;
``Internet.build`` registers the teardown (deleting only the namespaces it
made) before it creates anything, so a failure half-way leaves nothing.
Needs root, ip(8) and iptables(8).
"""
import itertools
import os
import shutil
import subprocess

PUBLIC = "198.18.0.1"
WAN = {"a": "198.18.0.11", "b": "198.18.0.12"}
HOST = {"a": "10.0.1.2", "b": "10.0.2.2", "p": "198.18.0.20"}
LAN_GW = {"a": "10.0.1.1", "b": "10.0.2.1"}
KINDS = ("full-cone", "port-restricted", "symmetric")
_runs = itertools.count()


def _run(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def need_tools():
    missing = [t for t in ("ip", "iptables") if shutil.which(t) is None]
    if missing or os.geteuid() != 0:
        raise AssertionError(
            "tests/nat needs root, ip(8) and iptables(8) (missing: "
            f"{', '.join(missing) or 'root'}); `./dev test` installs them")


class Internet:
    """``ns["pub"|"a"|"b"|"p"|"ra"|"rb"]`` are namespace names;
    ``argv(where, cmd)`` runs ``cmd`` in one."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.ns = {}

    @classmethod
    def build(cls, testcase, nat_a, nat_b):
        need_tools()
        for kind in (nat_a, nat_b):
            if kind not in KINDS:
                raise ValueError(f"unknown NAT kind {kind!r}: one of {KINDS}")
        net = cls(f"i26n{os.getpid()}x{next(_runs)}")
        testcase.addCleanup(net.teardown)
        for role in ("pub", "a", "b", "p", "ra", "rb"):
            name = f"{net.prefix}{role}"
            _run("ip", "netns", "add", name)
            net.ns[role] = name
            net.sh(role, "ip link set lo up")
        net.sh("pub", "ip link add br0 type bridge && ip link set br0 up && "
               f"ip addr add {PUBLIC}/24 dev br0")
        for router, side in (("ra", "a"), ("rb", "b")):
            net._wire("pub", router, "wan", f"{WAN[side]}/24", bridge=True)
            net._wire(router, side, "lan", f"{LAN_GW[side]}/24",
                      f"{HOST[side]}/24")
            net.sh(side, f"ip route add default via {LAN_GW[side]}")
            net.sh(router, "sysctl -qw net.ipv4.ip_forward=1")
        net._wire("pub", "p", "pp", None, f"{HOST['p']}/24", bridge=True)
        net._nat("ra", "a", nat_a)
        net._nat("rb", "b", nat_b)
        return net

    def _wire(self, left, right, name, right_addr, far_addr=None, bridge=False):
        """A veth pair ``left`` <-> ``right``; with ``bridge`` the left end
        joins pub's bridge. ``right_addr`` goes on the right end when it
        is a router's WAN, ``far_addr`` on the right end otherwise."""
        a, b = f"{name}{right}L", f"{name}{right}R"
        _run("ip", "link", "add", a, "netns", self.ns[left], "type", "veth",
             "peer", "name", b, "netns", self.ns[right])
        self.sh(left, f"ip link set {a} up" + (f" && ip link set {a} master br0"
                                               if bridge else ""))
        if bridge and right_addr is not None:  # a router's WAN
            self.sh(right, f"ip addr add {right_addr} dev {b} && ip link set {b} up"
                    f" && ip link set {b} name wan")
        elif bridge:  # host P
            self.sh(right, f"ip addr add {far_addr} dev {b} && ip link set {b} up")
        else:  # router LAN <-> host
            self.sh(left, f"ip addr add {right_addr} dev {a} && ip link set {a} name lan")
            self.sh(right, f"ip addr add {far_addr} dev {b} && ip link set {b} up")

    def _nat(self, router, side, kind):
        ipt = "iptables -w"
        masq = "MASQUERADE --random-fully" if kind == "symmetric" else "MASQUERADE"
        rules = [f"{ipt} -t nat -A POSTROUTING -o wan -j {masq}",
                 # unsolicited TCP to the router: dropped, no RST
                 f"{ipt} -A INPUT -i wan -p tcp -j DROP"]
        if kind == "full-cone":
            rules.append(f"{ipt} -t nat -A PREROUTING -i wan -p tcp "
                         f"-j DNAT --to-destination {HOST[side]}")
        else:
            rules += [f"{ipt} -P FORWARD DROP",
                      f"{ipt} -A FORWARD -i lan -j ACCEPT",
                      f"{ipt} -A FORWARD -m conntrack --ctstate "
                      "ESTABLISHED,RELATED -j ACCEPT"]
        self.sh(router, " && ".join(rules))

    def forward(self, side, port):
        """The router of ``side`` forwards TCP ``port`` to its host (what a
        user does for --listen-port)."""
        router = "r" + side
        self.sh(router, f"iptables -w -t nat -A PREROUTING -i wan -p tcp --dport {port} "
                f"-j DNAT --to-destination {HOST[side]}:{port} && "
                f"iptables -w -I FORWARD -i wan -p tcp -d {HOST[side]} --dport {port} "
                "-j ACCEPT")

    def sh(self, role, command):
        _run("ip", "netns", "exec", self.ns[role], "sh", "-ec", command)

    def argv(self, role, argv):
        return ["ip", "netns", "exec", self.ns[role]] + list(argv)

    def teardown(self):
        # only what build() made: the names it recorded
        for name in self.ns.values():
            subprocess.run(["ip", "netns", "delete", name], check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.ns = {}
