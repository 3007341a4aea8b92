"""Shell completion through click (docs/cli.md, "Shell completion"):
bash's real completion function, sourced from ``wormhole completion bash``,
completes commands, options and the receive code (nameplates from the
server, then words). Both command names (``wormhole``,
``magic-wormhole``) work. Against our Mailbox server and the reference's
0.8. zsh and fish: test_zsh_fish_completion.py, with the same servers
and sender (_completion.py)."""
import os
import re

from twisted.internet import defer, reactor
from twisted.trial import unittest

from ._completion import BIN, start_sender
from ._process import CLIProcess
from ._pty import spawn_in_pty
from ._servers import OurServer, ReferenceServer


class _ShellCompletion:
    timeout = 60

    def bash_complete(self, *words, prog="wormhole"):
        """Run bash's completion function for ``words`` (the last one is
        being typed), given the line and cursor as bash gives them; fires
        with the run, COMPREPLY one per line."""
        func = "_" + prog.replace("-", "_") + "_completion"
        line = " ".join((prog,) + words)
        script = (f'eval "$({prog} completion bash)"; COMP_LINE=\'{line}\'; '
                  f"COMP_POINT={len(line)}; {func} {prog}; "
                  'printf "%s\\n" "${COMPREPLY[@]}"')
        run = CLIProcess.spawn(self, reactor, ["/bin/bash", "-c", script], name="bash",
                               env={"PATH": BIN + os.pathsep + os.environ["PATH"]})
        return run.ended.addCallback(lambda _: run)

    @defer.inlineCallbacks
    def test_bash_completes_nameplates_and_words(self):
        """In bash: receive's CODE completes to the server's nameplates
        (the sender's "N-"), and "N-<start of word>" to the words."""
        send, nameplate, word = yield start_sender(self)
        run = yield self.bash_complete("--relay-url", self.url, "receive", "")
        self.assertEqual(run.status, 0, run.describe())
        self.assertIn(f"{nameplate}-", run.stdout.decode().splitlines())
        run = yield self.bash_complete("--relay-url", self.url, "receive",
                                       f"{nameplate}-{word[:-1]}")
        self.assertIn(f"{nameplate}-{word}-", run.stdout.decode().splitlines())
        send.kill()

    @defer.inlineCallbacks
    def test_interactive_bash(self):
        """An interactive bash in a terminal: <Tab> after `receive `
        inserts the nameplate with its hyphen and no space, so <Tab> after
        the start of a word completes it within the same code."""
        send, nameplate, word = yield start_sender(self)
        bash = spawn_in_pty(self, ["/bin/bash", "--norc", "--noprofile", "-i"], "bash",
                            env={"PATH": BIN + os.pathsep + os.environ["PATH"],
                                 "PS1": "$ "})
        bash.write(b'eval "$(wormhole completion bash)"\r')
        bash.write(f"wormhole --relay-url {self.url} receive \t".encode())
        yield bash.wait_for(re.escape(f"receive {nameplate}-".encode()))
        bash.write(word[:-1].encode() + b"\t")
        yield bash.wait_for(re.escape(f"receive {nameplate}-{word}-".encode()))
        # the line is never run: cleanup kills bash and the sender


class ShellCompletionOurServer(OurServer, _ShellCompletion, unittest.TestCase):
    pass


class ShellCompletionReferenceServer(ReferenceServer, _ShellCompletion, unittest.TestCase):
    pass


class Commands(unittest.TestCase):
    timeout = 30

    @defer.inlineCallbacks
    def test_commands_and_options(self):
        """bash completes command names and options (no server needed),
        under both command names."""
        for prog in ("wormhole", "magic-wormhole"):
            run = yield _ShellCompletion.bash_complete(self, "re", prog=prog)
            self.assertEqual(run.stdout.decode().split(), ["receive"], run.describe())
            run = yield _ShellCompletion.bash_complete(self, "send", "--ig", prog=prog)
            self.assertEqual(run.stdout.decode().split(), ["--ignore-unsendable-files"])
