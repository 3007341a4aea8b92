"""The public servers the CLI uses by default (spec 004 1.6).

Applications written for the reference import these two names from
``wormhole.cli.public_relay``, so they stay here with these spellings.
"""

# the Mailbox ("rendezvous") server: a WebSocket URL (spec 004 5.3)
RENDEZVOUS_RELAY = "ws://relay.magic-wormhole.io:4000/v1"
# an alias under the name spec 004 5.1's example uses
MAILBOX_RELAY = RENDEZVOUS_RELAY

# the Transit relay: a Twisted client endpoint string (spec 004 6.4)
TRANSIT_RELAY = "tcp:transit.magic-wormhole.io:4001"
