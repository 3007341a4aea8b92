"""zsh and fish completion for real (docs/cli.md, "Shell completion"):
the script ``wormhole completion zsh|fish`` prints, loaded into the shell
itself, completes a command name, an option and the receive code (the
nameplate the Mailbox server lists, then the words), against our Mailbox
server and the reference's 0.8 (the server fixtures and the sender of
_completion.py, as in test_shell_completion.py).

Both shells also run interactively in a pseudo-terminal and get real
<Tab>s; a key binding on ^T prints the line being edited between ``<<``
and ``>>``, so each check sees the exact line (a space after ``4-`` would
show). fish answers besides through its own completion API,
``complete -C LINE``."""
import os
import re
import shutil

from twisted.internet import defer, reactor
from twisted.trial import unittest

from wormhole._wordlist import PGPWordList

from ._completion import BIN, start_sender
from ._process import CLIProcess
from ._pty import spawn_in_pty
from ._servers import OurServer, ReferenceServer

SHOW = b"\x14"  # ^T, bound to the widget that prints the buffer
KILL_LINE = b"\x15"  # ^U: kill-whole-line in zsh's emacs keymap

# what a user puts in ~/.zshrc (docs/cli.md), less the dump file compinit
# would write into $HOME, and the ^T widget
_ZSHRC = """PS1='$ '
autoload -U compinit; compinit -u -D
eval "$({prog} completion zsh)"
_show_buffer() {{ print -r -- "<<$BUFFER>>" }}
zle -N _show_buffer; bindkey '^T' _show_buffer
"""


def _shell(testcase, name):
    path = shutil.which(name)
    if path is None:
        testcase.fail(
            f"{name} is not installed (./dev installs it as root: apt-get install {name})")
    return path


def zsh(testcase, prog="wormhole"):
    """An interactive zsh (no startup files but ours) in a terminal,
    with the completion script of ``prog`` loaded."""
    rc = os.path.abspath(testcase.mktemp())
    with open(rc, "w") as f:
        f.write(_ZSHRC.format(prog=prog))
    shell = spawn_in_pty(testcase, [_shell(testcase, "zsh"), "-f", "-i"], "zsh",
                         env={"PATH": BIN + os.pathsep + os.environ["PATH"]})
    shell.write(f"source {rc}\r".encode())
    return shell


_FISH_INIT = """{prog} completion fish | source
bind \\ct 'echo "<<"(commandline)">>"'
"""


def fish(testcase, prog="wormhole"):
    """An interactive fish (no configuration, no history) in a terminal,
    with the completion script of ``prog`` sourced."""
    init = os.path.abspath(testcase.mktemp())
    with open(init, "w") as f:
        f.write(_FISH_INIT.format(prog=prog))
    return spawn_in_pty(testcase, [_shell(testcase, "fish"), "--no-config", "--private",
                                   "-i", "-C", f"source {init}"], "fish",
                        env={"PATH": BIN + os.pathsep + os.environ["PATH"]})


def unique_start(words_before, word):
    """The shortest start of ``word`` that only it completes to after
    ``words_before`` ("endo" could be "endorse" or "endow": a <Tab> there
    would list both)."""
    for end in range(1, len(word) + 1):
        if len(PGPWordList().get_completions(words_before + word[:end])) == 1:
            return word[:end]
    raise AssertionError(f"{word!r} is not in the wordlist")


def buffer_is(shell, line):
    """Fires when the ^T widget has printed exactly ``line``."""
    return shell.wait_for(re.escape(b"<<" + line.encode() + b">>"))


@defer.inlineCallbacks
def fish_complete(testcase, line, prog="wormhole"):
    """fish's completions of ``line`` (as if <Tab> were pressed at its
    end) with the script of ``prog`` sourced: [(value, description)]."""
    script = f"{prog} completion fish | source; complete -C '{line}'"
    run = CLIProcess.spawn(testcase, reactor,
                           [_shell(testcase, "fish"), "--no-config", "-c", script],
                           name="fish", env={"PATH": BIN + os.pathsep + os.environ["PATH"]})
    status = yield run.ended
    testcase.assertEqual(status, 0, run.describe())
    return [tuple(entry.split("\t", 1)) if "\t" in entry else (entry, "")
            for entry in run.stdout.decode().splitlines()]


