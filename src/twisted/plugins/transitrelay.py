# twistd finds this through sys.path (src/twisted/plugins is a namespace
# package: no __init__.py here or in src/twisted). The relay itself is
# loaded only when twistd runs it (wormhole_ops.twistd).
from wormhole_ops.twistd import ServerMaker

TransitRelay = ServerMaker(
    "Magic-Wormhole Transit Relay (wormhole-twisted)",
    "wormhole_relay._plugin",
    "Run a Magic Wormhole Transit relay.",
    "transitrelay",
    extra="relay",
)
