"""Reaching the Mailbox server and peers through Tor (Tor support), with
txtorcon (the ``[tor]`` extra).

``get_tor(reactor, launch_tor=False, tor_control_port=None, timing=None,
stderr=sys.stderr)`` returns a Deferred that fires with a TorManager, which
``wormhole.create(tor=...)``, ``TransitSender(tor=...)`` and Dilation use
for every outbound connection (``stream_via``). Three ways to get one:

- ``tor_control_port="tcp:127.0.0.1:9051"`` (an endpoint description):
  that Tor's control port, or a clear TorError;
- ``launch_tor=True``: start a private Tor process and wait until it has
  bootstrapped (it stops with the reactor);
- neither: a running Tor's control port at its usual places (txtorcon's
  defaults: the system socket, then 127.0.0.1:9051, 9151), and if none
  answers, its SOCKS port only (9050, then the Tor Browser's 9150).

txtorcon sometimes connects to a launched Tor's control socket before the
socket exists, and then never tries again (txtorcon#349): our
launch gives it a connection that retries until the socket answers, within
a bound, and the whole launch has a timeout. txtorcon also reads the
launched Tor's configuration (hundreds of GETCONF queries) as soon as the
control connection is up, before Tor is ready; a query answered with an
error then breaks its setup (``TypeError`` in ``torconfig._do_setup``, seen
in CI; docs/tor.md, "The library"). So our launch keeps txtorcon from reading it during the
launch and reads it itself once Tor has bootstrapped, retrying a bounded
number of times. Nothing here listens: an application that uses Tor makes
outbound connections only.
"""

import os
import shutil
import sys
import tempfile

from twisted.internet import defer
from twisted.internet.endpoints import UNIXClientEndpoint, clientFromString
from twisted.internet.error import ConnectError
from twisted.internet.task import deferLater
from twisted.python import log
from zope.interface import implementer

from ._interfaces import ITorManager
from .errors import WormholeError

# seconds a launched Tor may take to bootstrap to 100%
LAUNCH_TIMEOUT = 120.0
# a launched Tor's control socket: tries, and seconds between them
CONTROL_CONNECT_TRIES = 50
CONTROL_CONNECT_INTERVAL = 0.1
# reading a launched Tor's configuration once it bootstrapped: tries,
# seconds between them, and the bound on each
CONFIG_TRIES = 5
CONFIG_INTERVAL = 1.0
CONFIG_TIMEOUT = 30.0


class TorError(WormholeError):
    """No Tor could be reached or started; the message says what was tried."""


def _import_txtorcon():
    try:
        import txtorcon
    except ImportError:
        raise TorError("Tor support needs txtorcon: pip install 'wormhole-twisted[tor]'") from None
    return txtorcon


@implementer(ITorManager)
class TorManager:
    """What the library asks of Tor: an endpoint through it.

    ``tor``: a txtorcon ``Tor`` (control port, or one we launched), or None
    with ``socks_endpoint`` for a Tor reached by its SOCKS port only.
    """

    def __init__(self, reactor, txtorcon, tor=None, socks_endpoint=None, launched=False,
                 description=""):
        self._reactor = reactor
        self._txtorcon = txtorcon
        self._tor = tor
        self._socks = socks_endpoint
        self.launched = launched
        self.description = description

    def stream_via(self, host, port, tls=False):
        """An IStreamClientEndpoint reaching host:port through Tor. Raises
        ValueError for addresses Tor cannot reach (private IP literals)."""
        if self._tor is not None:
            return self._tor.stream_via(host, port, tls=tls)
        return self._txtorcon.TorClientEndpoint(host, port, socks_endpoint=self._socks,
                                                tls=tls, reactor=self._reactor)

    def quit(self):
        """Give back what get_tor took: close the control connection, and
        stop the Tor if we launched it (a Tor found running keeps running).
        A Deferred. txtorcon logs the end of a launched Tor as an error
        (``RuntimeError: Tor exited with error-code 0``) even when asked."""
        if self._tor is None:
            return defer.succeed(None)
        if self.launched:
            # TERM, and fires once the process has ended
            return defer.maybeDeferred(self._tor.process.quit)
        return defer.maybeDeferred(self._tor.quit).addErrback(_closed_by_quit)


def _closed_by_quit(f):
    """QUIT asks Tor to close the control connection; when the close comes
    before its "250 closing connection" answer is read, txtorcon fails the
    command with TorDisconnectError: that is the answer we asked for."""
    from txtorcon.torcontrolprotocol import TorDisconnectError
    f.trap(TorDisconnectError)


