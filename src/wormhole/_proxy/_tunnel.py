"""One connection through a proxy, as an IStreamClientEndpoint
(docs/proxy.md, "How it is built").

``ProxyClientEndpoint.connect(factory)`` connects to the proxy with the
endpoint it was given (TCP, or TLS for an ``https://`` proxy), runs the
handshake (``_negotiate``) in a ``ProxyTunnel`` machine, and only then
builds the application's protocol on that same connection: every layer
above (WebSocket, TLS for ``wss://``, Transit, Dilation) sees an ordinary
endpoint whose Deferred fires with its protocol.
"""
from automat import MethodicalMachine
from twisted.internet import defer
from twisted.internet.interfaces import IStreamClientEndpoint
from twisted.internet.protocol import Factory, Protocol
from zope.interface import implementer

from .._automat_private import trace_hook
from ._errors import ProxyError, ProxyUnreachable

# how long the proxy may take to answer the handshake, target connection
# included (docs/security.md, "Proxies")
HANDSHAKE_TIMEOUT = 30.0


class ProxyTunnel(Protocol):
    """The connection to the proxy: handshake first, then a plain pipe to
    the application's protocol. ``when_open`` fires with that protocol,
    or fails with a ``ProxyError``."""
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, negotiation, factory, clock, proxy, timeout=HANDSHAKE_TIMEOUT):
        self._negotiation = negotiation
        self._factory = factory
        self._clock = clock
        self._proxy = proxy
        self._timeout = timeout
        self._timer = None
        self._inner = None
        self.when_open = defer.Deferred(lambda d: self._cancel())

    # -- Protocol: the reactor's calls become inputs ---------------------
    def connectionMade(self):
        self._connected()

    def dataReceived(self, data):
        self._bytes(data)

    def connectionLost(self, reason):
        self._lost(reason)

    # -- inputs -----------------------------------------------------------
    @m.input()
    def _connected(self): pass  # noqa

    @m.input()
    def _bytes(self, data): pass  # noqa

    @m.input()
    def _negotiated(self, leftover): pass  # noqa

    @m.input()
    def _refused(self, error): pass  # noqa

    @m.input()
    def _timed_out(self): pass  # noqa

    @m.input()
    def _cancel(self): pass  # noqa

    @m.input()
    def _lost(self, reason): pass  # noqa

    # -- states -----------------------------------------------------------
    @m.state(initial=True)
    def S0_connecting(self): pass  # noqa

    @m.state()
    def S1_negotiating(self): pass  # noqa

    @m.state()
    def S2_open(self): pass  # noqa

    @m.state()
    def S3_failed(self): pass  # noqa

    @m.state()
    def S4_closed(self): pass  # noqa

    # -- outputs ----------------------------------------------------------
    @m.output()
    def _greet(self):
        self._timer = self._clock.callLater(self._timeout, self._timed_out)
        self._step(lambda: self._negotiation.start())

    @m.output()
    def _negotiate(self, data):
        self._step(lambda: self._negotiation.feed(data))

    def _step(self, call):
        try:
            step = call()
        except ProxyError as e:
            self._refused(e)
            return
        if step.to_send:
            self.transport.write(step.to_send)
        if step.open:
            self._negotiated(step.leftover)

    def _stop_timer(self):
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    @m.output()
    def _open(self, leftover):
        self._stop_timer()
        inner = self._factory.buildProtocol(self.transport.getPeer())
        if inner is None:
            self.transport.loseConnection()
            self.when_open.errback(ProxyError("the connection was refused by its own "
                                              "protocol factory"))
            return
        self._inner = inner
        inner.makeConnection(self.transport)
        self.when_open.callback(inner)
        if leftover:
            inner.dataReceived(leftover)

    @m.output()
    def _forward(self, data):
        self._inner.dataReceived(data)

    @m.output()
    def _fail(self, error):
        self._stop_timer()
        self.transport.abortConnection()
        self.when_open.errback(error)

    @m.output()
    def _fail_slow(self):
        self.transport.abortConnection()
        self.when_open.errback(ProxyError(
            f"the proxy {self._proxy} did not answer within {self._timeout:g} s"))

    @m.output()
    def _fail_closed(self, reason):
        self._stop_timer()
        # the reason says why, e.g. a TLS failure with an https:// proxy
        self.when_open.errback(ProxyError(
            f"the proxy {self._proxy} closed the connection during its handshake "
            f"({reason.getErrorMessage()})"))

    @m.output()
    def _abort(self):
        # when_open was cancelled: Deferred.cancel fails it for us
        self._stop_timer()
        self.transport.abortConnection()

    @m.output()
    def _inner_lost(self, reason):
        self._inner.connectionLost(reason)

    S0_connecting.upon(_connected, enter=S1_negotiating, outputs=[_greet])
    S0_connecting.upon(_cancel, enter=S3_failed, outputs=[])
    S1_negotiating.upon(_bytes, enter=S1_negotiating, outputs=[_negotiate])
    S1_negotiating.upon(_negotiated, enter=S2_open, outputs=[_open])
    S1_negotiating.upon(_refused, enter=S3_failed, outputs=[_fail])
    S1_negotiating.upon(_timed_out, enter=S3_failed, outputs=[_fail_slow])
    S1_negotiating.upon(_cancel, enter=S3_failed, outputs=[_abort])
    S1_negotiating.upon(_lost, enter=S3_failed, outputs=[_fail_closed])
    S2_open.upon(_bytes, enter=S2_open, outputs=[_forward])
    S2_open.upon(_lost, enter=S4_closed, outputs=[_inner_lost])
    # cancelling a Deferred that already fired does nothing
    S2_open.upon(_cancel, enter=S2_open, outputs=[])
    # bytes after a refusal, and the loss of the aborted connection
    S3_failed.upon(_bytes, enter=S3_failed, outputs=[])
    S3_failed.upon(_lost, enter=S3_failed, outputs=[])
    S3_failed.upon(_cancel, enter=S3_failed, outputs=[])
    S4_closed.upon(_cancel, enter=S4_closed, outputs=[])


class _TunnelFactory(Factory):
    def __init__(self, make_tunnel):
        self._make_tunnel = make_tunnel

    def buildProtocol(self, addr):
        tunnel = self._make_tunnel()
        tunnel.factory = self
        return tunnel


@implementer(IStreamClientEndpoint)
class ProxyClientEndpoint:
    """``host:port`` reached through ``proxy`` (a ProxyURL), over
    ``to_proxy`` (an IStreamClientEndpoint to the proxy itself)."""

    def __init__(self, clock, proxy, to_proxy, host, port, negotiation_for,
                 timeout=HANDSHAKE_TIMEOUT):
        self._clock = clock
        self._proxy = proxy
        self._to_proxy = to_proxy
        self._host = host
        self._port = port
        self._negotiation_for = negotiation_for
        self._timeout = timeout

    def connect(self, protocol_factory):
        def make_tunnel():
            return ProxyTunnel(self._negotiation_for(self._proxy, self._host, self._port),
                               protocol_factory, self._clock, self._proxy, self._timeout)
        d = self._to_proxy.connect(_TunnelFactory(make_tunnel))

        def unreachable(f):
            if f.check(defer.CancelledError):
                return f
            raise ProxyUnreachable(f"cannot reach the proxy {self._proxy}: "
                                   f"{f.getErrorMessage()}")
        # the tunnel's own failures pass through unchanged: only reaching
        # the proxy is "unreachable"
        d.addCallbacks(lambda tunnel: tunnel.when_open, unreachable)
        return d
