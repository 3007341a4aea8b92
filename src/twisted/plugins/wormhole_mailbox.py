# twistd finds this through sys.path (src/twisted/plugins is a namespace
# package: no __init__.py here or in src/twisted). The server itself is
# loaded only when twistd runs it (wormhole_ops.twistd).
from wormhole_ops.twistd import ServerMaker

Mailbox = ServerMaker(
    "Magic-Wormhole Mailbox Server (wormhole-twisted)",
    "wormhole_mailbox._plugin",
    "Run a Magic Wormhole Mailbox server.",
    "wormhole-mailbox",
    extra="mailbox",
)
