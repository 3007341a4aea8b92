"""The session's open offers, and the gate the peer's offers pass before
the application is asked (docs/security.md "transfer-v2": a bound on
what the peer makes us hold; Dilated File Transfer, "Making an Offer":
who may offer)."""
from twisted.logger import Logger

# the peer's offers we hold at once (each waits for a decision or is
# being received); more are rejected rather than queued without bound
MAX_INCOMING_OFFERS = 100

_log = Logger()


class Offers:
    """``on_offer(IncomingOffer)``: the application's decision (None: every
    offer is rejected); ``on_refused(OfferRefused)``: an offer refused
    before it was known (None: logged)."""

    def __init__(self, on_offer=None, on_refused=None, limit=MAX_INCOMING_OFFERS):
        self._on_offer = on_offer
        self._on_refused = on_refused or self._log_refused
        self._limit = limit
        self._incoming = set()  # offer protocols the peer opened
        self._outgoing = set()  # ... and we opened

    def opened(self, protocol, theirs):
        (self._incoming if theirs else self._outgoing).add(protocol)

    def finished(self, protocol):
        self._incoming.discard(protocol)
        self._outgoing.discard(protocol)

    def held(self):
        """How many offers are open, both ways."""
        return len(self._incoming) + len(self._outgoing)

    def ask(self, incoming, negotiated):
        """The peer's offer is known: rejected here, or handed to on_offer."""
        if len(self._incoming) > self._limit:
            incoming.reject(f"too many offers at once (at most {self._limit})")
        elif not negotiated.they_may_offer:
            incoming.reject(f"a peer in mode {negotiated.their_mode!r} may not "
                            f"offer to a peer in mode {negotiated.our_mode!r}")
        elif self._on_offer is None:
            incoming.reject("this peer does not accept offers")
        else:
            self._on_offer(incoming)

    def refused(self, error):
        self._on_refused(error)

    def cancel_all(self, reason):
        """The session ends: every open offer is cancelled by us."""
        for protocol in list(self._incoming | self._outgoing):
            protocol.session_over(reason)

    @staticmethod
    def _log_refused(error):
        _log.info("{error}", error=error)
