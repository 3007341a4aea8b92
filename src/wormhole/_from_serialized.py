"""``w.serialize()``'s envelope and ``wormhole.from_serialized()``.

Client API, "Serialization": a Delegated-mode, non-dilated wormhole
becomes a JSON-able dict and comes back, in the same state, disconnected,
in a later process. The envelope names the format and its version, so
that data from another version is refused with a clear error instead of
being half-understood; docs/journal.md describes every field.
"""

import sys

from ._boss import Boss
from ._eventual import EventualQueue
from ._mailbox import MAX_PROCESSED
from ._serialization import SerializationError
from ._unread import MAX_UNREAD, MAX_UNREAD_BYTES, UnreadBudget
from ._version import client_version
from ._ws import parse_relay_url
from .journal import ImmediateJournal
from .timing import DebugTiming
from .util import bytes_to_hexstr, hexstr_to_bytes

FORMAT = "magic-wormhole-serialized-wormhole"
VERSION = 1


def wormhole_record(relay_url, welcomed, key, machines):
    return {"format": FORMAT, "version": VERSION, "relay_url": relay_url,
            "welcomed": welcomed, "key": None if key is None else bytes_to_hexstr(key),
            "machines": machines}


def _check_envelope(data):
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SerializationError(
            f"not a serialized wormhole (no \"format\": \"{FORMAT}\"): {data!r:.200}")
    version = data.get("version")
    if version != VERSION:
        raise SerializationError(
            f"serialized wormhole of format version {version!r}: this library "
            f"reads version {VERSION} only (docs/journal.md)")


def from_serialized(data, reactor, delegate, journal=None, *, tor=None, timing=None,
                    stderr=sys.stderr, welcome_handler=None, on_status_update=None,
                    _eventual_queue=None, _reconnect_delay=1.0, _reconnect_max_delay=60.0,
                    _endpoint_factory=None, _max_unread=MAX_UNREAD,
                    _max_unread_bytes=MAX_UNREAD_BYTES, _max_phases=MAX_PROCESSED,
                    proxy=None):
    """Rebuild what ``w.serialize()`` returned (Client API, "Serialization") as a
    DelegatedWormhole for ``delegate``, with ``journal`` (Journalled mode,
    "Wormhole Support").

    Every machine is back in its state before anything runs; in a later
    turn, inside ``journal.process()``, the wormhole reconnects (and then
    re-sends whatever the server may not have: claim, open, unechoed
    messages, release, close), or finishes closing. The keyword arguments
    are ``create()``'s. Raises SerializationError for data of another
    format version or that is malformed.
    """
    from .wormhole import DelegatedWormhole, _proxy_of  # the facade imports us lazily
    if delegate is None:
        raise SerializationError("from_serialized() needs a delegate: only Delegated-mode "
                                 "wormholes can be serialized (Client API, 'Serialization')")
    _check_envelope(data)
    relay_url = data.get("relay_url")
    if not isinstance(relay_url, str):
        raise SerializationError(f"the serialized wormhole's relay_url is {relay_url!r}")
    parse_relay_url(relay_url)
    records = data.get("machines")
    try:
        boss_record, key_record = records["boss"], records["key"]
        side, appid, versions = boss_record["side"], boss_record["appid"], key_record["versions"]
        welcomed = bool(data["welcomed"])
        key = None if data["key"] is None else hexstr_to_bytes(data["key"])
    except (KeyError, TypeError, ValueError) as e:
        raise SerializationError(f"the serialized wormhole is malformed "
                                 f"({type(e).__name__}: {e})") from None
    # the restored wormhole reconnects through the same proxy (docs/proxy.md)
    proxy = _proxy_of(reactor, proxy, tor)
    timing = timing or DebugTiming()
    timing.add("wormhole", side=side, appid=appid, restored=True)
    journal = journal or ImmediateJournal()
    eq = _eventual_queue or EventualQueue(reactor)

    def make_restored_boss(events):
        boss = Boss(events, side, relay_url, appid, versions, client_version(), reactor, eq,
                    journal, tor, timing, reconnect_delay=_reconnect_delay,
                    reconnect_max_delay=_reconnect_max_delay,
                    endpoint_factory=_endpoint_factory, on_status_update=on_status_update,
                    unread=UnreadBudget(_max_unread, _max_unread_bytes),
                    max_phases=_max_phases, proxy=proxy)
        boss.restore(records)
        return boss

    w = DelegatedWormhole(delegate, reactor, eq, stderr, welcome_handler, relay_url, journal,
                          make_restored_boss)
    w._restore(welcomed, key)

    def resume():
        # reconnecting sends nothing by itself, but finishing a close
        # tells the delegate: a transaction of its own (Journalled mode,
        # "Wormhole Support")
        with journal.process():
            w._boss.resume(records)
    eq.eventually(resume)
    return w
