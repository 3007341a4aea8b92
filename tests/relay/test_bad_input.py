"""Bad input over loopback: each case is answered or dropped cleanly, with
limits, while another pair on the same relay keeps relaying."""

import functools

from twisted.internet.defer import inlineCallbacks

from ._fakes import SIDE1, SIDE2, TOKEN, TOKEN2, handshake
from ._support import Base

OTHER = "c" * 64  # the well-behaved pair's token


def keeps_pair(test):
    """After the test, the well-behaved pair still relays both ways."""
    @functools.wraps(test)
    @inlineCallbacks
    def wrapper(self):
        yield test(self)
        yield self.check_relays(*self.good, tag=b"after")
    return wrapper


class BadInput(Base):
    @inlineCallbacks
    def setUp(self):
        yield self.start(**self.limits())
        self.good = yield self.pair(token=OTHER)

    def limits(self):
        return dict(handshake_timeout=0.5, pairing_timeout=0.5,
                    max_waiting_per_token=3)


    @inlineCallbacks
    def refused(self, data, answer=b"bad handshake\n", mood="errory"):
        c = yield self.clients.connect(self.r.port)
        c.send(data)
        got = yield c.closed
        self.assertEqual(got, answer)
        yield self.check_relays(*self.good)
        yield self.r.when_mood(mood)

    @keeps_pair
    def test_garbage_line(self):
        """A line of text: 'bad handshake\\n', closed, errory."""
        return self.refused(b"hello world\n")

    @keeps_pair
    def test_empty_line(self):
        """A bare newline: bad handshake."""
        return self.refused(b"\n")

    @keeps_pair
    def test_no_newline_too_long(self):
        """1025 bytes without a newline: bad handshake at once."""
        return self.refused(b"x" * 1025)

    @keeps_pair
    def test_megabyte_line(self):
        """A megabyte on one line: bad handshake, and the relay does not
        read the rest into memory."""
        return self.refused(b"y" * 1000000 + b"\n")

    @keeps_pair
    def test_token_with_space(self):
        """A token with a space in it: bad handshake."""
        return self.refused(b"please relay %s for side %s\n"
                            % (b"a" * 32 + b" " + b"a" * 31, SIDE1.encode()))

    @keeps_pair
    def test_short_token(self):
        """A 62-digit token: bad handshake."""
        return self.refused(b"please relay %s\n" % (b"a" * 62))

    @keeps_pair
    def test_bad_side(self):
        """A side that is not 16 word characters: bad handshake."""
        return self.refused(handshake(TOKEN, "-" * 16))

    @keeps_pair
    def test_crlf(self):
        """CRLF line ending: bad handshake."""
        return self.refused(b"please relay %s\r\n" % TOKEN.encode())

    @keeps_pair
    def test_http_request(self):
        """An HTTP client that found the port: bad handshake."""
        return self.refused(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")

    @keeps_pair
    def test_binary_garbage(self):
        """NUL and high bytes: bad handshake."""
        return self.refused(bytes(range(256)) + b"\n")

    @keeps_pair
    def test_tls_client_hello(self):
        """A TLS ClientHello (no newline within 1024 bytes): bad
        handshake."""
        return self.refused(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"
                            + b"\x00" * 1100)

    @keeps_pair
    def test_handshake_then_data(self):
        """Bytes right behind the handshake (not waiting for ok):
        'impatient\\n', closed."""
        return self.refused(handshake(TOKEN, SIDE1) + b"data",
                            answer=b"impatient\n", mood="impatient")

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_data_while_waiting(self):
        """Bytes while waiting for the partner: impatient, and the token is
        free for others again."""
        c = yield self.clients.connect(self.r.port)
        c.send(handshake(TOKEN, SIDE1))
        yield self.until_waiting(1)
        c.send(b"hurry up")
        got = yield c.closed
        self.assertEqual(got, b"impatient\n")
        a, b = yield self.pair(token=TOKEN)
        yield self.check_relays(a, b)

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_idle_before_handshake(self):
        """A connection that says nothing gets 'timeout\\n' and is closed
        after handshake_timeout (mood empty)."""
        c = yield self.clients.connect(self.r.port)
        got = yield c.closed
        self.assertEqual(got, b"timeout\n")
        yield self.r.when_mood("empty")

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_partial_handshake_then_idle(self):
        """Half a handshake and then silence: timeout."""
        c = yield self.clients.connect(self.r.port)
        c.send(handshake(TOKEN, SIDE1)[:20])
        got = yield c.closed
        self.assertEqual(got, b"timeout\n")

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_idle_waiting(self):
        """A handshake whose partner never comes is closed after
        pairing_timeout (mood jilted)."""
        c = yield self.clients.connect(self.r.port)
        c.send(handshake(TOKEN, SIDE1))
        got = yield c.closed
        self.assertEqual(got, b"")
        yield self.r.when_mood("jilted")

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_three_connections_one_token(self):
        """A third connection for a paired token waits on its own; the pair
        is undisturbed."""
        a, b = yield self.pair(token=TOKEN)
        c = yield self.clients.connect(self.r.port)
        c.send(handshake(TOKEN, SIDE1))
        yield self.check_relays(a, b)
        got = yield c.closed  # jilted in the end
        self.assertEqual(got, b"")
        yield self.check_relays(a, b)

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_third_joins_pair_token_of_other(self):
        """A stranger using the well-behaved pair's token after it paired
        gets nothing from the pair."""
        c = yield self.clients.connect(self.r.port)
        c.send(handshake(OTHER, SIDE2))
        yield self.check_relays(*self.good)
        got = yield c.closed
        self.assertEqual(got, b"")

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_same_side_twice(self):
        """Two connections of one side: when the partner comes, the first
        is paired and the second closed (mood redundant)."""
        a1 = yield self.clients.connect(self.r.port)
        a2 = yield self.clients.connect(self.r.port)
        a1.send(handshake(TOKEN, SIDE1))
        yield self.until_waiting(1)
        a2.send(handshake(TOKEN, SIDE1))
        yield self.until_waiting(2)
        b = yield self.clients.connect(self.r.port)
        b.send(handshake(TOKEN, SIDE2))
        got = yield a2.closed
        self.assertEqual(got, b"")
        yield a1.when_received(3)
        yield b.when_received(3)
        yield self.check_relays(a1, b)
        yield self.r.when_mood("redundant")

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_crowded(self):
        """A fourth connection of one side on one token (limit 3):
        'crowded\\n'."""
        for _ in range(3):
            c = yield self.clients.connect(self.r.port)
            c.send(handshake(TOKEN2, SIDE1))
        yield self.until_waiting(3)
        yield self.refused(handshake(TOKEN2, SIDE1), answer=b"crowded\n")

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_gone_mid_handshake(self):
        """A client that closes half-way through its handshake: mood
        empty."""
        c = yield self.clients.connect(self.r.port)
        c.send(b"please rel")
        c.transport.loseConnection()
        yield c.closed
        yield self.r.when_mood("empty")

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_lonely(self):
        """A client that gives up waiting: mood lonely."""
        c = yield self.clients.connect(self.r.port)
        c.send(handshake(TOKEN, SIDE1))
        yield self.until_waiting(1)
        c.transport.loseConnection()
        yield c.closed
        yield self.r.when_mood("lonely")

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_half_close_after_handshake(self):
        """A client that half-closes right after its handshake is treated
        as gone (no half-close: Transit protocol, "Relay Handshake")."""
        c = yield self.clients.connect(self.r.port)
        c.send(handshake(TOKEN, SIDE1))
        c.transport.loseWriteConnection()
        yield c.closed
        a, b = yield self.pair(token=TOKEN)
        yield self.check_relays(a, b)

    @keeps_pair
    @keeps_pair
    @inlineCallbacks
    def test_many_bad_at_once(self):
        """Fifty bad clients at the same time: all refused."""
        cs = []
        for i in range(50):
            c = yield self.clients.connect(self.r.port)
            c.send(b"junk %d\n" % i)
            cs.append(c)
        for c in cs:
            got = yield c.closed
            self.assertEqual(got, b"bad handshake\n")
