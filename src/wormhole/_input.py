"""The Input machine and the code-entry helper (Client API, "Code Management").

The helper validates what the human typed and forwards it; the machine
knows which step we are at: typing the nameplate (completions come from
the server's nameplate list), typing the words (completions come from the
nameplate's word list, once known), done. A call out of turn raises the
error named in Client API, "Code Management". Once the wormhole closes
(the Boss says so, with why), every call of the helper raises
WormholeClosed with that reason and a pending
``when_wordlist_is_available()`` fails with it: a code typed then has no
nameplate to claim and no server to ask (docs/api.md "After close").
"""

from automat import MethodicalMachine
from zope.interface import implementer

from . import _interfaces
from ._automat_private import trace_hook
from ._observer import OneShotObserver
from ._serialization import decode_result, encode_result
from ._wordlist import PGPWordList
from .errors import (
    AlreadyChoseNameplateError,
    AlreadyChoseWordsError,
    KeyFormatError,
    MustChooseNameplateFirstError,
    WormholeClosed,
)


def _first(outputs):
    return list(outputs)[0]


@implementer(_interfaces.IInput)
class Input:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, timing, eventual_queue):
        self._timing = timing
        self._all_nameplates = set()
        self._nameplate = None
        self._wordlist = None
        self._closed_reason = None  # why the wormhole closed, in S5_closed
        self._wordlist_observer = OneShotObserver(eventual_queue)

    @m.serializer()
    def serialize(self, state):
        return {"state": state, "nameplates": sorted(self._all_nameplates),
                "nameplate": self._nameplate,
                # the word list is always the PGP one (Client API, "Code
                # Management"): only whether it has arrived is kept
                "wordlist": self._wordlist is not None,
                "closed_reason": encode_result(self._closed_reason)}

    @m.unserializer()
    def _restore(self, record):
        self._all_nameplates = set(record["nameplates"])
        self._nameplate = record["nameplate"]
        if record["wordlist"]:
            self._wordlist = PGPWordList()
            self._wordlist_observer.fire_if_not_fired(None)
        self._closed_reason = decode_result(record.get("closed_reason"))
        if record["state"] == "S5_closed":
            self._wordlist_observer.error_if_not_fired(WormholeClosed(self._closed_reason))
        return record["state"]

    def wire(self, code, lister):
        self._C = _interfaces.ICode(code)
        self._L = _interfaces.ILister(lister)

    @m.state(initial=True, serialized="S0_idle")
    def S0_idle(self): pass  # noqa

    @m.state(serialized="S1_typing_nameplate")
    def S1_typing_nameplate(self): pass  # noqa

    @m.state(serialized="S2_typing_code_no_wordlist")
    def S2_typing_code_no_wordlist(self): pass  # noqa

    @m.state(serialized="S3_typing_code_yes_wordlist")
    def S3_typing_code_yes_wordlist(self): pass  # noqa

    @m.state(serialized="S4_done")
    def S4_done(self): pass  # noqa

    @m.state(serialized="S5_closed")
    def S5_closed(self): pass  # noqa

    @m.input()
    def start(self): pass  # noqa

    @m.input()
    def got_nameplates(self, all_nameplates): pass  # noqa

    @m.input()
    def got_wordlist(self, wordlist): pass  # noqa

    @m.input()
    def refresh_nameplates(self): pass  # noqa

    @m.input()
    def get_nameplate_completions(self, prefix): pass  # noqa

    @m.input()
    def choose_nameplate(self, nameplate): pass  # noqa

    @m.input()
    def get_word_completions(self, prefix): pass  # noqa

    @m.input()
    def choose_words(self, words): pass  # noqa

    @m.input()
    def close(self, reason): pass  # noqa

    def when_wordlist_is_available(self):
        return self._wordlist_observer.when_fired()

    @m.output()
    def make_helper(self):
        return Helper(self)

    @m.output()
    def do_refresh(self):
        self._L.refresh()

    @m.output()
    def record_nameplates(self, all_nameplates):
        self._all_nameplates = set(all_nameplates)

    @m.output()
    def complete_nameplate(self, prefix):
        return {n + "-" for n in self._all_nameplates if n.startswith(prefix)}

    @m.output()
    def record_nameplate(self, nameplate):
        self._nameplate = nameplate
        self._C.got_nameplate(nameplate)

    @m.output()
    def record_wordlist(self, wordlist):
        self._wordlist = wordlist
        self._wordlist_observer.fire_if_not_fired(None)

    @m.output()
    def no_word_completions(self, prefix):
        return set()

    @m.output()
    def complete_words(self, prefix):
        return self._wordlist.get_completions(prefix)

    @m.output()
    def finish(self, words):
        self._C.finished_input(f"{self._nameplate}-{words}")

    @m.output()
    def raise_must_choose_nameplate(self):
        raise MustChooseNameplateFirstError()

    @m.output()
    def raise_already_chose_nameplate(self):
        raise AlreadyChoseNameplateError()

    @m.output()
    def raise_already_chose_words(self):
        raise AlreadyChoseWordsError()

    @m.output()
    def record_closed(self, reason):
        self._closed_reason = reason
        self._wordlist_observer.error_if_not_fired(WormholeClosed(reason))

    @m.output()
    def raise_closed(self):
        raise WormholeClosed(self._closed_reason)

    S0_idle.upon(start, enter=S1_typing_nameplate, outputs=[make_helper, do_refresh],
                 collector=_first)
    # set_code/allocate_code also name a nameplate, and so a word list
    S0_idle.upon(got_wordlist, enter=S0_idle, outputs=[])
    # a list nobody is typing against (a server may send one unasked,
    # Mailbox server protocol, "Nameplates"): nothing to complete yet
    S0_idle.upon(got_nameplates, enter=S0_idle, outputs=[])

    S1_typing_nameplate.upon(refresh_nameplates, enter=S1_typing_nameplate, outputs=[do_refresh])
    S1_typing_nameplate.upon(got_nameplates, enter=S1_typing_nameplate,
                             outputs=[record_nameplates])
    S1_typing_nameplate.upon(get_nameplate_completions, enter=S1_typing_nameplate,
                             outputs=[complete_nameplate], collector=_first)
    S1_typing_nameplate.upon(choose_nameplate, enter=S2_typing_code_no_wordlist,
                             outputs=[record_nameplate])
    S1_typing_nameplate.upon(get_word_completions, enter=S1_typing_nameplate,
                             outputs=[raise_must_choose_nameplate])
    S1_typing_nameplate.upon(choose_words, enter=S1_typing_nameplate,
                             outputs=[raise_must_choose_nameplate])

    S2_typing_code_no_wordlist.upon(got_nameplates, enter=S2_typing_code_no_wordlist, outputs=[])
    S2_typing_code_no_wordlist.upon(got_wordlist, enter=S3_typing_code_yes_wordlist,
                                    outputs=[record_wordlist])
    S2_typing_code_no_wordlist.upon(refresh_nameplates, enter=S2_typing_code_no_wordlist,
                                    outputs=[raise_already_chose_nameplate])
    S2_typing_code_no_wordlist.upon(get_nameplate_completions, enter=S2_typing_code_no_wordlist,
                                    outputs=[raise_already_chose_nameplate])
    S2_typing_code_no_wordlist.upon(choose_nameplate, enter=S2_typing_code_no_wordlist,
                                    outputs=[raise_already_chose_nameplate])
    S2_typing_code_no_wordlist.upon(get_word_completions, enter=S2_typing_code_no_wordlist,
                                    outputs=[no_word_completions], collector=_first)
    S2_typing_code_no_wordlist.upon(choose_words, enter=S4_done, outputs=[finish])

    S3_typing_code_yes_wordlist.upon(got_nameplates, enter=S3_typing_code_yes_wordlist,
                                     outputs=[])
    S3_typing_code_yes_wordlist.upon(refresh_nameplates, enter=S3_typing_code_yes_wordlist,
                                     outputs=[raise_already_chose_nameplate])
    S3_typing_code_yes_wordlist.upon(get_nameplate_completions,
                                     enter=S3_typing_code_yes_wordlist,
                                     outputs=[raise_already_chose_nameplate])
    S3_typing_code_yes_wordlist.upon(choose_nameplate, enter=S3_typing_code_yes_wordlist,
                                     outputs=[raise_already_chose_nameplate])
    S3_typing_code_yes_wordlist.upon(get_word_completions, enter=S3_typing_code_yes_wordlist,
                                     outputs=[complete_words], collector=_first)
    S3_typing_code_yes_wordlist.upon(choose_words, enter=S4_done, outputs=[finish])

    S4_done.upon(got_nameplates, enter=S4_done, outputs=[])
    S4_done.upon(got_wordlist, enter=S4_done, outputs=[record_wordlist])
    S4_done.upon(refresh_nameplates, enter=S4_done, outputs=[raise_already_chose_nameplate])
    S4_done.upon(get_nameplate_completions, enter=S4_done,
                 outputs=[raise_already_chose_nameplate])
    S4_done.upon(choose_nameplate, enter=S4_done, outputs=[raise_already_chose_nameplate])
    S4_done.upon(get_word_completions, enter=S4_done, outputs=[raise_already_chose_words])
    S4_done.upon(choose_words, enter=S4_done, outputs=[raise_already_chose_words])

    # the wormhole closed (docs/api.md "After close"): whatever step the
    # human was at, the helper now refuses, saying why
    for _state in (S0_idle, S1_typing_nameplate, S2_typing_code_no_wordlist,
                   S3_typing_code_yes_wordlist, S4_done):
        _state.upon(close, enter=S5_closed, outputs=[record_closed])
    del _state
    S5_closed.upon(close, enter=S5_closed, outputs=[])
    S5_closed.upon(got_nameplates, enter=S5_closed, outputs=[])
    S5_closed.upon(got_wordlist, enter=S5_closed, outputs=[])
    for _input in (refresh_nameplates, get_nameplate_completions, choose_nameplate,
                   get_word_completions, choose_words):
        S5_closed.upon(_input, enter=S5_closed, outputs=[raise_closed])
    del _input


