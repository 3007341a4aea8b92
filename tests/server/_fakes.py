"""Recording fakes for the server's unit tests."""

from zope.interface import implementer

from wormhole_mailbox._interfaces import (
    IChannelStore,
    IMailboxListener,
    ITransportGlue,
    IUsageRecorder,
)
from wormhole_mailbox._store import _Recorder


@implementer(IChannelStore)
class RecordingStore(_Recorder):
    """Remembers every SQL change; commits happen when the test says."""

    def __init__(self):
        self.ops = []
        self.held = []
        self.auto = True

    def _op(self, sql, params):
        self.ops.append((sql.split()[0], params))

    def after_commit(self, fn, *args):
        if self.auto:
            fn(*args)
        else:
            self.held.append((fn, args))

    def commit(self):
        held, self.held = self.held, []
        for fn, args in held:
            fn(*args)

    def load(self):
        return {k: [] for k in ("nameplates", "nameplate_sides", "mailboxes",
                                "mailbox_sides", "messages")}

    def close(self):
        pass


@implementer(IUsageRecorder)
@implementer(IUsageRecorder)
class RecordingUsage:
    def __init__(self):
        self.records = []
        self.binds = []

    def record(self, record):
        self.records.append(record)

    def bound(self, app_id, side, client_version, when):
        self.binds.append((app_id, side, client_version, when))

    def current(self, rebooted, now, connections):
        pass


@implementer(IMailboxListener)
class Listener:
    def __init__(self):
        self.got = []

    def deliver(self, message):
        self.got.append((message.side, message.phase, message.body))


@implementer(ITransportGlue)
class FakeGlue:
    def __init__(self):
        self.sent = []
        self.dropped = None
        self.aborted = False

    def send_json(self, message):
        if self.dropped is None and not self.aborted:
            self.sent.append(message)

    def drop(self, code, reason):
        self.dropped = (code, reason)

    def abort(self):
        self.aborted = True

    def types(self):
        return [m["type"] for m in self.sent]

    def pop(self):
        sent, self.sent = self.sent, []
        return sent
