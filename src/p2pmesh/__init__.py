"""p2pmesh: the peer-to-peer mesh protocol of spec 002 as settled by
p2p-decisions.md (signed msgpack messages, SHOUT/SPEAK flooding, WHISPER
and a Kademlia DHT) on Twisted."""

from ._config import LocalLimits, SubnetConfig
from ._node import Node

__all__ = ["Node", "SubnetConfig", "LocalLimits"]
