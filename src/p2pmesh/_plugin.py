"""``twistd p2p-node``: a long-lived mesh node (docs/p2pmesh.md)."""

from twisted.python import log, usage

from ._config import SHOUT, WHISPER, SubnetConfig
from ._service import NodeService, build_node, display, load_or_create_key, parse_peer


class Options(usage.Options):
    synopsis = "[options]"
    longdesc = ("Run a node of the peer-to-peer mesh: it listens, "
                "joins through the bootstrap peers and logs every SHOUT and "
                "WHISPER it receives.")
    optParameters = [
        ("listen", "l", "tcp:4000", "server endpoint to listen on"),
        ("advertise", "a", None, "host:port other nodes dial (IP literal)"),
        ("key-file", "k", "p2pmesh-key.pem",
         "private key, created (mode 0600) on first run"),
        ("description", "d", "d1:default", "network description (d1:...)"),
        ("ell", None, "8", "persistent outbound connections (l)"),
    ]

    def __init__(self):
        super().__init__()
        self["bootstrap"] = []

    def opt_bootstrap(self, value):
        """host:port of a node to join through (repeatable)"""
        self["bootstrap"].append(parse_peer(value))

    def postOptions(self):
        if self["advertise"]:
            self["advertise"] = parse_peer(self["advertise"])
        self["config"] = SubnetConfig(description=self["description"],
                                      ell=int(self["ell"]))


def makeService(options, reactor=None):
    if reactor is None:
        from twisted.internet import reactor
    key = load_or_create_key(options["key-file"])
    node = build_node(reactor, key, listen=options["listen"],
                      advertise=options["advertise"],
                      bootstrap=options["bootstrap"],
                      config=options["config"])
    for opcode, name in ((SHOUT, "SHOUT"), (WHISPER, "WHISPER")):
        node.on(opcode, lambda sender, value, name=name: log.msg(
            "p2pmesh %s from %s: %s" % (name, sender.hex()[-16:],
                                        display(value))))
    return NodeService(node)
