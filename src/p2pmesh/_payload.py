"""msgpack payloads with the refusal rules of P2P-D5.1."""

import msgpack

INT_MIN, INT_MAX = -(1 << 63), (1 << 64) - 1


class Malformed(ValueError):
    """A payload the decisions refuse: answered NACK "malformed" (P2P-D5.3)."""


def _pairs(pairs):
    # P2P-D5.1: str keys only, no duplicates
    out = {}
    for key, value in pairs:
        if not isinstance(key, str):
            raise Malformed("map key is not a string")
        if key in out:
            raise Malformed("duplicate map key")
        out[key] = value
    return out


def _no_ext(code, data):
    raise Malformed("msgpack extension types are refused")


def _check(value, depth, max_depth):
    """The validator walk of P2P-D5.1; iterative so depth cannot blow the
    Python stack."""
    stack = [(value, depth)]
    while stack:
        v, d = stack.pop()
        if d > max_depth:
            raise Malformed("nesting deeper than %d" % max_depth)
        if v is None or isinstance(v, (bool, float, str, bytes)):
            continue
        if isinstance(v, int):
            if not INT_MIN <= v <= INT_MAX:
                raise Malformed("integer out of range")
            continue
        if isinstance(v, list):
            stack.extend((item, d + 1) for item in v)
            continue
        if isinstance(v, dict):
            for key, item in v.items():
                if not isinstance(key, str):
                    raise Malformed("map key is not a string")
                stack.append((item, d + 1))
            continue
        raise Malformed("type %s is refused" % type(v).__name__)


def unpack(data, max_depth=32):
    """Decode one msgpack value (P2P-D5.1), or raise Malformed."""
    try:
        value = msgpack.unpackb(
            data, raw=False, use_list=True, strict_map_key=False,
            object_pairs_hook=_pairs, ext_hook=_no_ext, timestamp=0)
    except Malformed:
        raise
    except (ValueError, TypeError, msgpack.ExtraData,
            msgpack.FormatError, msgpack.StackError) as e:
        # ExtraData (trailing bytes), UnicodeDecodeError (bad UTF-8),
        # truncated data and nesting beyond msgpack's own stack
        raise Malformed("msgpack: %s" % type(e).__name__) from None
    except RecursionError:
        raise Malformed("msgpack nesting too deep") from None
    _check(value, 1, max_depth)
    return value


def _sort_maps(value):
    if isinstance(value, dict):
        return {k: _sort_maps(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [_sort_maps(v) for v in value]
    return value


def pack(value, max_depth=32):
    """Encode (P2P-D5.1: bin type, float64, map keys sorted); refuses what
    unpack would refuse so a node never sends a payload its peer NACKs."""
    value = _sort_maps(value)
    _check(value, 1, max_depth)
    return msgpack.packb(value, use_bin_type=True, use_single_float=False)