@implementer(_interfaces.IInputHelper)
class Helper:
    """What ``w.input_code()`` returns: checks the arguments, then asks the
    Input machine (Client API, "Code Management")."""

    def __init__(self, input):
        self._input = input

    def refresh_nameplates(self):
        self._input.refresh_nameplates()

    def get_nameplate_completions(self, prefix):
        return self._input.get_nameplate_completions(prefix)

    def choose_nameplate(self, nameplate):
        if not isinstance(nameplate, str):
            raise TypeError(f"nameplate must be a str, not {type(nameplate).__name__}")
        if not nameplate.isdigit() or not nameplate.isascii():
            raise KeyFormatError(
                f"Nameplate '{nameplate}' must be numeric, with no spaces "
                f"(the digits before the first hyphen of the code)")
        self._input.choose_nameplate(nameplate)

    def when_wordlist_is_available(self):
        return self._input.when_wordlist_is_available()

    def get_word_completions(self, prefix):
        return self._input.get_word_completions(prefix)

    def choose_words(self, words):
        if not isinstance(words, str):
            raise TypeError(f"words must be a str, not {type(words).__name__}")
        if not words or words != words.strip():
            raise KeyFormatError(
                f"Words '{words}' must be non-empty, without leading or trailing spaces")
        self._input.choose_words(words)
