"""Start-up cost of the CLI (docs/performance.md, "File transfer and relay"):
``import wormhole`` and option parsing do not load the client, and the
CLI turns off autobahn's cffi-compiled NVX helpers unless told otherwise.
Each check runs in a fresh interpreter, since this test process has long
imported everything."""

import os
import subprocess
import sys

from twisted.trial import unittest


def _run(code, **env):
    full = dict(os.environ, **env)
    full.pop("AUTOBAHN_USE_NVX", None)
    full.update(env)
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


class LazyImports(unittest.TestCase):
    def test_import_wormhole_leaves_the_client_unloaded(self):
        """``import wormhole`` (and its errors, __version__) loads neither
        the client nor autobahn; ``wormhole.create`` loads them on first
        use and is the real create (the public API is unchanged)."""
        out = _run(
            "import sys, wormhole\n"
            "print(sorted(m for m in ('wormhole.wormhole', 'autobahn', 'spake2')"
            " if m in sys.modules))\n"
            "print(wormhole.__version__, wormhole.WrongPasswordError.__name__)\n"
            "from wormhole import create, Journal, ImmediateJournal, input_with_completion\n"
            "import wormhole.wormhole as ww, wormhole.journal as wj\n"
            "print(create is ww.create, Journal is wj.Journal, 'autobahn' in sys.modules)\n"
            "print(sorted(set(wormhole.__all__) - set(dir(wormhole))))\n")
        self.assertEqual(out.splitlines(), [
            "[]", "0.1.0 WrongPasswordError", "True True True", "[]"])

    def test_unknown_attribute_is_an_attribute_error(self):
        """Names that are not public still raise AttributeError (hasattr
        and getattr with a default keep working)."""
        out = _run("import wormhole\n"
                   "print(hasattr(wormhole, 'nope'), getattr(wormhole, 'nope', 7))\n")
        self.assertEqual(out, "False 7")

    def test_cli_help_does_not_load_the_client(self):
        """Building the click group and ``send --help`` load no autobahn or
        spake2."""
        out = _run(
            "import sys\n"
            "from wormhole.cli.cli import wormhole\n"
            "try:\n"
            "    wormhole(['send', '--help'], standalone_mode=False)\n"
            "except SystemExit:\n"
            "    pass\n"
            "print('LOADED', sorted(m for m in ('wormhole.wormhole', 'autobahn', 'spake2')"
            " if m in sys.modules))\n")
        self.assertIn("--code-length", out)
        self.assertEqual(out.splitlines()[-1], "LOADED []")

    def test_cli_turns_nvx_off_by_default(self):
        """Running the CLI sets AUTOBAHN_USE_NVX=0 before autobahn is
        imported, so autobahn uses its pure-Python helpers; a user's
        setting wins. Importing the CLI module changes nothing."""
        code = ("import os\n"
                "from wormhole.cli.cli import wormhole\n"
                "print(os.environ.get('AUTOBAHN_USE_NVX', 'unset'))\n"
                "wormhole(['help'], standalone_mode=False)\n"
                "import autobahn.websocket as w\n"
                "print(os.environ['AUTOBAHN_USE_NVX'], w.USES_NVX)\n")
        lines = _run(code).splitlines()
        self.assertEqual((lines[0], lines[-1]), ("unset", "0 False"))
        nvx = _run("import autobahn.websocket as w\nprint(w.HAS_NVX)\n")
        if nvx == "True":
            lines = _run(code, AUTOBAHN_USE_NVX="1").splitlines()
            self.assertEqual((lines[0], lines[-1]), ("1", "1 True"))

    def test_hidden_progress_leaves_tqdm_unloaded(self):
        """With progress hidden (--hide-progress, or a session's total for
        one offer) the transfer commands' bars, lines and summaries load
        neither tqdm nor multiprocessing (tqdm's lock); the first bar
        shown (on a terminal) loads tqdm."""
        out = _run(
            "import io, sys\n"
            "import wormhole.cli.cmd_send, wormhole.cli.cmd_receive\n"
            "from wormhole.cli.ui import progress as _progress, screen\n"
            "from wormhole.cli._config import Config\n"
            "class Path: description = 'tcp:1.2.3.4:5'\n"
            "class Clock:\n"
            "    def seconds(self): return 1.0\n"
            "err = io.StringIO()\n"
            "cfg = Config(hide_progress=True, stderr=err)\n"
            "total = _progress.SessionTotal(cfg, 10, several=False)\n"
            "offer = _progress.OfferProgress(Clock(), cfg, Path(), ('Sending', 'Sent'), 10,\n"
            "                                'a', total=total.bar)\n"
            "offer.file_started(['d', 'f'], 10, 0)\n"
            "offer.update(10)\n"
            "screen.say(cfg, offer.summary())\n"
            "offer.close(); total.close()\n"
            "print(sorted(m for m in ('tqdm', 'multiprocessing') if m in sys.modules))\n"
            "print(err.getvalue().splitlines())\n"
            "import fcntl, os, struct, termios\n"
            "master, slave = os.openpty()  # a bar is shown on a terminal only\n"
            "fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))\n"
            "shown = Config(stderr=os.fdopen(slave, 'w'))\n"
            "bar = _progress.progress_bar(shown, 10)\n"
            "print('tqdm' in sys.modules, isinstance(bar, sys.modules['tqdm'].tqdm))\n")
        lines = out.splitlines()
        self.assertEqual(lines[0], "[]")
        self.assertEqual(lines[1], "['Sending (tcp:1.2.3.4:5)..', "
                                   "'Sent 10 Bytes in 0.00 s (-) via tcp:1.2.3.4:5']")
        self.assertEqual(lines[2], "True True")

    def test_transfer_v2_commands_leave_the_classic_machines_unloaded(self):
        """The commands' modules load only the classic package's message
        names (``wormhole.transfer._messages``); its protocol modules load
        when a classic transfer uses them, and every public name is there
        (``from wormhole.transfer import X`` as before)."""
        out = _run(
            "import sys\n"
            "import wormhole.cli.cmd_receive, wormhole.cli.cmd_send\n"
            "import wormhole.cli._receive_v2, wormhole.cli._send_paths, wormhole.cli._interrupt\n"
            "print(sorted(m for m in sys.modules if m.startswith('wormhole.transfer.')))\n"
            "import wormhole.transfer as t\n"
            "print(all(hasattr(t, n) for n in t.__all__), set(t.__all__) <= set(dir(t)),\n"
            "      hasattr(t, 'nope'))\n"
            "from wormhole.transfer import Receiver, DeclinedOffer\n"
            "print(wormhole.cli.cmd_receive.DeclinedOffer is DeclinedOffer,\n"
            "      Receiver.__module__)\n")
        self.assertEqual(out.splitlines(), [
            "['wormhole.transfer._messages']", "True True False",
            "True wormhole.transfer._receiver"])
