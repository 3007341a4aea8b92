# -*- test-case-name: tests.unit.server.test_model -*-
"""The Mailbox server's model of nameplates and mailboxes, with no I/O.

Mailbox server protocol, "Nameplates" and "Mailboxes": a nameplate is a short number that
points at a mailbox; a mailbox holds the messages of (at most) two sides.
This module keeps that state in memory (it serves every read) and reports each
change to an ``IChannelStore`` (which persists it) and each finished
nameplate/mailbox to an ``IUsageRecorder``. Time is passed in by the caller,
randomness comes from an injected ``random.Random``-like object.
"""

from __future__ import annotations

import string

from zope.interface import implementer

from ._interfaces import IAppNamespace, IChannelStore, IUsageRecorder

# Mailbox server protocol, "Mailboxes": the moods a client may report in
# `close`; the server adds `pruney` and `crowded` itself. (The older chapter
# of the magic-wormhole documentation spells two of them `error` and
# `pruned`; the newer text wins, see docs/protocols.md.)
CLIENT_MOODS = ("happy", "lonely", "scary", "errory")

_MAILBOX_ALPHABET = string.ascii_lowercase + "234567"


class ModelError(Exception):
    """A command that the model refuses; ``str(exc)`` is the wire `error`."""


class CrowdedError(ModelError):
    """A third side tried to use a nameplate or mailbox (Mailbox server
    protocol, "Mailboxes": `crowded`)."""

    def __init__(self):
        # the reference sends exactly "crowded"; clients may match on it
        super().__init__("crowded")


class ReclaimedError(ModelError):
    """A side claimed a nameplate again after releasing it."""

    def __init__(self):
        super().__init__("reclaimed")


class Message:
    """One client-to-client message held in a mailbox (Mailbox server
    protocol, "Mailboxes": `add`)."""

    __slots__ = ("side", "phase", "body", "server_rx", "msg_id")

    def __init__(self, side, phase, body, server_rx, msg_id):
        self.side = side
        self.phase = phase
        self.body = body  # the hex string, exactly as the client sent it
        self.server_rx = server_rx
        self.msg_id = msg_id

    def as_wire(self):
        return {"type": "message", "side": self.side, "phase": self.phase,
                "body": self.body, "server_rx": self.server_rx,
                "id": self.msg_id}

    def __repr__(self):
        return f"<Message {self.side}/{self.phase}>"


class _Side:
    """A side's membership: ``active`` is claimed (nameplate) or opened
    (mailbox); ``mood`` is what it said in `close`."""

    __slots__ = ("active", "added", "mood")

    def __init__(self, active, added, mood=None):
        self.active = active
        self.added = added
        self.mood = mood


class Nameplate:
    __slots__ = ("name", "mailbox_id", "created", "updated", "sides",
                 "crowded", "turned_away")

    def __init__(self, name, mailbox_id, created):
        self.name = name
        self.mailbox_id = mailbox_id
        self.created = created
        self.updated = created
        self.sides = {}
        self.crowded = False
        # sides refused as a third claimant: their release is acknowledged
        # as a no-op, as the reference server does (settled by
        # tests/interop/test_server_diff test_release_after_crowded_claim)
        self.turned_away = None


class Mailbox:
    __slots__ = ("mailbox_id", "for_nameplate", "created", "updated",
                 "sides", "messages", "nbytes", "listeners", "crowded")

    def __init__(self, mailbox_id, for_nameplate, created):
        self.mailbox_id = mailbox_id
        self.for_nameplate = for_nameplate
        self.created = created
        self.updated = created
        self.sides = {}
        self.messages = []
        self.nbytes = 0  # of the messages' bodies
        self.listeners = []  # objects with deliver(Message); few per mailbox
        self.crowded = False


def _second_arrival(sides):
    """When the second side showed up, or None if it never did."""
    times = sorted(s.added for s in sides.values())
    return times[1] if len(times) > 1 else None


def _summarize(kind, app_id, created, sides, crowded, ended, pruned):
    """One usage record (Mailbox server protocol, "Mailboxes": moods, `pruney`, `crowded`)."""
    second = _second_arrival(sides)
    if crowded:
        result = "crowded"
    elif pruned:
        result = "pruney"
    elif len(sides) < 2:
        result = "lonely"
    else:
        moods = {s.mood for s in sides.values()}
        # the worst mood any side reported wins; a missing mood is `happy`
        for mood in ("errory", "scary", "lonely"):
            if mood in moods:
                result = mood
                break
        else:
            result = "happy"
    return {
        "kind": kind,
        "app_id": app_id,
        "started": created,
        "waiting_time": None if second is None else second - created,
        "total_time": ended - created,
        "result": result,
    }


