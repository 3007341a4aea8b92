"""What the two ends of a link settle with SET_CONNECTION_OPT: in the
handshake, that both run the same subnet (P2P-D6.2); after it, which
compression methods each end may send and accepts (P2P-D3.4, 3.5).

The handshake's states are the connection's machine (_connection.py);
here are the rules it applies, without I/O.
"""

from . import _compression
from ._config import ACK, NACK, OPT_COMPRESSION, OPT_PREFERRED, SET_CONNECTION_OPT

# P2P-D3.5: compress only bodies over 1 KiB
COMPRESS_THRESHOLD = 1024


def is_option(value):
    """A SET_CONNECTION_OPT payload is [option (an int), setting]."""
    return (isinstance(value, list) and len(value) == 2
            and isinstance(value[0], int) and not isinstance(value[0], bool))


def subnet_matches(setting, subnet):
    """P2P-D6.2: the peer's subnet ``setting`` is ours, all seven values
    compared, types included (1 ≠ 1.0 ≠ True)."""
    ours = subnet.as_setting()
    return setting == ours and [type(x) for x in setting] == [type(x) for x in ours]


class Compression:
    """The compression methods of one link; ``local_order`` is the
    configured order (P2P-D0)."""

    def __init__(self, local_order):
        self._order = local_order
        self._decodes = {_compression.NONE}   # methods we accept
        self._encodes = set()                 # methods we may send
        self._peer_preferred = None

    def offered(self):
        """The methods this side offers and accepts: the local order that
        this process can run."""
        usable = _compression.available()
        return [m for m in self._order if m in usable]

    def accepts(self, method):
        return method in self._decodes

    def proposing(self, method):
        """P2P-D3.4: the proposer decodes ``method`` from the moment it
        proposes it."""
        self._decodes.add(method)

    def agreed(self, method):
        """The peer ACKed our proposal of ``method``: we may send it."""
        self._encodes.add(method)

    def refused(self, method):
        """The peer NACKed (or never answered) our proposal of ``method``:
        it stays agreed only if we ACKed the peer's own proposal of it
        (then we also encode it); else we stop decoding it."""
        if method not in self._encodes:
            self._decodes.discard(method)

    def option(self, option, setting):
        """The answer to the peer's option [0, m] (compression) or [1, m]
        (preferred): ``(ACK or NACK, answer list)``."""
        echo = [SET_CONNECTION_OPT, option, setting]
        if option == OPT_COMPRESSION:
            if setting in self.offered():
                self._decodes.add(setting)
                self._encodes.add(setting)
                return ACK, echo
            return NACK, echo + ["unsupported"]
        if option == OPT_PREFERRED:
            if setting == _compression.NONE or setting in self._encodes:
                self._peer_preferred = (None if setting == _compression.NONE
                                        else setting)
                return ACK, echo
            return NACK, echo + ["unsupported"]
        return NACK, echo + ["unsupported"]

    def choose(self, body):
        """P2P-D3.5: ``(method, bytes)`` for a transmission body: the
        peer's preferred method, else the first agreed in local order;
        only over 1 KiB and only when smaller."""
        if len(body) <= COMPRESS_THRESHOLD:
            return _compression.NONE, body
        if self._peer_preferred is not None:
            candidates = [self._peer_preferred]
        else:
            candidates = [m for m in self._order if m in self._encodes]
        for method in candidates[:1]:
            packed = _compression.compress(method, body)
            if len(packed) < len(body):
                return method, packed
        return _compression.NONE, body
