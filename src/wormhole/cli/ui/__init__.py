"""The terminal side of the ``wormhole`` command (docs/cli.md, "How the
command line is laid out"): what a person at a terminal sees and
answers, apart from what the commands do.

``progress`` draws the bars and the path and summary lines (``bar``: the
tqdm bar, imported only for a bar that is shown), ``screen`` keeps the
bars off a question's line and says lines above them, ``prompt`` asks
the human, ``terminal`` leaves the terminal as it was found, ``wording``
holds what the commands say, ``connection_path`` names the connection
the bytes take, and ``qr`` draws the code as a QR code.
"""
