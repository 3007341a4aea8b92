"""The ``wormhole`` command line tool (Command line, "CLI tool"; the
File-transfer protocol).

``cli.py`` holds the click group; ``cmd_send``/``cmd_receive`` run one
transfer each against the public client API (Client API);
``_offer.py`` (the sender of texts, files and directories) and
``_receiver.py`` (the recipient) hold the file-transfer protocol as Automat
machines.
"""
