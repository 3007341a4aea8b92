"""What the commands share: making the wormhole, closing it on every
path. (Questions to the human: ``ui.prompt``.)"""
from twisted.internet import defer

from .. import WelcomeAdvice
from ..errors import TransferError
from ..timing import DebugTiming
from ..util import dict_to_bytes

# how long a Ctrl-C waits for the wormhole to close (release the
# nameplate and mailbox on the server) before the process ends anyway
SHUTDOWN_CLOSE_TIMEOUT = 2.0


def make_wormhole(reactor, cfg, client_name, on_status_update=None, versions=None,
                  dilation=False):
    """``create()`` with the CLI's settings
    (Client API, "Wormhole Parameters"); transfer-v2 adds its ``versions`` and
    ``dilation`` (cli/_v2_session.py)."""
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
    if _proxy(reactor, cfg) is not None:
        kwargs["proxy"] = cfg.proxy
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
def run_and_close(reactor, cfg, w, body):
    """Run ``body()`` (a Deferred-returning transfer), then close ``w``.

    The first error wins: when the transfer failed, close()'s own error
    (often the same WrongPasswordError) is dropped. A Ctrl-C while this runs
    closes the wormhole before the reactor stops, so the server frees the
    nameplate (Client API, "Closing"); the transfer's resulting errors are
    then not reported (the user asked to stop). Fires with True when the
    transfer completed, False when it was interrupted."""
    shutdown = _ShutdownClose(reactor, w, cfg.interruption)
    trigger = reactor.addSystemEventTrigger("before", "shutdown", shutdown.close)
    try:
        try:
            yield body()
        except Exception:
            if shutdown.started:
                return False
            try:
                yield w.close()
            except Exception:  # ignored: the body's failure is the one to report
                pass
            raise
        yield w.close()
        return True
    finally:
        if not shutdown.started:
            reactor.removeSystemEventTrigger(trigger)


def make_transit(factory, reactor, cfg):
    """A TransitSender/Receiver (``factory``) with the CLI's relay,
    --no-listen and Tor; a malformed --transit-helper is a readable error."""
    try:
        kwargs = {} if cfg.tor_manager is None else {"tor": cfg.tor_manager}
        if _proxy(reactor, cfg) is not None:
            kwargs["proxy"] = cfg.proxy
        return factory(cfg.transit_helper or None, no_listen=not cfg.listen,
                       reactor=reactor, timing=cfg.timing, **kwargs)
    except ValueError as e:
        raise TransferError(f"bad --transit-helper {cfg.transit_helper!r}: {e}") from None


def _proxy(reactor, cfg):
    """The command's Proxy (docs/proxy.md), made and announced once."""
    if cfg.proxy is None and cfg.proxy_url is not None:
        from ..proxy import Proxy
        cfg.proxy = Proxy(reactor, cfg.proxy_url, cfg.no_proxy, direct=cfg.proxy_direct)
        how = ("; direct connections to the peer are tried too" if cfg.proxy_direct
               else "; the peer only through the relay")
        print(f"Connecting through the proxy {cfg.proxy_url}{how}", file=cfg.stderr,
              flush=True)
        if cfg.timing is not None:  # redacted, as everywhere (docs/timing.md)
            cfg.timing.add("proxy", url=str(cfg.proxy_url), direct=cfg.proxy_direct)
    return cfg.proxy


class _ShutdownClose:
    """The reactor is stopping (Ctrl-C, SIGTERM): tell the peer why, then
    close ``w``, for at most SHUTDOWN_CLOSE_TIMEOUT seconds."""

    def __init__(self, reactor, w, interruption):
        self._reactor = reactor
        self._w = w
        self._interruption = interruption
        self.started = False

    def close(self):
        self.started = True
        try:
            # tell the peer at once, on purpose, with the ``error`` of
            # File-transfer protocol, "Sender" (docs/cli.md, "Ctrl-C and
            # SIGTERM"): it reports "cancelled" instead of waiting for us.
            # Nothing to do once the wormhole is closed (classic after the
            # file_ack: the Transit connection's end tells the peer)
            self._w.send_message(dict_to_bytes({"error": self._interruption.reason}))
        except Exception:  # ignored: closed already: nothing to tell (above)
            pass
        d = defer.maybeDeferred(self._w.close)
        d.addErrback(lambda f: None)
        timer = self._reactor.callLater(SHUTDOWN_CLOSE_TIMEOUT, d.cancel)

        def done(result):
            if timer.active():
                timer.cancel()
        d.addBoth(done)
        return d
