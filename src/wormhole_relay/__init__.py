"""The Transit relay (Transit protocol, "Relay Handshake"): ``twistd transitrelay``.

Layout (docs/relay.md, "Code"):

- ``_handshake``: the sans-I/O handshake line parser;
- ``_connection``: the per-connection Automat machine;
- ``_pairing``: tokens waiting for a partner, and the pairs;
- ``_usage``: the usage recorder and its memory / SQLite / JSON-lines
  writers; ``_metrics``: what ``--metrics`` counts;
- ``_limits``: every bound on what a client can make us hold;
- ``_tcp`` and ``_websocket``: the thin Twisted glue; ``_splice``:
  zero-copy forwarding between two TCP clients (Linux ``splice(2)``);
- ``_interfaces``: one zope Interface per object;
- ``server``: the wiring; ``testing``: run it inside a test; ``_plugin``:
  the twistd options.

docs/relay.md is the operator's guide.
"""