def _check_arguments(launch_tor, tor_control_port):
    if launch_tor and tor_control_port is not None:
        raise ValueError("--launch-tor and --tor-control-port= are mutually exclusive")
    if tor_control_port is not None and not isinstance(tor_control_port, str):
        raise TypeError(f"tor_control_port must be an endpoint description string, "
                        f"not {type(tor_control_port).__name__}")


def get_tor(reactor, launch_tor=False, tor_control_port=None, timing=None,
            stderr=sys.stderr, *, _launch_options=None):
    """A Deferred firing with a TorManager, or failing with TorError (or
    ValueError for contradictory arguments).

    ``_launch_options``: extra torrc options (a dict) for a launched Tor;
    the tests use it to put it on a private Tor network.
    """
    try:
        _check_arguments(launch_tor, tor_control_port)
        txtorcon = _import_txtorcon()
    except Exception:
        return defer.fail()
    event = timing.add("get_tor") if timing is not None else None
    if launch_tor:
        d = _launch(reactor, txtorcon, stderr, _launch_options or {})
    elif tor_control_port is not None:
        d = _connect_control(reactor, txtorcon, tor_control_port, stderr)
    else:
        d = _connect_default(reactor, txtorcon, stderr)
    if event is not None:
        d.addBoth(lambda r: (event.finish(), r)[1])
    return d


@defer.inlineCallbacks
def _connect_control(reactor, txtorcon, description, stderr):
    try:
        endpoint = clientFromString(reactor, description)
    except (ValueError, TypeError) as e:
        raise TorError(f"--tor-control-port {description!r} is not an endpoint "
                       f"description (like tcp:127.0.0.1:9051): {e}") from None
    try:
        tor = yield txtorcon.connect(reactor, endpoint)
    except Exception as e:  # txtorcon raises several kinds; all mean "no Tor there"
        raise TorError(f"cannot use the Tor control port at {description}: "
                       f"{_reason(e)}") from None
    print(f"connected to Tor through its control port at {description}", file=stderr)
    return TorManager(reactor, txtorcon, tor=tor, description=f"control port {description}")


@defer.inlineCallbacks
def _connect_default(reactor, txtorcon, stderr):
    try:
        tor = yield txtorcon.connect(reactor)
    except Exception as e:
        log.msg(f"tor: no control port at the usual places ({_reason(e)}); "
                "trying its SOCKS port")
    else:
        print("connected to a running Tor through its control port", file=stderr)
        return TorManager(reactor, txtorcon, tor=tor, description="control port")
    socks = yield _find_socks(reactor)
    if socks is None:
        raise TorError("no running Tor found: nothing answers on the control port "
                       "(the system socket, 127.0.0.1:9051, 9151) nor on a SOCKS port "
                       "(127.0.0.1:9050, 9150). Start Tor, or use --launch-tor, or "
                       "--tor-control-port=ENDPOINT")
    host, port = socks
    print(f"using Tor through its SOCKS port {host}:{port} only", file=stderr)
    endpoint = clientFromString(reactor, f"tcp:{host}:{port}")
    return TorManager(reactor, txtorcon, socks_endpoint=endpoint,
                      description=f"SOCKS port {host}:{port}")


# txtorcon's defaults, in its order: a system Tor, then the Tor Browser's
SOCKS_PORTS = (("127.0.0.1", 9050), ("127.0.0.1", 9150))


@defer.inlineCallbacks
def _find_socks(reactor):
    from twisted.internet.protocol import Factory, Protocol
    for host, port in SOCKS_PORTS:
        endpoint = clientFromString(reactor, f"tcp:{host}:{port}:timeout=5")
        try:
            proto = yield endpoint.connect(Factory.forProtocol(Protocol))
        except ConnectError:
            continue
        proto.transport.loseConnection()
        return host, port
    return None


def _retrying_control_connection(reactor, txtorcon, path):
    """txtorcon's connection_creator for a launched Tor: retry the control
    socket until it answers (txtorcon#349), within a bound."""
    @defer.inlineCallbacks
    def connect():
        endpoint = UNIXClientEndpoint(reactor, path)
        for attempt in range(CONTROL_CONNECT_TRIES):
            try:
                proto = yield endpoint.connect(txtorcon.TorProtocolFactory())
            except ConnectError:
                if attempt == CONTROL_CONNECT_TRIES - 1:
                    raise
                yield deferLater(reactor, CONTROL_CONNECT_INTERVAL, lambda: None)
            else:
                return proto
    return connect


def _deferred_config(txtorcon):
    """A TorConfig for txtorcon.launch that is never attached during the
    launch: txtorcon would read the configuration before Tor is ready."""
    class _LaunchConfig(txtorcon.TorConfig):
        def attach_protocol(self, proto):
            return defer.succeed(None)  # read by _read_config, after bootstrap
    return _LaunchConfig()


