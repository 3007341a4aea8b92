# twistd finds this through sys.path (src/twisted/plugins is a namespace
# package: no __init__.py here or in src/twisted).
from twisted.application.service import ServiceMaker

TransitRelay = ServiceMaker(
    "Magic-Wormhole Transit Relay (wormhole-twisted)",
    "wormhole_relay._plugin",
    "Run a Magic Wormhole Transit relay (spec 004 section 6.4).",
    "transitrelay",
)
