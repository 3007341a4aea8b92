# twistd finds this through sys.path (src/twisted/plugins is a namespace
# package: no __init__.py here or in src/twisted).
from twisted.application.service import ServiceMaker

P2PNode = ServiceMaker(
    "p2pmesh node (wormhole-twisted)",
    "p2pmesh._plugin",
    "Run a node of the peer-to-peer mesh.",
    "p2p-node",
)
