"""``wormhole.eventual``: the public name of the eventual-send queue the
reference 0.24 exports (applications pass one to ``create(_eventual_queue=)``
and flush it in tests). The class is this library's own, in _eventual.
"""

from ._eventual import EventualQueue

__all__ = ["EventualQueue"]
