"""Run our Mailbox server inside a test's reactor.

    srv = yield start_mailbox_server(reactor)
    srv.url      # "ws://127.0.0.1:PORT/v1", bound to 127.0.0.1 only
    srv.port     # pass port=srv.port later to restart on the same port
    srv.usage()  # one dict per finished nameplate/mailbox
    yield srv.stop()

``channel_db=None`` keeps everything in memory; a path puts it in SQLite on
disk, so a test can stop and start the server on the same port and database.
Extra keyword arguments are limits (``wormhole_mailbox._limits.Limits``).

``MemoryGlue`` attaches a client without a socket (``wormhole.testing``'s
in-memory server uses it).
"""

from twisted.internet.defer import inlineCallbacks, returnValue
from zope.interface import implementer

from ._interfaces import ITransportGlue
from ._limits import Limits
from ._messages import encode
from .server import build_mailbox, make_factory

__all__ = ["start_mailbox_server", "RunningMailboxServer", "MemoryGlue"]


class RunningMailboxServer:
    """A Mailbox server listening on 127.0.0.1 (``start_mailbox_server``):
    ``url`` is its ``ws://`` address, ``port`` its TCP port, ``mailbox``
    the server object."""
    def __init__(self, mailbox, factory, listening_port):
        self.mailbox = mailbox
        self.factory = factory
        self._listening = listening_port
        self.port = listening_port.getHost().port
        self.url = f"ws://127.0.0.1:{self.port}/v1"

    def usage(self):
        """Every usage record so far, oldest first."""
        return list(self.mailbox.usage_log.records)

    @inlineCallbacks
    def stop(self):
        """Close the listening port and every connection, commit, stop."""
        yield self._listening.stopListening()
        yield self.factory.drop_all()
        yield self.mailbox.stop()


@inlineCallbacks
def start_mailbox_server(reactor, channel_db=None, usage_db=None, port=0,
                         allow_list=True, motd=None, signal_error=None,
                         advertise_version=None, permissions=None,
                         blur_usage=None, commit_window=0.0, rng=None,
                         **limits):
    """Start our Mailbox server on 127.0.0.1 (``port=0``: a free port) for
    a test; returns a Deferred firing with a ``RunningMailboxServer``.

    The keyword arguments are those of ``build_mailbox``; ``limits`` are
    ``wormhole_mailbox`` ``Limits`` fields (docs/server.md)."""
    mailbox = build_mailbox(
        reactor, channel_db=channel_db, usage_db=usage_db, motd=motd,
        signal_error=signal_error, advertise_version=advertise_version,
        allow_list=allow_list, permissions=permissions,
        blur_usage=blur_usage, commit_window=commit_window, rng=rng,
        limits=Limits(**limits), keep_usage=None)
    factory = make_factory(mailbox, reactor=reactor)
    listening = yield reactor.listenTCP(port, factory, interface="127.0.0.1")
    mailbox.start()
    returnValue(RunningMailboxServer(mailbox, factory, listening))


@implementer(ITransportGlue)
class MemoryGlue:
    """The server side of a client attached in memory: what the Connection
    machine sends goes to ``client.to_client(payload)`` (bytes), and a drop
    or an abort to ``client.close(was_clean, code, reason)``, as a
    WebSocket's close would reach the client."""

    def __init__(self, client):
        self._client = client

    def send_json(self, message):
        """Deliver ``message`` (a dict) to the client, encoded as the server
        sends it."""
        self._client.to_client(encode(message))

    def drop(self, code, reason):
        """Close the client's connection with WebSocket ``code`` and ``reason``."""
        self._client.close(code == 1000, code, reason)

    def abort(self):
        """Drop the client at once (WebSocket close code 1006)."""
        self._client.close(False, 1006, "aborted")
