"""Typing a wormhole code with tab completion (Client API, "Code Management").

``input_with_completion(prompt, input_helper, reactor)`` runs ``input()``
in a thread (it blocks) while readline asks ``CodeInputter.completer`` for
completions. The completer runs in that thread too, so every call into the
code-entry helper hops to the reactor thread (``blockingCallFromThread``):
the helper and the machines behind it are single-threaded.

What the completer offers: before the first hyphen, the nameplates the
server reports (``get_nameplate_completions``, refreshed at each <Tab>);
once a hyphen was typed, the nameplate is committed (``choose_nameplate``),
we wait until its wordlist is known (``when_wordlist_is_available``), and
complete the words (``get_word_completions``). When the line is entered,
``finish`` chooses the nameplate (if no <Tab> did) and the words.

The thread is a daemon thread, not the reactor's pool: if the user presses
Ctrl-C while ``input()`` waits, the process can still exit (a pool thread
stuck in ``input()`` would hold up reactor shutdown).
"""
import os
import sys
import threading
import time
import traceback

from twisted.internet.defer import Deferred
from twisted.internet.threads import blockingCallFromThread
from twisted.python.failure import Failure

from ._escape import escape_text
from .errors import KeyFormatError, WormholeClosed

try:
    import readline
except ImportError:  # e.g. Windows without pyreadline: plain input()
    readline = None

__all__ = ["CodeInputter", "input_with_completion"]

# how long a <Tab> before the hyphen waits for the server's nameplates when
# none match yet, and how often it looks
NAMEPLATE_WAIT = 2.0
NAMEPLATE_POLL = 0.05


class CodeInputter:
    """The completion logic, separate from readline and threads so that
    tests drive it directly: ``call(f, *args)`` runs ``f`` in the reactor
    thread and returns its result (waiting for a Deferred), and
    ``debug`` receives errors the completer would otherwise lose (readline
    silently drops exceptions raised by a completer)."""

    def __init__(self, input_helper, reactor, call=None, debug=None, sleep=time.sleep,
                 clock=time.monotonic, note=None):
        self._helper = input_helper
        self._reactor = reactor
        self._call = call or (lambda f, *a: blockingCallFromThread(reactor, f, *a))
        self._debug = debug
        # where to say that nothing can be completed any more (the
        # wormhole closed: no server to ask), once
        self._note = note
        self._said_closed = False
        # the input thread waits for the server's list (NAMEPLATE_WAIT)
        self._sleep = sleep
        self._clock = clock
        self._committed_nameplate = None
        self._matches = []
        self.used_completion = False

    # -- readline side (input thread) --------------------------------------
    def completer(self, text, state):
        """readline's completer: ``text`` is the whole line (we set no
        delimiters), ``state`` counts 0, 1, 2.. until we return None."""
        try:
            return self._completer(text, state)
        except KeyFormatError:
            return None  # a half-typed bad nameplate: just offer nothing
        except WormholeClosed as e:
            self._closed(e)
            return None
        except Exception:
            if self._debug is not None:
                self._debug(traceback.format_exc())
            return None

    def _completer(self, text, state):
        self.used_completion = True
        if state == 0:
            self._matches = self.completions(text)
        if state < len(self._matches):
            return self._matches[state]
        return None

    def completions(self, text):
        """Sorted full-line completions of ``text`` (Client API, "Code
        Management": the frontend sorts)."""
        if "-" not in text:
            # refresh at each <Tab>: a nameplate allocated since the last
            # list shows up on this press or the next
            self._call(self._helper.refresh_nameplates)
            return sorted(self._nameplates_matching(text))
        nameplate, words = text.split("-", 1)
        if self._committed_nameplate is None:
            self._call(self._helper.choose_nameplate, nameplate)
            self._committed_nameplate = nameplate
            self._call(self._helper.when_wordlist_is_available)
        elif nameplate != self._committed_nameplate:
            # the nameplate is claimed already: it cannot change any more
            return []
        matches = self._call(self._helper.get_word_completions, words)
        return sorted(nameplate + "-" + m for m in matches)

    def _nameplates_matching(self, text):
        """When nothing matches yet (the first <Tab>, before the server's
        first answer to ``list``), wait for the answer, at most
        NAMEPLATE_WAIT seconds: this thread is the input thread, the
        reactor keeps running."""
        deadline = self._clock() + NAMEPLATE_WAIT
        while True:
            matches = self._call(self._helper.get_nameplate_completions, text)
            if matches or self._clock() >= deadline:
                return matches
            self._sleep(NAMEPLATE_POLL)

    def _closed(self, e):
        """The helper refuses: the wormhole closed (docs/api.md "After
        close"). Say so once, on a line of its own, instead of offering
        nothing without a word."""
        if self._said_closed or self._note is None:
            return
        self._said_closed = True
        reason = e.reason if isinstance(e.reason, Exception) else f"mood {e.reason}"
        self._note(f"\n(nothing to complete: the wormhole closed: "
                   f"{escape_text(str(reason))})")

    # -- reactor side ------------------------------------------------------
    def finish(self, text):
        """The line was entered: hand the code to the helper. Raises
        KeyFormatError for a line without a nameplate and a hyphen, or
        with a nameplate other than the one completion committed to."""
        text = text.strip()
        if "-" not in text:
            raise KeyFormatError(
                f"Code '{text}' has no hyphen: it must look like 4-purple-sausages")
        nameplate, words = text.split("-", 1)
        if self._committed_nameplate is None:
            self._helper.choose_nameplate(nameplate)
        elif nameplate != self._committed_nameplate:
            raise KeyFormatError(
                f"nameplate '{nameplate}-' does not match the one completion chose: "
                f"'{self._committed_nameplate}-' (it cannot be changed once claimed)")
        self._helper.choose_words(words)


