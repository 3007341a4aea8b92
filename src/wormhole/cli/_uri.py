"""The ``wormhole-transfer:`` URI of a code (URI scheme): what
``wormhole send`` puts in its QR code and what ``wormhole receive``
accepts in place of a code.

``wormhole-transfer:CODE`` with the code percent-encoded, and a query
string only where a value differs from its default: ``rendezvous=`` (the
Mailbox server without its ``/v1`` path) when it is not the public one.
Parsing fails on unknown query fields, a version other than 0, and a
role other than ``follower`` (the spec's "fail if they contain unknown
fields or unsupported parameter values").
"""
from urllib.parse import parse_qsl, quote, unquote

import attrs

from .public_relay import RENDEZVOUS_RELAY

SCHEME = "wormhole-transfer"
# the spec's defaults (section "Query fields")
DEFAULT_RENDEZVOUS = "ws://relay.magic-wormhole.io:4000"
VERSION = "0"
# the spec: "the versioned endpoint is supposed to be added by the client"
ENDPOINT = "/v1"
KNOWN_FIELDS = ("version", "rendezvous", "role")


class URIError(ValueError):
    """Not a ``wormhole-transfer:`` URI this client can follow."""


@attrs.frozen
class TransferURI:
    code: str
    # with the /v1 endpoint; None when the URI names no rendezvous (the
    # public server by default, or whatever --relay-url says)
    relay_url: str = None
    role: str = "follower"


def _rendezvous_of(relay_url):
    if relay_url.endswith(ENDPOINT):
        return relay_url[:-len(ENDPOINT)]
    return relay_url


def _relay_url_of(rendezvous):
    return rendezvous.rstrip("/") + ENDPOINT


def is_transfer_uri(text):
    return text.lower().startswith(SCHEME + ":")


def transfer_uri(code, relay_url=RENDEZVOUS_RELAY):
    """The URI for ``code`` on the Mailbox server ``relay_url``."""
    # the code's '?', '#', '%', spaces, controls and non-ASCII are
    # encoded (a superset of the C0 control set: decoding is the same)
    uri = f"{SCHEME}:{quote(code, safe='-._~!$&()*+,;=:@/')}"
    rendezvous = _rendezvous_of(relay_url)
    if rendezvous != DEFAULT_RENDEZVOUS:
        uri += "?rendezvous=" + quote(rendezvous, safe="")
    return uri


def parse_transfer_uri(uri):
    """A TransferURI, or URIError saying what is wrong."""
    if not is_transfer_uri(uri):
        raise URIError(f"not a {SCHEME}: URI")
    rest = uri[len(SCHEME) + 1:]
    code_part, _, query = rest.partition("?")
    code = unquote(code_part)
    if not code:
        raise URIError("the URI holds no code")
    fields = {}
    for name, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
        if name not in KNOWN_FIELDS:
            raise URIError(f"unknown field {name!r} in the URI")
        if name in fields:
            raise URIError(f"field {name!r} appears twice in the URI")
        fields[name] = value
    if fields.get("version", VERSION) != VERSION:
        raise URIError(f"unsupported URI version {fields['version']!r} (only 0 is known)")
    role = fields.get("role", "follower")
    if role not in ("follower", "leader"):
        raise URIError(f"unknown role {role!r} in the URI")
    rendezvous = fields.get("rendezvous")
    if rendezvous is None:
        return TransferURI(code=code, role=role)
    if not rendezvous.startswith(("ws://", "wss://")):
        raise URIError(f"the URI's rendezvous {rendezvous!r} is not a ws:// or wss:// URL")
    return TransferURI(code=code, relay_url=_relay_url_of(rendezvous), role=role)
