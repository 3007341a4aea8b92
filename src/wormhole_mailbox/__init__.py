"""The Mailbox server (Mailbox server protocol): ``twistd wormhole-mailbox``.

Layout (docs/server.md, "Layout"):

- ``_model``: nameplates and mailboxes, no I/O;
- ``_store``: memory or SQLite with group commit; ``_schema``: the SQLite
  files in the reference server's layout;
- ``_connection``: the per-connection machine; ``_nameplate_use`` and
  ``_mailbox_use``: one bound connection's use of a nameplate, a mailbox;
- ``_messages``: decoding and checking client messages before any machine;
- ``_permissions``: the permission methods none and hashcash (Mailbox
  server protocol, "Permission to Use the Server");
- ``_limits``: the limits the reference lacks; ``_usage``: usage records;
  ``_metrics``: what ``--metrics`` counts;
- ``_websocket``: the thin autobahn glue; ``_interfaces``: one zope
  Interface per object;
- ``server``: the wiring; ``testing``: run it inside a test; ``_plugin``:
  the twistd options.
"""
