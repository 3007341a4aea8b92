"""The node's own key, shared by its links so CHANGE_KEY re-keys them all
at once (P2P-D5.5, P2P-D2.6)."""

from . import _keys

# P2P-D2.6: the previous key is still accepted as To for 60 s
PREVIOUS_KEY_GRACE = 60.0


class Identity:

    def __init__(self, private_key, tau, clock):
        self._tau = tau
        self._clock = clock
        self._previous = None        # (der, accepted until)
        self._set(private_key)

    def _set(self, private_key):
        self.private_key = private_key
        self.der = _keys.public_der(private_key)
        self.address = _keys.truncated_address(self.der, self._tau)

    def change(self, new_private_key):
        self._previous = (self.der, self._clock.seconds() + PREVIOUS_KEY_GRACE)
        self._set(new_private_key)

    def is_mine(self, der):
        """To = our key, or the previous one within its grace (P2P-D2.6)."""
        if der == self.der:
            return True
        return (self._previous is not None and der == self._previous[0]
                and self._clock.seconds() < self._previous[1])
