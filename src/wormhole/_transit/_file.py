"""FileConsumer: records from a Transit pipe written into an open file
(the reference 0.24's ``wormhole.transit.FileConsumer``, behind
``pipe.writeToFile(f, expected, progress, hasher)``).

Each record is written as it arrives; ``progress(n)`` hears how many
bytes were written and ``hasher(data)`` (e.g. ``hashlib.sha256().update``)
sees them, so a receiver can show progress and verify a digest without a
second pass over the file.
"""

from twisted.internet.interfaces import IConsumer
from zope.interface import implementer


@implementer(IConsumer)
class FileConsumer:
    def __init__(self, f, progress=None, hasher=None):
        self._f = f
        self._progress = progress
        self._hasher = hasher
        self._producer = None

    def registerProducer(self, producer, streaming):
        if self._producer is not None:
            raise RuntimeError("a producer is already registered on this FileConsumer")
        self._producer = producer

    def unregisterProducer(self):
        self._producer = None

    def write(self, bytes):  # noqa: A002 (the reference's parameter name)
        self._f.write(bytes)
        if self._progress is not None:
            self._progress(len(bytes))
        if self._hasher is not None:
            self._hasher(bytes)
