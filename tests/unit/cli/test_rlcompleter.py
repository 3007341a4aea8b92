"""Tab completion of wormhole codes (Client API, "Code Management"),
without a terminal: the completer is driven as readline would drive it,
and ``call`` runs the helper directly instead of hopping to the reactor
thread."""
from twisted.internet import defer
from twisted.trial import unittest

from wormhole._rlcompleter import CodeInputter
from wormhole.errors import KeyFormatError, ServerConnectionError, WormholeClosed

from ...cli.fakes import FakeHelper


def direct_call(f, *args):
    """What blockingCallFromThread does, in one thread: wait for a
    Deferred's result."""
    result = f(*args)
    if isinstance(result, defer.Deferred):
        out = []
        result.addBoth(out.append)
        assert out, "the Deferred has not fired"
        return out[0]
    return result


class Completion(unittest.TestCase):

    def setUp(self):
        self.log = []
        self.helper = FakeHelper(self.log)
        self.errors = []
        self.ci = CodeInputter(self.helper, None, call=direct_call, debug=self.errors.append)

    def all_matches(self, text):
        out = []
        state = 0
        while True:
            m = self.ci.completer(text, state)
            if m is None:
                return out
            out.append(m)
            state += 1

    def test_nameplates(self):
        """Before a hyphen, the sorted nameplates with their hyphen; the
        list is refreshed at each <Tab>."""
        self.assertEqual(self.all_matches("1"), ["1-", "12-", "13-", "170-"])
        self.assertIn(("h.refresh_nameplates",), self.log)
        self.assertNotIn(("h.choose_nameplate", "1"), self.log)
        self.assertTrue(self.ci.used_completion)

    def test_closed_wormhole_said_once(self):
        """The wormhole closed (no server to ask): <Tab> offers nothing and
        says why, once, on a line of its own, escaped; no traceback."""
        def closed(*args):
            raise WormholeClosed(ServerConnectionError("ws://x/v1", "refused\x1b[2J"))
        self.helper.refresh_nameplates = closed
        self.helper.choose_nameplate = closed
        notes = []
        ci = CodeInputter(self.helper, None, call=direct_call, debug=self.errors.append,
                          note=notes.append)
        self.assertIsNone(ci.completer("4", 0))
        self.assertIsNone(ci.completer("4-pu", 0))
        self.assertEqual(self.errors, [])
        self.assertEqual(len(notes), 1)
        self.assertTrue(notes[0].startswith("\n(nothing to complete: the wormhole closed: "))
        self.assertIn("ws://x/v1", notes[0])
        self.assertNotIn("\x1b", notes[0])

    def test_first_tab_waits_for_the_list(self):
        """When no nameplate matches yet (the server's answer to the
        refresh is on its way), the <Tab> looks again until one does."""
        answers = [set(), set(), {"4-"}]
        self.helper.get_nameplate_completions = lambda prefix: answers.pop(0)
        slept = []
        ci = CodeInputter(self.helper, None, call=direct_call, sleep=slept.append,
                          clock=lambda: 0.0)
        self.assertEqual(ci.completer("", 0), "4-")
        self.assertEqual(len(slept), 2)

    def test_tab_gives_up_after_the_wait(self):
        """Nothing matches for NAMEPLATE_WAIT seconds: no completion."""
        from wormhole import _rlcompleter
        now = [0.0]

        def sleep(seconds):
            now[0] += seconds
        self.helper.get_nameplate_completions = lambda prefix: set()
        ci = CodeInputter(self.helper, None, call=direct_call, sleep=sleep,
                          clock=lambda: now[0])
        self.assertIsNone(ci.completer("9", 0))
        self.assertGreaterEqual(now[0], _rlcompleter.NAMEPLATE_WAIT)

    def test_words_commit_nameplate(self):
        """After the hyphen: the nameplate is chosen once, the wordlist
        awaited, and words completed with the nameplate in front."""
        self.assertEqual(self.all_matches("12-pu"), ["12-pumpkin-", "12-purple-"])
        chosen = [e for e in self.log if e[0] == "h.choose_nameplate"]
        self.assertEqual(chosen, [("h.choose_nameplate", "12")])
        self.assertIn(("h.when_wordlist_is_available",), self.log)
        self.assertIn(("h.get_word_completions", "pu"), self.log)

    def test_other_nameplate_after_commit(self):
        """Once a nameplate is claimed, another one completes to nothing."""
        self.all_matches("12-pu")
        self.assertEqual(self.all_matches("13-pu"), [])

    def test_bad_nameplate_offers_nothing(self):
        """A KeyFormatError from the helper (half-typed bad nameplate)
        gives no completions and no error report."""
        def bad(nameplate):
            raise KeyFormatError("no")
        self.helper.choose_nameplate = bad
        self.assertEqual(self.all_matches("x-pu"), [])
        self.assertEqual(self.errors, [])

    def test_unexpected_error_reported(self):
        """Other completer errors (which readline would swallow) go to
        ``debug``, and completion offers nothing."""
        def broken(prefix):
            raise RuntimeError("bug")
        self.helper.get_nameplate_completions = broken
        self.assertEqual(self.all_matches("1"), [])
        self.assertEqual(len(self.errors), 1)
        self.assertIn("RuntimeError", self.errors[0])


