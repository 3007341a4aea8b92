"""The two proxy handshakes, sans-I/O: bytes in, bytes out, and either
"tunnel open" (with any bytes that came after the proxy's answer) or a
``ProxyError`` (docs/proxy.md, "Libraries").

The protocol work is the libraries': socksio packs and unpacks every
SOCKS5 message (RFC 1928, RFC 1929) and h11 writes the CONNECT request and
parses the answer (RFC 9110, "CONNECT"). socksio's ``receive_data`` wants
one whole message at a time, so ``Socks5Negotiation`` only cuts the byte
stream at the message boundaries RFC 1928 gives (two bytes for each
authentication reply; the command reply's length from its address type).
"""
import base64

import attrs
import h11
from socksio import ProtocolError
from socksio.socks5 import (
    SOCKS5AType,
    SOCKS5AuthMethod,
    SOCKS5AuthMethodsRequest,
    SOCKS5AuthReply,
    SOCKS5Command,
    SOCKS5CommandRequest,
    SOCKS5Connection,
    SOCKS5Reply,
    SOCKS5ReplyCode,
    SOCKS5State,
    SOCKS5UsernamePasswordReply,
    SOCKS5UsernamePasswordRequest,
)

from .._escape import escape_text
from ._errors import ProxyAuthError, ProxyError, ProxyRefused

# an HTTP proxy's answer to CONNECT (status line and headers) may be no
# longer than this; h11 refuses more (docs/security.md, "Proxies")
MAX_HTTP_ANSWER = 16 * 1024


@attrs.frozen
class Step:
    """What one call gave: bytes to write, and whether the tunnel is open
    (``leftover``: bytes after the proxy's answer, the tunnel's first)."""
    to_send: bytes = b""
    open: bool = False
    leftover: bytes = b""


def _target(host, port):
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class Socks5Negotiation:
    def __init__(self, proxy, host, port):
        self._proxy = proxy
        self._host = host
        self._port = port
        self._conn = SOCKS5Connection()
        self._buffer = b""
        self._offered_password = proxy.username is not None

    def start(self):
        methods = [SOCKS5AuthMethod.NO_AUTH_REQUIRED]
        if self._offered_password:
            methods.append(SOCKS5AuthMethod.USERNAME_PASSWORD)
        self._conn.send(SOCKS5AuthMethodsRequest(methods))
        return Step(self._conn.data_to_send())

    def feed(self, data):
        self._buffer += data
        out = b""
        while True:
            size = self._next_size()
            if size is None or len(self._buffer) < size:
                return Step(out)
            message, self._buffer = self._buffer[:size], self._buffer[size:]
            try:
                reply = self._conn.receive_data(message)
            except ProtocolError as e:
                raise ProxyError(f"the SOCKS5 proxy {self._proxy} answered with something "
                                 f"that is not SOCKS5 ({e})") from None
            out += self._answer(reply)
            if isinstance(reply, SOCKS5Reply):  # _answer raised unless it succeeded
                leftover, self._buffer = self._buffer, b""
                return Step(out, open=True, leftover=leftover)

    def _next_size(self):
        """The length of the next whole message in the buffer, None when
        not yet known (RFC 1928, section 6: VER REP RSV ATYP ADDR PORT)."""
        if self._conn.state in (SOCKS5State.SERVER_AUTH_REPLY,
                                SOCKS5State.SERVER_VERIFY_USERNAME_PASSWORD):
            return 2
        if len(self._buffer) < 5:
            return None
        atype = self._buffer[3:4]
        if atype == SOCKS5AType.IPV4_ADDRESS:
            return 4 + 4 + 2
        if atype == SOCKS5AType.IPV6_ADDRESS:
            return 4 + 16 + 2
        if atype == SOCKS5AType.DOMAIN_NAME:
            return 4 + 1 + self._buffer[4] + 2
        raise ProxyError(f"the SOCKS5 proxy {self._proxy} answered with an unknown "
                         "address type: it is not speaking SOCKS5")

    def _answer(self, reply):
        if isinstance(reply, SOCKS5AuthReply):
            if reply.method == SOCKS5AuthMethod.NO_AUTH_REQUIRED:
                return self._connect()
            if reply.method == SOCKS5AuthMethod.USERNAME_PASSWORD and self._offered_password:
                self._conn.send(SOCKS5UsernamePasswordRequest(
                    self._proxy.username.encode(), (self._proxy.password or "").encode()))
                return self._conn.data_to_send()
            if not self._offered_password:
                raise ProxyAuthError(f"the SOCKS5 proxy {self._proxy} wants a user name "
                                     "and password: give them in the proxy URL or with "
                                     "--proxy-ask-password")
            raise ProxyAuthError(f"the SOCKS5 proxy {self._proxy} accepts none of the "
                                 "ways we can log in (no authentication, user name and "
                                 "password)")
        if isinstance(reply, SOCKS5UsernamePasswordReply):
            if not reply.success:
                raise ProxyAuthError(f"the SOCKS5 proxy {self._proxy} refused the user "
                                     "name and password")
            return self._connect()
        if reply.reply_code != SOCKS5ReplyCode.SUCCEEDED:
            why = reply.reply_code.name.replace("_", " ").lower()
            raise ProxyRefused(f"the SOCKS5 proxy {self._proxy} could not connect to "
                               f"{_target(self._host, self._port)}: {why}")
        return b""

    def _connect(self):
        # the name goes to the proxy, which resolves it (docs/proxy.md,
        # "socks5 and socks5h")
        self._conn.send(SOCKS5CommandRequest.from_address(
            SOCKS5Command.CONNECT, (self._host, self._port)))
        return self._conn.data_to_send()