@implementer(IAppNamespace)
class AppNamespace:
    """The nameplates and mailboxes of one AppID (Mailbox server protocol, "Application IDs").

    Every method takes ``now`` (seconds since the epoch) from its caller.
    """

    def __init__(self, app_id, store, usage, rng, limits):
        self.app_id = app_id
        self._store = IChannelStore(store)
        self._usage = IUsageRecorder(usage)
        self._rng = rng
        self._limits = limits
        self.nameplates = {}
        self.mailboxes = {}

    def is_empty(self):
        return not self.nameplates and not self.mailboxes

    # nameplates (Mailbox server protocol, "Nameplates")

    def list_nameplate_ids(self):
        return sorted(self.nameplates, key=lambda n: (len(n), n))

    def allocate(self, side, now):
        """Claim a free nameplate as short as possible, random among the free
        ones of that length, and return its name."""
        length = 1
        while True:
            name = self._free_name(length)
            if name is not None:
                break
            length += 1
        self.claim(name, side, now)
        return name

    def _free_name(self, length):
        """A random free nameplate of ``length`` digits, or None. A few
        random guesses first: they find one at once while the range is
        mostly free (a burst of 500 clients must not cost a scan of the
        range each); a crowded range is scanned, up to 10,000 names."""
        low = 1 if length == 1 else 10 ** (length - 1)
        high = 10 ** length
        for _ in range(8):
            name = str(self._rng.randrange(low, high))
            if name not in self.nameplates:
                return name
        if high - low > 10000:
            # too many to list, and 8 guesses missed: keep guessing while
            # any is free (this range is far from full in practice)
            taken = sum(1 for n in self.nameplates if len(n) == length)
            while taken < high - low:
                name = str(self._rng.randrange(low, high))
                if name not in self.nameplates:
                    return name
            return None
        free = [str(n) for n in range(low, high)
                if str(n) not in self.nameplates]
        return self._rng.choice(free) if free else None

    def claim(self, name, side, now):
        """Add ``side`` to nameplate ``name`` (creating it and its mailbox if
        new) and return the mailbox id."""
        np = self.nameplates.get(name)
        if np is None:
            if len(self.nameplates) >= self._limits.max_nameplates:
                raise ModelError(
                    "the server has too many nameplates in use; "
                    "try again later")
            mailbox_id = self._new_mailbox_id()
            np = Nameplate(name, mailbox_id, now)
            self.nameplates[name] = np
            self._store.nameplate_created(self.app_id, name, mailbox_id, now)
            self._ensure_mailbox(mailbox_id, True, now)
        entry = np.sides.get(side)
        if entry is None:
            if len(np.sides) >= 2:
                np.crowded = True
                np.turned_away = (np.turned_away or frozenset()) | {side}
                raise CrowdedError()
            np.sides[side] = _Side(True, now)
            self._store.nameplate_side(self.app_id, name, side, True, now)
        elif not entry.active:
            raise ReclaimedError()
        np.updated = now
        mb = self.mailboxes.get(np.mailbox_id)
        if mb is not None:
            mb.updated = now
        return np.mailbox_id

    def holds_nameplate(self, name, side):
        """True if ``side`` is (or was) a member of nameplate ``name``."""
        np = self.nameplates.get(name)
        return np is not None and side in np.sides

    def release(self, name, side, now):
        """Drop ``side``'s claim; the nameplate goes once nobody claims it.

        Releasing a nameplate that no longer exists is a no-op, so that a
        client whose `released` was lost in a reconnection can repeat it.
        """
        np = self.nameplates.get(name)
        if np is None:
            return
        entry = np.sides.get(side)
        if entry is None and np.turned_away and side in np.turned_away:
            return
        if entry is None:
            raise ModelError(
                f"nameplate {name!r} was never claimed by your side; "
                "release only the nameplate you claimed")
        if entry.active:
            entry.active = False
            self._store.nameplate_side(self.app_id, name, side, False,
                                       entry.added)
        np.updated = now
        if not any(s.active for s in np.sides.values()):
            self._delete_nameplate(np, now, pruned=False)

    def _delete_nameplate(self, np, now, pruned):
        del self.nameplates[np.name]
        self._store.nameplate_deleted(self.app_id, np.name)
        self._usage.record(_summarize("nameplate", self.app_id, np.created,
                                      np.sides, np.crowded, now, pruned))

    # mailboxes (Mailbox server protocol, "Mailboxes")

    def _new_mailbox_id(self):
        while True:
            mailbox_id = "".join(self._rng.choice(_MAILBOX_ALPHABET)
                                 for _ in range(13))
            if mailbox_id not in self.mailboxes:
                return mailbox_id

    def _ensure_mailbox(self, mailbox_id, for_nameplate, now):
        mb = self.mailboxes.get(mailbox_id)
        if mb is None:
            if len(self.mailboxes) >= self._limits.max_mailboxes:
                raise ModelError(
                    "the server has too many mailboxes open; "
                    "try again later")
            mb = Mailbox(mailbox_id, for_nameplate, now)
            self.mailboxes[mailbox_id] = mb
            self._store.mailbox_created(self.app_id, mailbox_id,
                                        for_nameplate, now)
        return mb

    def open(self, mailbox_id, side, listener, now):
        """Add ``side`` to the mailbox and subscribe ``listener``; return the
        messages already in it (to be delivered first)."""
        mb = self.mailboxes.get(mailbox_id)
        if mb is not None and side not in mb.sides and len(mb.sides) >= 2:
            mb.crowded = True
            raise CrowdedError()
        mb = self._ensure_mailbox(mailbox_id, False, now)
        entry = mb.sides.get(side)
        if entry is None:
            entry = mb.sides[side] = _Side(True, now)
            self._store.mailbox_side(self.app_id, mailbox_id, side, True,
                                     now, None)
        elif not entry.active:
            # a side that closed and comes back (e.g. journal-mode restart)
            entry.active = True
            self._store.mailbox_side(self.app_id, mailbox_id, side, True,
                                     entry.added, None)
        mb.updated = now
        if listener not in mb.listeners:
            mb.listeners.append(listener)
        return list(mb.messages)

    def stop_listening(self, mailbox_id, listener):
        """The listener's connection went away: stop delivering to it (the
        side stays open; it may reconnect and open again)."""
        mb = self.mailboxes.get(mailbox_id)
        if mb is not None and listener in mb.listeners:
            mb.listeners.remove(listener)

    def add(self, mailbox_id, side, phase, body, server_rx, msg_id, now):
        """Store a message and fan it out to every listener (sender too)."""
        mb = self.mailboxes.get(mailbox_id)
        if mb is None:
            raise ModelError("this mailbox no longer exists (it was closed or "
                             "pruned); start a new wormhole")
        entry = mb.sides.get(side)
        if entry is None or not entry.active:
            raise ModelError("your side has not opened this mailbox (or has "
                             "closed it); open it before adding")
        limits = self._limits
        if len(mb.messages) >= limits.max_messages_per_mailbox:
            raise ModelError(
                f"mailbox is full ({limits.max_messages_per_mailbox} "
                "messages); this server does not keep more per mailbox")
        if mb.nbytes + len(body) > limits.max_bytes_per_mailbox:
            raise ModelError(
                f"mailbox is full ({limits.max_bytes_per_mailbox} bytes of "
                "messages); this server does not keep more per mailbox")
        msg = Message(side, phase, body, server_rx, msg_id)
        mb.messages.append(msg)
        mb.nbytes += len(body)
        mb.updated = now
        self._store.message_added(self.app_id, mailbox_id, msg)
        for listener in list(mb.listeners):
            listener.deliver(msg)

    def holds_mailbox(self, mailbox_id, side):
        mb = self.mailboxes.get(mailbox_id)
        return mb is not None and side in mb.sides

    def close(self, mailbox_id, side, mood, now):
        """Mark ``side`` closed with ``mood``; the mailbox (and any nameplate
        still pointing at it) goes once every side has closed.

        Closing a mailbox that no longer exists is a no-op (a repeated close
        after a reconnection)."""
        mb = self.mailboxes.get(mailbox_id)
        if mb is None:
            return
        entry = mb.sides.get(side)
        if entry is None:
            raise ModelError(
                f"mailbox {mailbox_id!r} was never opened by your side; "
                "close only the mailbox you opened")
        entry.active = False
        entry.mood = mood
        mb.updated = now
        self._store.mailbox_side(self.app_id, mailbox_id, side, False,
                                 entry.added, mood)
        if not any(s.active for s in mb.sides.values()):
            self._delete_mailbox(mb, now, pruned=False)

    def _delete_mailbox(self, mb, now, pruned):
        del self.mailboxes[mb.mailbox_id]
        self._store.mailbox_deleted(self.app_id, mb.mailbox_id)
        mb.listeners = []
        record = _summarize("mailbox", self.app_id, mb.created, mb.sides,
                            mb.crowded, now, pruned)
        # the usage database's `mailboxes` row says this too
        record["for_nameplate"] = mb.for_nameplate
        self._usage.record(record)

    # pruning (Mailbox server protocol, "Nameplates": "... or after some
    # period of inactivity")

    def prune(self, now, older_than):
        """Delete every mailbox nobody listens to and nobody touched since
        ``older_than``, and every such nameplate whose mailbox is gone or
        idle. Returns how many objects were removed."""
        removed = 0
        for mb in list(self.mailboxes.values()):
            if not mb.listeners and mb.updated < older_than:
                self._delete_mailbox(mb, now, pruned=True)
                removed += 1
        for np in list(self.nameplates.values()):
            if np.updated < older_than and np.mailbox_id not in self.mailboxes:
                self._delete_nameplate(np, now, pruned=True)
                removed += 1
        return removed

    # restoring from storage (Mailbox server protocol, "Persistence")

    def restore_nameplate(self, name, mailbox_id, created, now):
        np = Nameplate(name, mailbox_id, created)
        np.updated = now  # idle time restarts at a restart
        self.nameplates[name] = np
        return np

    def restore_mailbox(self, mailbox_id, for_nameplate, created, now):
        mb = Mailbox(mailbox_id, for_nameplate, created)
        mb.updated = now
        self.mailboxes[mailbox_id] = mb
        return mb

    def restore_nameplate_side(self, name, side, claimed, added):
        np = self.nameplates.get(name)
        if np is not None:
            np.sides[side] = _Side(bool(claimed), added)

    def restore_mailbox_side(self, mailbox_id, side, opened, added, mood):
        mb = self.mailboxes.get(mailbox_id)
        if mb is not None:
            mb.sides[side] = _Side(bool(opened), added, mood)

    def restore_message(self, mailbox_id, msg):
        mb = self.mailboxes.get(mailbox_id)
        if mb is not None:
            mb.messages.append(msg)
            mb.nbytes += len(msg.body)


