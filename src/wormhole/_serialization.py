"""What every machine's serializer shares (Client API, "Serialization").

Each client machine writes its own record with Automat's
``@m.serializer()`` (its state's name plus its data, all JSON-able) and
reads it back with ``@m.unserializer()``: nobody reads a machine's private
state from outside. A checkpoint keeps "I want a connection", never "I am
connected" (Journalled mode, "Requirements"), so a machine with connected (``B``) and
disconnected (``A``) variants of a state always writes the ``A`` one: a
restored wormhole starts disconnected, and the ``connected()`` that follows
re-sends whatever that state still needs (a claim, ``open``, the
unacknowledged ``add``\\ s, a release, a close).

docs/journal.md describes the whole format.
"""

from binascii import Error as _BinasciiError

from .errors import WormholeError
from .util import bytes_to_hexstr, hexstr_to_bytes


class SerializationError(WormholeError):
    """A wormhole cannot be serialized now, or the data given to
    ``from_serialized()`` is not a serialized wormhole we can read."""


def offline(state, connected_to_disconnected):
    """The name to write for ``state``: its disconnected variant."""
    return connected_to_disconnected.get(state, state)


def hex_or_none(data):
    return None if data is None else bytes_to_hexstr(data)


def bytes_or_none(text):
    return None if text is None else hexstr_to_bytes(text)


def restore(name, machine, record):
    """Give ``record`` to ``machine._restore`` (its unserializer); any
    malformation becomes one SerializationError naming the machine."""
    if not isinstance(record, dict):
        raise SerializationError(
            f"the {name} record must be a JSON object, not {type(record).__name__}")
    try:
        machine._restore(record)
    except KeyError as e:
        # Automat's unserializer looks the state name up: an unknown name,
        # or a missing field of ours
        raise SerializationError(
            f"the {name} record has no field, or an unknown state, {e}: {record!r:.300}"
        ) from None
    except (TypeError, ValueError, AttributeError, _BinasciiError) as e:
        raise SerializationError(
            f"the {name} record is malformed ({type(e).__name__}: {e}): {record!r:.300}"
        ) from None


# the record of each machine, by the letter the Boss knows it by
MACHINE_RECORDS = {"B": "boss", "N": "nameplate", "M": "mailbox", "O": "order", "K": "key",
                   "R": "receive", "S": "send", "C": "code", "A": "allocator", "I": "input",
                   "L": "lister", "T": "terminator", "RC": "rendezvous"}


def serialize_machines(machines, boss_record):
    """``{record name: record}`` for the Boss's machines (``letter ->
    machine``); the Boss gives its own record."""
    records = {}
    for letter, name in MACHINE_RECORDS.items():
        records[name] = boss_record if letter == "B" else machines[letter].serialize()
    return records


def restore_machines(machines, records, restore_boss):
    """The reverse, before anything runs: every machine is back in its
    state with its data, and no output has fired."""
    if not isinstance(records, dict):
        raise SerializationError(f"'machines' must be a JSON object, not {records!r:.100}")
    missing = sorted(set(MACHINE_RECORDS.values()) - set(records))
    if missing:
        raise SerializationError(f"the serialized wormhole has no record for {missing}")
    for letter, name in MACHINE_RECORDS.items():
        restore(name, restore_boss if letter == "B" else machines[letter], records[name])


def encode_result(result):
    """How the wormhole ended, for a checkpoint taken while it closes:
    None, a mood string, or one of our errors by class name and args."""
    if result is None or isinstance(result, str):
        return result
    args = [a if isinstance(a, (str, int, float, bool, type(None))) else str(a)
            for a in result.args]
    return {"error": type(result).__name__, "args": args}


def decode_result(record):
    if record is None or isinstance(record, str):
        return record
    from . import errors
    name = record["error"]
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(*record["args"])
        except TypeError:
            pass
    # an error this version does not know by that name still ends the
    # wormhole, with its text
    return WormholeError(f"{name}: {' '.join(map(str, record['args']))}")
