"""The Mailbox server (Mailbox server protocol): ``twistd wormhole-mailbox``.

Layout (docs/server.md, "Layout"): ``_model`` (nameplates and mailboxes, no I/O),
``_store`` (memory or SQLite with group commit), ``_connection`` (the
per-connection machines), ``_websocket`` (the thin autobahn glue),
``server`` (wiring), ``testing`` (run it inside a test), ``_plugin``
(the twistd options).
"""