class Finish(unittest.TestCase):

    def setUp(self):
        self.log = []
        self.helper = FakeHelper(self.log)
        self.ci = CodeInputter(self.helper, None, call=direct_call)

    def test_typed_without_completion(self):
        """A code typed in full chooses nameplate then words; no
        completion was used."""
        self.ci.finish("4-purple-sausages\n")
        self.assertEqual(self.log, [("h.choose_nameplate", "4"),
                                    ("h.choose_words", "purple-sausages")])
        self.assertFalse(self.ci.used_completion)

    def test_after_completion(self):
        """After completion claimed the nameplate, only the words are
        chosen at the end."""
        self.ci.completer("4-pu", 0)
        del self.log[:]
        self.ci.finish("4-purple-sausages")
        self.assertEqual(self.log, [("h.choose_words", "purple-sausages")])
        self.assertTrue(self.ci.used_completion)

    def test_no_hyphen(self):
        """A line without a hyphen is a KeyFormatError."""
        self.assertRaises(KeyFormatError, self.ci.finish, "purple")

    def test_changed_nameplate(self):
        """Editing the nameplate after completion claimed one is refused."""
        self.ci.completer("4-pu", 0)
        self.assertRaises(KeyFormatError, self.ci.finish, "5-purple-sausages")


class InputWithCompletion(unittest.TestCase):

    def test_reads_in_a_thread_and_sets_the_code(self):
        """input_with_completion reads the line off the reactor thread,
        gives it to the helper, and fires with whether completion was
        used (here: no)."""
        import threading

        from twisted.internet import reactor

        from wormhole import _rlcompleter
        seen = []

        def fake_read(prompt, inputter):
            seen.append((prompt, threading.current_thread() is threading.main_thread()))
            return "7-purple-sausages\n"
        self.patch(_rlcompleter, "_read_with_readline", fake_read)
        log = []
        d = _rlcompleter.input_with_completion("Code: ", FakeHelper(log), reactor)

        def check(used):
            self.assertIs(used, False)
            self.assertEqual(seen, [("Code: ", False)])
            self.assertEqual(log, [("h.choose_nameplate", "7"),
                                   ("h.choose_words", "purple-sausages")])
        return d.addCallback(check)

    def test_eof(self):
        """End of input errbacks with EOFError (the CLI turns it into a
        readable message)."""
        from twisted.internet import reactor

        from wormhole import _rlcompleter

        def fake_read(prompt, inputter):
            raise EOFError()
        self.patch(_rlcompleter, "_read_with_readline", fake_read)
        d = _rlcompleter.input_with_completion("Code: ", FakeHelper([]), reactor)
        return self.assertFailure(d, EOFError)


class TerminalRestore(unittest.TestCase):

    def setUp(self):
        import os
        import pty
        import sys
        master, slave = pty.openpty()
        self.addCleanup(os.close, master)
        stdin = os.fdopen(slave, "r")
        self.addCleanup(stdin.close)
        self.patch(sys, "stdin", stdin)
        self.fd = slave

    def echo(self):
        import termios
        return bool(termios.tcgetattr(self.fd)[3] & termios.ECHO)

    def set_echo(self, on):
        import termios
        attrs = termios.tcgetattr(self.fd)
        attrs[3] = attrs[3] | termios.ECHO if on else attrs[3] & ~termios.ECHO
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)

    def test_restored_after_shutdown(self):
        """If the process stops while readline has the terminal in raw
        mode (Ctrl-C at the prompt), the terminal settings from before the
        prompt are put back after the reactor shut down."""
        from wormhole import _rlcompleter

        from ...cli.fakes import FakeReactor
        reactor = FakeReactor()
        self.set_echo(True)
        _rlcompleter._restore_terminal_on_shutdown(reactor)
        self.set_echo(False)  # what readline does while reading
        [(phase, event, f, args, kw)] = reactor.triggers.values()
        self.assertEqual((phase, event), ("after", "shutdown"))
        f(*args, **kw)
        self.assertTrue(self.echo())

    def test_not_needed_once_input_is_done(self):
        """Once the line was read, the restore is unregistered."""
        from wormhole import _rlcompleter

        from ...cli.fakes import FakeReactor
        reactor = FakeReactor()
        done = _rlcompleter._restore_terminal_on_shutdown(reactor)
        self.assertEqual(done("line"), "line")
        self.assertEqual(reactor.triggers, {})
