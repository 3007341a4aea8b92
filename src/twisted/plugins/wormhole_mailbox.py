# twistd finds this through sys.path (src/twisted/plugins is a namespace
# package: no __init__.py here or in src/twisted).
from twisted.application.service import ServiceMaker

Mailbox = ServiceMaker(
    "Magic-Wormhole Mailbox Server (wormhole-twisted)",
    "wormhole_mailbox._plugin",
    "Run a Magic Wormhole Mailbox server (spec 003).",
    "wormhole-mailbox",
)
