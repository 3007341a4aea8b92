"""What the shell-completion test modules share (test_shell_completion.py,
test_zsh_fish_completion.py): the venv's bin folder for the shells' PATH,
and a sender whose nameplate and first word the completions must offer."""

import os
import sys

from twisted.internet import defer, reactor

from ._process import CLIProcess, our_cli

BIN = os.path.dirname(sys.executable)


@defer.inlineCallbacks
def start_sender(testcase):
    """``wormhole send --text x`` against ``testcase.url``; fires with the
    running sender, the nameplate and the code's first word."""
    send = CLIProcess.spawn(testcase, reactor, our_cli("--relay-url", testcase.url, "send",
                                                       "--no-qr", "--text", "x"),
                            name="sender")
    m = yield send.wait_for(rb"Wormhole code is: (\d+)-(\w+)-")
    return send, m.group(1).decode(), m.group(2).decode()
