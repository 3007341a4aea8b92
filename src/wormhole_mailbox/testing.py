"""Run our Mailbox server inside a test's reactor.

    srv = yield start_mailbox_server(reactor)
    srv.url      # "ws://127.0.0.1:PORT/v1", bound to 127.0.0.1 only
    srv.port     # pass port=srv.port later to restart on the same port
    srv.usage()  # one dict per finished nameplate/mailbox
    yield srv.stop()

``channel_db=None`` keeps everything in memory; a path puts it in SQLite on
disk, so a test can stop and start the server on the same port and database.
Extra keyword arguments are limits (``wormhole.server._limits.Limits``).
"""

from twisted.internet.defer import inlineCallbacks, returnValue

from ._limits import Limits
from .server import build_mailbox, make_factory

__all__ = ["start_mailbox_server", "RunningMailboxServer"]


class RunningMailboxServer:
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