class HTTPConnectNegotiation:
    def __init__(self, proxy, host, port):
        self._proxy = proxy
        self._target = _target(host, port)
        self._conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HTTP_ANSWER)

    def start(self):
        headers = [("Host", self._target)]
        if self._proxy.username is not None:
            secret = f"{self._proxy.username}:{self._proxy.password or ''}".encode()
            headers.append(("Proxy-Authorization",
                            "Basic " + base64.b64encode(secret).decode("ascii")))
        request = h11.Request(method="CONNECT", target=self._target, headers=headers)
        return Step(self._conn.send(request) + self._conn.send(h11.EndOfMessage()))

    def feed(self, data):
        self._conn.receive_data(data)
        while True:
            try:
                event = self._conn.next_event()
            except h11.RemoteProtocolError as e:
                raise ProxyError(f"the HTTP proxy {self._proxy} answered with something "
                                 f"that is not HTTP ({e})") from None
            if event is h11.NEED_DATA:
                return Step()
            if isinstance(event, h11.InformationalResponse):
                continue  # 1xx: the real answer follows
            if isinstance(event, h11.Response):
                return self._answer(event)
            raise ProxyError(f"the HTTP proxy {self._proxy} closed the connection without "
                             "answering CONNECT")

    def _answer(self, response):
        reason = escape_text(response.reason.decode("latin-1"))
        if 200 <= response.status_code < 300:
            leftover, _closed = self._conn.trailing_data
            return Step(open=True, leftover=bytes(leftover))
        # 407 is the proxy's "who are you?" (RFC 9110, "407 Proxy
        # Authentication Required"); tinyproxy answers a CONNECT with bad
        # BasicAuth with 401, which from a proxy can only mean the same
        if response.status_code in (401, 407):
            if self._proxy.username is None:
                raise ProxyAuthError(f"the HTTP proxy {self._proxy} wants a user name and "
                                     f"password ({response.status_code}): give them in the "
                                     "proxy URL or with --proxy-ask-password")
            raise ProxyAuthError(f"the HTTP proxy {self._proxy} refused the user name and "
                                 f"password ({response.status_code} {reason})")
        raise ProxyRefused(f"the HTTP proxy {self._proxy} could not connect to "
                           f"{self._target}: {response.status_code} {reason}")


def negotiation_for(proxy, host, port):
    cls = Socks5Negotiation if proxy.is_socks else HTTPConnectNegotiation
    return cls(proxy, host, port)
