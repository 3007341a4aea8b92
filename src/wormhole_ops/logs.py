# -*- test-case-name: tests.server.test_logs -*-
"""What both servers write to the operator's log (docs/operations.md).

- Peer addresses: none by default. autobahn names the peer (its ``peer``
  attribute, ``tcp4:ADDRESS:PORT``) in its warnings; our protocols replace
  it right after the connection is made with ``HIDDEN_PEER`` unless the
  operator chose ``--log-addresses``. Usage records never had addresses.
- One line per finished session, from the usage record (so
  ``--blur-usage`` applies to it as to the databases).
- The options at start-up, with listening addresses left out (an interface
  address is no peer's, but a log that holds no address at all is the
  simple rule to check).
"""

import re

from twisted.logger import Logger

HIDDEN_PEER = "a client (address not logged; see --log-addresses)"

log = Logger(namespace="wormhole.ops")

_INTERFACE = re.compile(r"(interface=)(?:\\.|[^:])*")


def hide_peer(protocol, log_addresses):
    """Call from ``connectionMade`` after autobahn's own."""
    if not log_addresses:
        protocol.peer = HIDDEN_PEER


def without_addresses(value):
    """An endpoint description with its interface address replaced."""
    if isinstance(value, str):
        return _INTERFACE.sub(r"\1<not logged>", value)
    return value


def log_startup(name, options):
    """One line with every option the operator gave (``options``: a twistd
    ``usage.Options``)."""
    shown = {k: without_addresses(v) for k, v in sorted(options.items())
             if v not in (None, [], 0, False)}
    log.info("{name} starting with options {options}", name=name,
             options=shown)


def log_session(server, record):
    """One line per finished session: a usage record (already blurred when
    --blur-usage is on), never an address."""
    fields = " ".join(f"{k}={v}" for k, v in record.items())
    log.info("{server} session ended: {fields}", server=server,
             fields=fields, record=record)
