"""The public servers the CLI uses by default (Command line, "Relays").

Applications written for the reference import these two names from
``wormhole.cli.public_relay``, so they stay here with these spellings.
"""

# the Mailbox ("rendezvous") server: a WebSocket URL (Client API, "Mailbox Servers")
RENDEZVOUS_RELAY = "ws://relay.magic-wormhole.io:4000/v1"
# an alias under the name the example of Client API, "Modes" uses
MAILBOX_RELAY = RENDEZVOUS_RELAY

# the Transit relay: a Twisted client endpoint string (Transit protocol, "Relay")
TRANSIT_RELAY = "tcp:transit.magic-wormhole.io:4001"
