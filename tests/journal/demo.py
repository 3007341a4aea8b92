"""misc/demo-journal.py (the journalled application of Journalled mode),
loaded as a module, and what the tests add to it: a checkpoint store in
memory and a kill plan.

A kill plan says, for each lifetime of the application (its first run,
then each restart), where that lifetime dies:

- ``("before", n)``: in the n-th transaction that changes the checkpoint,
  before it is written (the transaction is lost; the server and the peer
  send the message again);
- ``("after", n)``: once the n-th changing checkpoint is written, before
  what it queued is released (nothing of it left the process);
- ``("released", n)``: once the n-th changing transaction has released
  its messages;
- ``("reconnect", 0)``: in the second transaction of the lifetime (after
  a restart, the server's welcome), after its checkpoint and before the
  ``bind`` and re-sends it queued: dying while reconnecting.

Transactions that change nothing (a server's ``ack``, the welcome of a
reconnection) are not counted, so every lifetime that is killed "after"
or "released" has made progress, and a plan of k entries always ends.
"""

import importlib.util
import json
import os

from tests._processes import REPO_ROOT

DEMO_PATH = os.path.join(REPO_ROOT, "misc", "demo-journal.py")


def load_demo():
    spec = importlib.util.spec_from_file_location("demo_journal", DEMO_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


demo = load_demo()


class MemoryStore:
    def __init__(self):
        self.data = None

    def exists(self):
        return self.data is not None

    def load(self):
        return json.loads(self.data)

    def save(self, data):
        self.data = json.dumps(data)


class Killed(Exception):
    """This lifetime of the application ends here."""


def make_killable(journal_class):
    class KillableJournal(journal_class):
        """The application's journal, which a kill can stop mid-transaction."""

        def __init__(self, save_checkpoint, app):
            super().__init__(save_checkpoint)
            self.app = app

        def queue_outbound(self, fn, *args, **kwargs):
            if not self.app.dead:
                super().queue_outbound(fn, *args, **kwargs)

        def process(self):
            return _process(self, super().process)

    return KillableJournal


class _process:
    # a class rather than @contextmanager: the exception of a kill inside
    # the checkpoint must end the transaction here, not reach the reactor
    def __init__(self, journal, parent_process):
        self.journal = journal
        self.inner = None if journal.app.dead else parent_process()

    def __enter__(self):
        if self.inner is not None:
            self.inner.__enter__()

    def __exit__(self, *exc):
        if self.inner is None:
            return False
        try:
            suppressed = self.inner.__exit__(*exc)
        except Killed:
            self.journal.app.die()
            return True
        if exc[0] is None:
            self.journal.app.transaction_released()
        return suppressed


class KillableMixin:
    """Mixed into demo.ChatApp: counts transactions, dies where planned."""

    kill = None  # (position, n) for this lifetime, or None

    def setup_kill(self, kill, on_death):
        self.kill = kill
        self.on_death = on_death
        self.dead = False
        self.changing = 0   # transactions that changed the checkpoint
        self.any = 0        # every transaction
        self.last_saved = None

    def make_journal(self):
        import wormhole
        return make_killable(wormhole.Journal)(self.save_checkpoint, self)

    def resume(self, **wormhole_options):
        # what this lifetime starts from does not count as a change
        self.last_saved = json.dumps(self.store.load(), sort_keys=True)
        super().resume(**wormhole_options)

    def save_checkpoint(self):
        data = {"state": self.state,
                "wormhole": self.w.serialize() if self.w is not None else None}
        if self.dead:  # died in a transaction nested in this one
            raise Killed()
        encoded = json.dumps(data, sort_keys=True)
        self.any += 1
        position, n = self.kill or (None, None)
        if position == "reconnect" and self.any == 2:
            self._write(data, encoded)
            raise Killed()
        if encoded == self.last_saved:
            return
        self.changing += 1
        if position == "before" and self.changing == n:
            raise Killed()
        self._write(data, encoded)
        if position == "after" and self.changing == n:
            raise Killed()

    def _write(self, data, encoded):
        self.store.save(data)
        self.last_saved = encoded

    def transaction_released(self):
        position, n = self.kill or (None, None)
        if position == "released" and self.changing == n and not self.dead:
            self.die()

    def die(self):
        if not self.dead:
            self.dead = True
            self.on_death()


class KillableChatApp(KillableMixin, demo.ChatApp):
    pass
