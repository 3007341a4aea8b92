"""What both servers (the Mailbox server, wormhole_mailbox, and the Transit
relay, wormhole_relay) share for their operators: the usage events
(``events``: the schema the analytics read; ``usage``: writers and
blurring), the ``--metrics`` and ``/health`` site (``metrics``), logs
(``logs``), listening (``listen``) and the twistd plugins' loader
(``twistd``). The client never imports this package; it imports neither
server (docs/architecture.md)."""
