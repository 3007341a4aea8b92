"""What ``send`` and ``receive`` share: making the wormhole, reading a
line from the human, closing on every path."""
from twisted.internet import defer

from .._rlcompleter import _in_daemon_thread
from .._welcome import WelcomeAdvice
from ..timing import DebugTiming

# how long a Ctrl-C waits for the wormhole to close (release the
# nameplate and mailbox on the server) before the process ends anyway
SHUTDOWN_CLOSE_TIMEOUT = 2.0


def read_line(reactor, prompt):
    """Ask the human (``input()`` in a thread: it blocks)."""
    return _in_daemon_thread(reactor, input, prompt)


def ask(reactor, cfg, prompt):
    reader = cfg.read_line or read_line
    return reader(reactor, prompt)


def make_wormhole(reactor, cfg, client_name, on_status_update=None, versions=None,
                  dilation=False):
    """``create()`` with the CLI's settings (spec 004 5.4); transfer-v2
    adds its ``versions`` and ``dilation`` (cli/_transfer_v2.py)."""
    if cfg.timing is None:
        cfg.timing = DebugTiming()
    # which side wrote the --dump-timing bundle (misc/dump-timing.py)
    cfg.timing.add("command", role="sender" if client_name == "send" else "receiver")
    kwargs = dict(versions=versions or {}, timing=cfg.timing, stderr=cfg.stderr,
                  welcome_handler=WelcomeAdvice(cfg.relay_url, cfg.stderr))
    if dilation:
        kwargs["dilation"] = True
    if cfg.tor_manager is not None:
        kwargs["tor"] = cfg.tor_manager
    if not cfg.punch:
        kwargs["_punch"] = False  # docs/transit.md "Through a NAT"
    if on_status_update is not None:
        kwargs["on_status_update"] = on_status_update
    w = cfg.create(cfg.appid, cfg.relay_url, reactor, **kwargs)
    if cfg.debug_state:
        # the reference prints the transitions on stdout
        w.debug_set_trace(client_name, which=cfg.debug_state, file=cfg.stdout)
    return w


@defer.inlineCallbacks
def run_and_close(reactor, w, body):
    """Run ``body()`` (a Deferred-returning transfer), then close ``w``.

    The first error wins: when the transfer failed, close()'s own error
    (often the same WrongPasswordError) is dropped. A Ctrl-C while this
    runs closes the wormhole before the reactor stops, so the server
    frees the nameplate (spec 004 5.11); the transfer's resulting errors
    are then not reported (the user asked to stop). Fires with True when
    the transfer completed, False when it was interrupted."""
    shutdown = _ShutdownClose(reactor, w)
    trigger = reactor.addSystemEventTrigger("before", "shutdown", shutdown.close)
    try:
        try:
            yield body()
        except Exception:
            if shutdown.started:
                return False
            try:
                yield w.close()
            except Exception:
                pass
            raise
        yield w.close()
        return True
    finally:
        if not shutdown.started:
            reactor.removeSystemEventTrigger(trigger)


def close_early(w):
    """Start closing ``w`` now, once the mailbox has done its part.

    Spec 004 9.3: a file transfer closes the wormhole as soon as it has
    what it needs to open the Transit connection, so the server frees the
    nameplate and mailbox while the bytes flow. ``close()`` is idempotent:
    ``run_and_close`` closes again at the end and waits for the result
    (an error of this early close is reported there, not here)."""
    w.close().addErrback(lambda _: None)


class OnShutdown:
    """Run ``f`` if the reactor stops (Ctrl-C) before ``cancel()``:
    temporary files must not outlive an interrupted command."""

    def __init__(self, reactor, f):
        self._reactor = reactor
        self._f = f
        self._fired = False
        self._trigger = reactor.addSystemEventTrigger("before", "shutdown", self._fire)

    def _fire(self):
        self._fired = True
        self._f()

    def cancel(self):
        if not self._fired:
            self._fired = True
            self._reactor.removeSystemEventTrigger(self._trigger)


class _ShutdownClose:
    """The reactor is stopping (Ctrl-C): close ``w``, for at most
    SHUTDOWN_CLOSE_TIMEOUT seconds."""

    def __init__(self, reactor, w):
        self._reactor = reactor
        self._w = w
        self.started = False

    def close(self):
        self.started = True
        d = defer.maybeDeferred(self._w.close)
        d.addErrback(lambda f: None)
        timer = self._reactor.callLater(SHUTDOWN_CLOSE_TIMEOUT, d.cancel)

        def done(result):
            if timer.active():
                timer.cancel()
        d.addBoth(done)
        return d
