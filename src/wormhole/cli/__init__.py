"""The ``wormhole`` command line tool (spec 004 1.7, chapter 9).

``cli.py`` holds the click group; ``cmd_send``/``cmd_receive`` run one
transfer each against the public client API (spec 004 chapter 5);
``_offer.py`` (the sender of texts, files and directories) and
``_receiver.py`` (the recipient) hold the file-transfer protocol as Automat
machines.
"""
