# -*- test-case-name: tests.unit.relay.test_connection -*-
"""The per-connection machine of the Transit relay (Transit protocol, "Relay Handshake").

Sans-I/O: bytes come in through ``data_received``, and everything the
machine does goes out through its ``ITransportGlue`` (write, close, stream)
and its ``IPairing``; time comes from an injected clock. The same machine
drives TCP and WebSocket clients.

The words the relay says are the reference relay's, observed on the wire:
``ok\\n`` once paired, ``bad handshake\\n`` for a first line that is not a
handshake, ``impatient\\n`` for bytes sent before ``ok``. Ours only:
``crowded\\n`` (too many waiting on one token) and ``timeout\\n`` (no
handshake in time); docs/relay.md lists them.

Moods (the ``result`` of a usage record): ``empty`` (gone before a
handshake line), ``errory`` (bad handshake, or refused as crowded),
``impatient``, ``lonely`` (left while waiting), ``jilted`` (the relay gave
up waiting for its partner), ``redundant`` (another connection of the same
side was paired instead), ``happy`` (paired: one record for the pair,
written by ``_pairing.Pair``).
"""

from automat import MethodicalMachine
from zope.interface import implementer

from wormhole._automat_private import trace_hook

from ._handshake import BadHandshake, HandshakeParser
from ._interfaces import IPair, IPairing, IRelayConnection, ITransportGlue, IUsageRecorder

OK = b"ok\n"
BAD_HANDSHAKE = b"bad handshake\n"
IMPATIENT = b"impatient\n"
CROWDED = b"crowded\n"
TIMEOUT = b"timeout\n"


