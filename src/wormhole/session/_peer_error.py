"""A peer of ours that stops on purpose says so in the mailbox
(docs/cli.md "Ctrl-C and SIGTERM"; docs/api.md "Sessions"): the spec's
``error`` message (File-transfer protocol, "Sender"), which the CLI sends
when SIGINT or SIGTERM stops the command. The other side reads the mailbox while it waits
-- for the transfer-v2 session, or for its human at the classic ``ok?``
question -- and ends at once with the peer's words ("the sender cancelled
the transfer (Ctrl-C)"), instead of waiting a minute for a peer that is
gone.
"""
from twisted.internet import defer
from twisted.python import failure

from ..transfer import parse_message, peer_gave_up


class PeerError:
    """The peer's ``error`` message in the mailbox
    (File-transfer protocol, "Sender"), which
    a side of ours sends when it stops on purpose (the CLI's Ctrl-C,
    SIGTERM) while the session runs: it closes ``session`` at once,
    and ``error`` says why (docs/cli.md "Ctrl-C and SIGTERM"). ``who``
    names the peer ("sender", "receiver", "peer"). ``unless_error(d)``
    is ``d``, or that error when it comes first: the session's graceful
    close would wait for a peer that is gone."""

    def __init__(self, session, who):
        self.error = None
        self._session = session  # or None: nothing to close (classic)
        self._who = who
        self._active = True
        self._errored = []

    @classmethod
    def watching(cls, w, session, who):
        """A PeerError fed by ``w``'s next message."""
        peer = cls(session, who)
        w.get_message().addCallbacks(peer.got, lambda f: None)
        return peer

    def got(self, body):
        """The peer's next message: ends the session if it is an error."""
        message = parse_message(body)
        if self._active and isinstance(message, dict) and "error" in message:
            self.error = peer_gave_up(self._who, str(message["error"]))
            waiting, self._errored = self._errored, []
            for d in waiting:
                d.errback(self.error)
            if self._session is not None:
                self._session.close()
        return body

    def hand_over(self):
        """The session is not used: the message is no longer ours."""
        self._active = False

    def unless_error(self, d):
        if self.error is not None:
            return defer.fail(self.error)
        out = defer.Deferred()
        errored = defer.Deferred()
        self._errored.append(errored)

        def settle(result):
            if out.called:
                return
            if isinstance(result, failure.Failure):
                out.errback(result)
            else:
                out.callback(result)
        d.addBoth(settle)
        errored.addErrback(settle)
        return out