@defer.inlineCallbacks
def _read_config(reactor, txtorcon, protocol):
    """The launched Tor's TorConfig, read over its control connection once
    it bootstrapped; a failed read is tried again, CONFIG_TRIES times."""
    for attempt in range(CONFIG_TRIES):
        try:
            d = txtorcon.TorConfig.from_protocol(protocol)
            config = yield d.addTimeout(CONFIG_TIMEOUT, reactor)
        except Exception as e:  # TypeError, TorProtocolError, lost, timeout: all "try again"
            log.msg(f"tor: reading the launched Tor's configuration failed "
                    f"(try {attempt + 1} of {CONFIG_TRIES}): {_reason(e)}")
            if attempt == CONFIG_TRIES - 1:
                raise TorError(f"--launch-tor: Tor started but its configuration could "
                               f"not be read ({CONFIG_TRIES} tries): {_reason(e)}") from None
            yield deferLater(reactor, CONFIG_INTERVAL, lambda: None)
        else:
            return config


@defer.inlineCallbacks
def _launch(reactor, txtorcon, stderr, options):
    tor_binary = shutil.which("tor") or shutil.which("tor", path="/usr/sbin:/usr/local/sbin")
    if tor_binary is None:
        raise TorError("--launch-tor: no 'tor' program found on PATH (install the "
                       "'tor' package)")
    data_directory = tempfile.mkdtemp(prefix="wormhole-tor-")
    control_path = os.path.join(data_directory, "control.socket")
    config = _deferred_config(txtorcon)
    for key, value in options.items():
        setattr(config, key, value)
    print("launching a new Tor process, this may take a while...", file=stderr, flush=True)
    output = _Tail()  # tor's own words, for the error message
    try:
        tor = yield txtorcon.launch(
            reactor, tor_binary=tor_binary, data_directory=data_directory,
            control_port=f"unix:{control_path}", timeout=LAUNCH_TIMEOUT,
            kill_on_stderr=False, _tor_config=config, stdout=output, stderr=output,
            connection_creator=_retrying_control_connection(reactor, txtorcon, control_path))
    except Exception as e:
        shutil.rmtree(data_directory, ignore_errors=True)
        said = f"; tor said: {output.last()}" if output.last() else ""
        raise TorError(f"--launch-tor: Tor did not start: {_reason(e)}{said}") from None
    try:
        config = yield _read_config(reactor, txtorcon, tor.process.tor_protocol)
    except TorError:
        # stop the Tor we started; our error is the one to report
        yield defer.maybeDeferred(tor.process.quit).addErrback(log.err)
        shutil.rmtree(data_directory, ignore_errors=True)
        raise
    tor = txtorcon.Tor(reactor, tor.process.tor_protocol, _tor_config=config,
                       _process_proto=tor.process)
    print("Tor launched and bootstrapped", file=stderr, flush=True)
    # the launched Tor stops with the reactor; its directory goes with it
    reactor.addSystemEventTrigger("after", "shutdown", shutil.rmtree, data_directory, True)
    return TorManager(reactor, txtorcon, tor=tor, launched=True, description="launched")


def is_launched_tor_exit(event):
    """Whether a log event is txtorcon's report that a launched Tor ended
    (it logs every end as an error, also the one quit() asked for)."""
    # legacy log.err events carry "failure", new-style ones "log_failure"
    f = event.get("log_failure") or event.get("failure")
    return (f is not None and f.check(RuntimeError) is not None
            and str(f.value) == "Tor exited with error-code 0")


def error_observer_without_tor_exit(stderr):
    """A log observer for an application that launched Tor: error events go
    to ``stderr`` as Twisted would print them before logging starts, except
    txtorcon's routine "Tor exited with error-code 0"."""
    from twisted.logger import FilteringLogObserver, LogLevel, PredicateResult, textFileLogObserver

    def predicate(event):
        if is_launched_tor_exit(event):
            return PredicateResult.no
        if event.get("log_level") in (LogLevel.error, LogLevel.critical) \
                or event.get("isError"):
            return PredicateResult.maybe
        return PredicateResult.no
    return FilteringLogObserver(textFileLogObserver(stderr), [predicate])


class _Tail:
    """Keeps the last few lines a launched tor printed."""

    def __init__(self, keep=3):
        self._lines = []
        self._keep = keep

    def write(self, text):
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        self._lines = (self._lines + text.splitlines())[-self._keep:]

    def last(self):
        return " / ".join(line.strip() for line in self._lines if line.strip())


def _reason(e):
    text = str(e) or type(e).__name__
    return text.splitlines()[0] if text else type(e).__name__