def _read_with_readline(prompt, inputter):
    """Input thread: install our completer for one ``input()`` call."""
    if readline is None:
        return input(prompt)
    old_completer = readline.get_completer()
    old_delims = readline.get_completer_delims()
    readline.set_completer(inputter.completer)
    readline.set_completer_delims("")
    # GNU readline and libedit (macOS) spell the binding differently
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    try:
        return input(prompt)
    finally:
        readline.set_completer(old_completer)
        readline.set_completer_delims(old_delims)


def _in_daemon_thread(reactor, f, *args):
    """Run ``f(*args)`` in a daemon thread; the Deferred fires in the
    reactor thread with its result or failure."""
    d = Deferred()

    def run():
        try:
            result = f(*args)
        except BaseException as e:  # noqa: B036 -- EOFError, KeyboardInterrupt too
            reactor.callFromThread(d.errback, e)
        else:
            reactor.callFromThread(d.callback, result)

    threading.Thread(target=run, name="wormhole-code-input", daemon=True).start()
    return d


def _restore_terminal_on_shutdown(reactor):
    """readline puts the terminal in raw mode while it reads. If the
    process ends during ``input()`` (Ctrl-C), readline never restores it:
    we do, after the reactor stopped. Returns a pass-through callback that
    cancels this once the input is done."""
    try:
        import termios
        fd = sys.stdin.fileno()
        if not os.isatty(fd):
            raise ValueError("not a terminal")
        attrs = termios.tcgetattr(fd)
    except (ImportError, ValueError, OSError, AttributeError):
        return lambda result: result

    def restore():
        try:
            termios.tcsetattr(fd, termios.TCSADRAIN, attrs)
        except termios.error:
            pass
    trigger = reactor.addSystemEventTrigger("after", "shutdown", restore)

    def done(result):
        reactor.removeSystemEventTrigger(trigger)
        return result
    return done


def _settler(d):
    """A callback giving its result (or failure) to ``d`` unless ``d``
    has one already (given up, or another event answered first)."""
    def settle(result):
        if not d.called:
            if isinstance(result, Failure):
                d.errback(result)
            else:
                d.callback(result)
    return settle


def _passing(f):
    """A callback that calls ``f()`` and passes the result on."""
    def call(result):
        f()
        return result
    return call


def input_with_completion(prompt, input_helper, reactor):
    """Prompt for a wormhole code on the terminal, completing nameplates
    and words with <Tab> (Client API, "Code Management"). Returns a Deferred that fires
    with True if the user used completion, False if not, once the code
    was given to ``input_helper`` (``w.get_code()`` fires then too)."""
    def debug(text):
        print(text, file=sys.stderr)
    inputter = CodeInputter(input_helper, reactor, debug=debug, note=debug)
    restore = _restore_terminal_on_shutdown(reactor)
    # Cancelling the answer gives the question up (the wormhole closed,
    # maybe before the thread even began to read): a thread not yet in
    # input() never enters it, so readline cannot take the terminal after
    # the shutdown trigger put it back; one already in it stays there
    # until the process ends, and the trigger restores the terminal then
    gate = threading.Lock()
    given_up = []

    def give_up(_answer=None):
        with gate:
            given_up.append(True)

    def read_unless_given_up():
        with gate:
            if given_up:
                raise EOFError("the question was given up")
        return _read_with_readline(prompt, inputter)
    stopping = reactor.addSystemEventTrigger("before", "shutdown", give_up)
    read = _in_daemon_thread(reactor, read_unless_given_up)
    # input() returned: readline put the terminal back itself
    read.addBoth(restore)
    read.addBoth(_passing(lambda: reactor.removeSystemEventTrigger(stopping)))
    answer = Deferred(give_up)

    def entered(text):
        if answer.called:
            return None  # given up: the line answers nothing
        inputter.finish(text)
        return inputter.used_completion

    read.addCallback(entered)
    read.addBoth(_settler(answer))
    return answer


# the public name (``wormhole.read_in_thread``): a blocking read off the
# reactor's thread, which the command's own prompts use too
read_in_thread = _in_daemon_thread