class _RealShellsCode:
    timeout = 30

    def test_zsh_completes_nameplate_then_words(self):
        """zsh: <Tab> after `receive ` puts in the server's nameplate with
        its hyphen and no space; <Tab> after the start of a word completes
        it within the code (hyphen, no space), the last word gets a space."""
        return self.tab_through_code(zsh(self))

    def test_interactive_fish_completes_nameplate_then_words(self):
        """fish in a terminal: the same <Tab>s give the same lines (fish
        itself leaves no space after a trailing hyphen)."""
        return self.tab_through_code(fish(self))

    @defer.inlineCallbacks
    def tab_through_code(self, shell):
        send, nameplate, word = yield start_sender(self)
        # the second word: the sender printed only the first
        code = (yield send.wait_for(rb"wormhole receive (\S+)")).group(1).decode()
        second = code.split("-")[2]
        line = f"wormhole --relay-url {self.url} receive "
        shell.write(line.encode() + b"\t" + SHOW)
        yield buffer_is(shell, f"{line}{nameplate}-")
        shell.write(word[:-1].encode() + b"\t" + SHOW)
        yield buffer_is(shell, f"{line}{nameplate}-{word}-")
        shell.write(unique_start(f"{word}-", second).encode() + b"\t" + SHOW)
        yield buffer_is(shell, f"{line}{code} ")
        send.kill()

    @defer.inlineCallbacks
    def test_fish_completes_nameplate_then_words(self):
        """fish: `receive ` completes to the server's nameplate with its
        hyphen, `receive N-<start of word>` to the word (and its hyphen)."""
        send, nameplate, word = yield start_sender(self)
        line = f"wormhole --relay-url {self.url} receive "
        found = yield fish_complete(self, line)
        self.assertIn((f"{nameplate}-", ""), found)
        found = yield fish_complete(self, f"{line}{nameplate}-{word[:-1]}")
        self.assertEqual(found, [(f"{nameplate}-{word}-", "")])
        send.kill()


class RealShellsOurServer(OurServer, _RealShellsCode, unittest.TestCase):
    pass


class RealShellsReferenceServer(ReferenceServer, _RealShellsCode, unittest.TestCase):
    pass


class RealShellsCommands(unittest.TestCase):
    timeout = 30

    @defer.inlineCallbacks
    def test_zsh_commands_and_options(self):
        """zsh completes a command name and an option (each followed by a
        space), under both command names."""
        for prog in ("wormhole", "magic-wormhole"):
            shell = zsh(self, prog)
            shell.write(f"{prog} rec\t".encode() + SHOW)
            yield buffer_is(shell, f"{prog} receive ")
            shell.write(b"--only-t\t" + SHOW)
            yield buffer_is(shell, f"{prog} receive --only-text ")
            shell.write(KILL_LINE + f"{prog} send --ig\t".encode() + SHOW)
            yield buffer_is(shell, f"{prog} send --ignore-unsendable-files ")

    @defer.inlineCallbacks
    def test_fish_commands_and_options(self):
        """fish completes a command name and an option, with their help
        whole (click's script cut it at the first comma), under both
        command names."""
        for prog in ("wormhole", "magic-wormhole"):
            found = yield fish_complete(self, f"{prog} rec", prog=prog)
            self.assertEqual([value for value, _ in found], ["receive"])
            found = yield fish_complete(self, f"{prog} receive --only-t", prog=prog)
            self.assertEqual(found, [("--only-text",
                                      "refuse file transfers, only accept text transfers")])


class ScriptFixes(unittest.TestCase):
    def test_a_changed_click_script_is_an_error(self):
        """A click whose script lacks the line a fix replaces makes
        ``wormhole completion`` fail, rather than print a script without
        the fix."""
        from wormhole.cli._completion_scripts import fixed_script
        for shell in ("bash", "zsh", "fish"):
            with self.assertRaises(RuntimeError) as e:
                fixed_script(shell, "# a script from another click\n")
            self.assertIn(f"click's {shell} completion script changed", str(e.exception))
