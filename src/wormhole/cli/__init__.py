"""The ``wormhole`` command line tool (Command line, "CLI tool"; the
File-transfer protocol).

``cli.py`` holds the click group; ``cmd_send``/``cmd_receive`` run one
transfer each against the public client API (Client API) and the transfer
libraries (``wormhole.transfer``, which holds the File-transfer protocol's
machines, and ``wormhole.transfer_v2``). docs/cli.md, "How the command
line is laid out" says which module does what.
"""
