"""Shell completion of the receive code (bash, zsh and fish, through
click's completion mechanism; docs/cli.md "Shell completion"): what the
interactive prompt offers, for a shell.

Before the first hyphen: the nameplates the Mailbox server lists, fetched
by a short-lived wormhole connection (at most ``LIST_TIMEOUT`` seconds;
nothing is claimed, so nothing is used up). After it: the words of the
wordlist, offline.
"""
from .. import PGPWordList

# a shell waits for us: give up on a slow or absent server quickly
LIST_TIMEOUT = 3.0
_POLL = 0.05


def complete_words(incomplete):
    """Completions of "NAMEPLATE-WORDS..." from the wordlist."""
    nameplate, _, words = incomplete.partition("-")
    return sorted(f"{nameplate}-{c}" for c in PGPWordList().get_completions(words))


def complete_nameplates(appid, relay_url, incomplete, timeout=LIST_TIMEOUT):
    """The nameplates on the server that start with ``incomplete``, each
    with its hyphen; [] when the server does not answer in time."""
    from twisted.internet import reactor
    found = []
    reactor.callWhenRunning(_fetch, reactor, appid, relay_url, incomplete, timeout, found)
    reactor.run(installSignalHandlers=False)
    return sorted(found)


def _environment_proxy(reactor):
    """The proxy $HTTPS_PROXY & co name (docs/proxy.md, "Which proxy"):
    the shell asks for completions without the command's options; a
    malformed one gives no proxy (completion never prints an error)."""
    import os

    from ..proxy import ProxyURLError, from_environment
    try:
        return from_environment(reactor, os.environ)
    except ProxyURLError:
        return None


def _fetch(reactor, appid, relay_url, incomplete, timeout, found):
    from twisted.internet import defer, task

    from .. import create

    w = create(appid, relay_url, reactor, versions={}, proxy=_environment_proxy(reactor))
    helper = w.input_code()
    helper.refresh_nameplates()
    deadline = reactor.seconds() + timeout

    @defer.inlineCallbacks
    def poll():
        while True:
            matches = helper.get_nameplate_completions(incomplete)
            if matches or reactor.seconds() >= deadline:
                found.extend(matches)
                return
            yield task.deferLater(reactor, _POLL, lambda: None)

    def close(_):
        # the wormhole never chose a nameplate: closing claims nothing
        return w.close().addErrback(lambda f: None)
    d = poll()
    d.addErrback(lambda f: None)
    d.addBoth(close)
    d.addBoth(lambda _: reactor.stop())


def complete_code(appid, relay_url, incomplete):
    if "-" in incomplete:
        return complete_words(incomplete)
    return complete_nameplates(appid, relay_url, incomplete)