class Model:
    """All AppNamespaces of one server."""

    def __init__(self, store, usage, rng, limits):
        self._store = store
        self._usage = usage
        self._rng = rng
        self._limits = limits
        self.apps = {}

    def app(self, app_id):
        ns = self.apps.get(app_id)
        if ns is None:
            ns = self.apps[app_id] = AppNamespace(
                app_id, self._store, self._usage, self._rng, self._limits)
        return ns

    def prune(self, now, older_than):
        removed = 0
        for app_id, ns in list(self.apps.items()):
            removed += ns.prune(now, older_than)
            if ns.is_empty():
                del self.apps[app_id]
        return removed

    def census(self):
        """{(kind, state): count} of nameplates and mailboxes now: state
        ``waiting`` with one active side, ``paired`` with more (for the
        metrics; one walk over every channel, at scrape time only)."""
        counts = {(kind, state): 0 for kind in ("nameplate", "mailbox")
                  for state in ("waiting", "paired")}
        for ns in self.apps.values():
            for kind, table in (("nameplate", ns.nameplates),
                                ("mailbox", ns.mailboxes)):
                for channel in table.values():
                    active = sum(1 for s in channel.sides.values()
                                 if s.active)
                    if active:
                        state = "waiting" if active == 1 else "paired"
                        counts[kind, state] += 1
        return counts

    def compact(self):
        """Forget empty AppIDs and shrink the others' tables (a dict keeps
        its size after its entries go)."""
        for app_id, ns in list(self.apps.items()):
            if ns.is_empty():
                del self.apps[app_id]
            else:
                ns.nameplates = dict(ns.nameplates)
                ns.mailboxes = dict(ns.mailboxes)

    def restore(self, rows, now):
        """Rebuild from what ``IChannelStore.load`` returned."""
        # a creation time the database does not know (None) is "now"
        for app_id, mailbox_id, for_nameplate, created in rows["mailboxes"]:
            self.app(app_id).restore_mailbox(
                mailbox_id, bool(for_nameplate),
                now if created is None else created, now)
        for app_id, name, mailbox_id, created in rows["nameplates"]:
            self.app(app_id).restore_nameplate(
                name, mailbox_id, now if created is None else created, now)
        for app_id, name, side, claimed, added in rows["nameplate_sides"]:
            self.app(app_id).restore_nameplate_side(name, side, claimed, added)
        for (app_id, mailbox_id, side, opened, added,
             mood) in rows["mailbox_sides"]:
            self.app(app_id).restore_mailbox_side(mailbox_id, side, opened,
                                                  added, mood)
        for (app_id, mailbox_id, side, phase, body, server_rx,
             msg_id) in rows["messages"]:
            self.app(app_id).restore_message(
                mailbox_id, Message(side, phase, body, server_rx, msg_id))