@implementer(IRelayConnection)
class RelayConnection:
    _machine = MethodicalMachine()
    set_trace = trace_hook(_machine)

    def __init__(self, glue, pairing, usage, clock, limits):
        self._glue = ITransportGlue(glue)
        self.glue = self._glue  # the partner streams from it
        self._pairing = IPairing(pairing)
        self._usage = IUsageRecorder(usage)
        self._clock = clock
        self._limits = limits
        self._parser = HandshakeParser(limits.max_handshake_length)
        self._timer = None
        self._pair = None
        # what the record of an unpaired connection will say; set by the
        # output that decides it, read when the connection is finally lost
        self._mood = "empty"
        self.started = clock.seconds()

    # timers: one at a time per connection (handshake, pairing, or the
    # grace for a closing connection to flush)

    def _arm(self, seconds):
        self._disarm()
        if seconds is not None:
            self._timer = self._clock.callLater(seconds, self._expired)

    def _disarm(self):
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    def _expired(self):
        self._timer = None
        self.timed_out()

    # --- states

    @_machine.state(initial=True)
    def awaiting_handshake(self):
        "connected; collecting the first line"

    @_machine.state()
    def waiting(self):
        "good handshake; waiting for a partner with the same token"

    @_machine.state()
    def relaying(self):
        "paired: bytes from each side go to the other"

    @_machine.state()
    def closing(self):
        "closed by us before pairing; waiting for the connection to go"

    @_machine.state()
    def unpairing(self):
        "closed (by us, or because the partner went) after pairing"

    @_machine.state()
    def done(self):
        "the connection is gone and its record is written"

    # --- inputs

    @_machine.input()
    def start(self):
        "the connection is up"

    @_machine.input()
    def data_received(self, data):
        "bytes from our client"

    @_machine.input()
    def _handshake_ok(self, token, side):
        "the first line was a good handshake, and nothing followed it"

    @_machine.input()
    def _handshake_early(self):
        "a good handshake followed by bytes the client sent before ok"

    @_machine.input()
    def _handshake_bad(self):
        "the first line is not a handshake, or too long"

    @_machine.input()
    def paired(self, pair, partner):
        "the pairing found our partner"

    @_machine.input()
    def displaced(self):
        "another connection with our token and side was paired instead"

    @_machine.input()
    def crowded(self):
        "the pairing refused us: too many wait on this token"

    @_machine.input()
    def forward(self, data):
        "bytes from our partner, for our client"

    @_machine.input()
    def partner_lost(self):
        "our partner's connection is gone"

    @_machine.input()
    def timed_out(self):
        "our timer (or the pair's idle timer) expired"

    @_machine.input()
    def connection_lost(self):
        "our client's connection is gone"

    # --- outputs

    @_machine.output()
    def _arm_handshake_timer(self):
        self._arm(self._limits.handshake_timeout)

    @_machine.output()
    def _arm_pairing_timer(self):
        self._arm(self._limits.pairing_timeout)

    @_machine.output()
    def _arm_close_timer(self):
        self._arm(self._limits.close_timeout)

    @_machine.output()
    def _disarm_timer(self):
        self._disarm()

    @_machine.output()
    def _parse(self, data):
        # validate before the machine: the parser's verdict becomes one of
        # three inputs, so the transitions below carry no ifs
        try:
            got = self._parser.feed(data)
        except BadHandshake:
            self._handshake_bad()
            return
        if got is None:
            return
        handshake, rest = got
        if rest:
            # Transit protocol, "Relay Handshake": clients "wait for ok\n"
            # before anything else
            self._handshake_early()
        else:
            self._handshake_ok(handshake.token, handshake.side)

    @_machine.output()
    def _join(self, token, side):
        # may call paired() or crowded() on us before it returns
        self._pairing.add(self, token, side)

    @_machine.output()
    def _leave(self):
        self._pairing.remove(self)

    @_machine.output()
    def _say_bad_handshake(self):
        self._mood = "errory"
        self._glue.write(BAD_HANDSHAKE)
        self._glue.close()

    @_machine.output()
    def _say_impatient(self):
        self._mood = "impatient"
        self._glue.write(IMPATIENT)
        self._glue.close()

    @_machine.output()
    def _say_crowded(self):
        self._mood = "errory"
        self._glue.write(CROWDED)
        self._glue.close()

    @_machine.output()
    def _say_timeout(self):
        self._glue.write(TIMEOUT)
        self._glue.close()

    @_machine.output()
    def _close_redundant(self):
        self._mood = "redundant"
        self._glue.close()

    @_machine.output()
    def _close_jilted(self):
        self._mood = "jilted"
        self._glue.close()

    @_machine.output()
    def _say_ok(self, pair, partner):
        self._glue.write(OK)

    @_machine.output()
    def _stream_from_partner(self, pair, partner):
        # From here on the glues move the bytes themselves (no input per
        # chunk); the machine only hears of state changes. Backpressure:
        # when our client reads slower than the partner writes, Twisted
        # pauses reading from the partner. Before ok: a glue that splices
        # takes over its socket here, while nothing is buffered on it.
        self._pair = IPair(pair)
        self._glue.stream_with(IRelayConnection(partner).glue, self._pair)

    @_machine.output()
    def _hand_to_pair(self, data):
        self._pair.moved(self, data)

    @_machine.output()
    def _write(self, data):
        self._glue.write(data)

    @_machine.output()
    def _stop_streaming(self):
        self._glue.stop_streaming()

    @_machine.output()
    def _close(self):
        self._glue.close()

    @_machine.output()
    def _abort(self):
        self._glue.abort()

    def _write_record(self):
        self._usage.record(started=self.started,
                           total_time=self._clock.seconds() - self.started,
                           waiting_time=None, total_bytes=0, mood=self._mood)

    @_machine.output()
    def _record_alone(self):
        self._write_record()

    @_machine.output()
    def _record_lonely(self):
        self._mood = "lonely"
        self._write_record()

    @_machine.output()
    def _tell_pair(self):
        self._pair.lost(self)

    @_machine.output()
    def _ignore(self):
        pass

    # --- transitions

    awaiting_handshake.upon(start, enter=awaiting_handshake,
                            outputs=[_arm_handshake_timer])
    awaiting_handshake.upon(data_received, enter=awaiting_handshake,
                            outputs=[_parse])
    awaiting_handshake.upon(_handshake_ok, enter=waiting,
                            outputs=[_arm_pairing_timer, _join])
    awaiting_handshake.upon(_handshake_early, enter=closing,
                            outputs=[_arm_close_timer, _say_impatient])
    awaiting_handshake.upon(_handshake_bad, enter=closing,
                            outputs=[_arm_close_timer, _say_bad_handshake])
    awaiting_handshake.upon(timed_out, enter=closing,
                            outputs=[_arm_close_timer, _say_timeout])
    awaiting_handshake.upon(connection_lost, enter=done,
                            outputs=[_disarm_timer, _record_alone])

    waiting.upon(paired, enter=relaying,
                 outputs=[_disarm_timer, _stream_from_partner, _say_ok])
    waiting.upon(displaced, enter=closing,
                 outputs=[_arm_close_timer, _close_redundant])
    waiting.upon(crowded, enter=closing,
                 outputs=[_arm_close_timer, _say_crowded])
    waiting.upon(data_received, enter=closing,
                 outputs=[_leave, _arm_close_timer, _say_impatient])
    waiting.upon(timed_out, enter=closing,
                 outputs=[_leave, _arm_close_timer, _close_jilted])
    waiting.upon(connection_lost, enter=done,
                 outputs=[_disarm_timer, _leave, _record_lonely])

    relaying.upon(data_received, enter=relaying, outputs=[_hand_to_pair])
    relaying.upon(forward, enter=relaying, outputs=[_write])
    relaying.upon(partner_lost, enter=unpairing,
                  outputs=[_stop_streaming, _arm_close_timer, _close])
    relaying.upon(timed_out, enter=unpairing,
                  outputs=[_stop_streaming, _arm_close_timer, _close])
    relaying.upon(connection_lost, enter=done,
                  outputs=[_stop_streaming, _tell_pair])

    # bytes arriving after we decided to close go nowhere
    closing.upon(data_received, enter=closing, outputs=[_ignore])
    closing.upon(timed_out, enter=closing, outputs=[_abort])
    closing.upon(connection_lost, enter=done,
                 outputs=[_disarm_timer, _record_alone])

    unpairing.upon(data_received, enter=unpairing, outputs=[_ignore])
    unpairing.upon(forward, enter=unpairing, outputs=[_ignore])
    unpairing.upon(partner_lost, enter=unpairing, outputs=[_ignore])
    unpairing.upon(timed_out, enter=unpairing, outputs=[_abort])
    unpairing.upon(connection_lost, enter=done,
                   outputs=[_disarm_timer, _tell_pair])

    done.upon(data_received, enter=done, outputs=[_ignore])
    done.upon(forward, enter=done, outputs=[_ignore])
    done.upon(partner_lost, enter=done, outputs=[_ignore])
    done.upon(timed_out, enter=done, outputs=[_ignore])
    done.upon(connection_lost, enter=done, outputs=[_ignore])
