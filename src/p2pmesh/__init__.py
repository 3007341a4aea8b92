"""p2pmesh: the P2P mesh protocol as settled by
docs/p2p-decisions.md (signed msgpack messages, SHOUT/SPEAK flooding, WHISPER
and a Kademlia DHT) on Twisted. docs/p2pmesh.md shows how to use it."""

from ._config import ANNOUNCE, CHANGE_KEY, SHOUT, SPEAK, WHISPER, LocalLimits, SubnetConfig
from ._keys import generate_private_key, public_der
from ._node import Node
from ._service import load_or_create_key

__all__ = ["Node", "SubnetConfig", "LocalLimits", "SHOUT", "SPEAK",
           "WHISPER", "ANNOUNCE", "CHANGE_KEY", "generate_private_key",
           "public_der", "load_or_create_key"]
