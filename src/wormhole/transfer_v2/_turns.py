"""The answers of one reactor turn (docs/transfer-v2.md, "Per-record
work"): what the offer subchannels write while handling what the peer
sent leaves together at the end of the turn, and at once, ahead of our
control channel's close, when the session ends within the turn."""
import contextlib

from . import _framing


class TurnEnd:
    """One per session: the held writes of all its offer subchannels."""

    def __init__(self, call_later):
        self._call_later = call_later
        self._held = []  # write_held callables, for the turn's end
        self._answering = []  # writers gathering the answers to a delivery now

    def at_turn_end(self, delay, write_held):
        """``callLater(0, write_held)`` for the answers a subchannel holds to
        the end of the turn (``_framing.answers``), run together."""
        self._held.append(write_held)
        if len(self._held) == 1:
            self._call_later(delay, self.end_turn)

    def end_turn(self):
        pending, self._held = self._held, []
        for write_held in pending:
            write_held()

    @contextlib.contextmanager
    def answering(self, writer):
        """While a delivery on ``writer``'s subchannel is handled: what it
        answers is gathered for the turn's end."""
        self._answering.append(writer)
        try:
            with _framing.answers(writer, self.at_turn_end):
                yield
        finally:
            self._answering.remove(writer)

    def flush(self):
        """Everything held goes now: what this turn answered, and what a
        delivery being handled gathered so far (a close decided while it
        is handled comes before its answers would reach ``at_turn_end``)."""
        self.end_turn()
        for writer in self._answering:
            _framing.write_held(writer)
