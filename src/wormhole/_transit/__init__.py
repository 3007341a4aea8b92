"""Package-private pieces of ``wormhole.transit`` (Transit protocol).

- ``_hints``: hint and ability dicts <-> values (File-transfer protocol, "Transit");
- ``_codec``: key derivations, handshake lines, the record framer (sans-I/O);
- ``_connection``: one connection attempt's machine and its Protocol shell;
- ``_selection``: the race of attempts for one ``connect()``;
- ``_attempts``: the dials and the losers of that race (the Selection's hands);
- ``_dialing``: the DialQueue that bounds and staggers every dial;
- ``_websocket``: the client endpoint for relays reached over WebSocket;
- ``_pipe``: the record pipe ``connect()`` returns;
- ``_addresses``: which local addresses we listen on and advertise;
- ``_endpoint_choice``: which client endpoint reaches a hint (shared with
  Dilation's connector);
- ``_punch``: what the Mailbox server's ``your-address`` tells of our NAT,
  for hole punching; ``_observe``: its second observation;
- ``_box``: SecretBox for records without the extra copies;
- ``_file``: ``FileConsumer``, records written into an open file;
- ``_interfaces``: one zope Interface per machine and neighbour.
"""
