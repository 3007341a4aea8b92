"""One zope Interface per object of the Mailbox server (docs/architecture.md, "Adding code")."""

from zope.interface import Attribute, Interface


class IChannelStore(Interface):
    """Persists the model's changes and releases outputs after commit.

    Mailbox server protocol, "Persistence": "The server will not send a direct response until
    any side-effects ... have been safely committed to the database." The
    model reports every change here; the connections send every output
    through ``after_commit`` so it leaves only once the changes recorded
    before it are durable.
    """

    def nameplate_created(app_id, name, mailbox_id, when):
        pass

    def nameplate_side(app_id, name, side, claimed, added):
        pass

    def nameplate_deleted(app_id, name):
        pass

    def mailbox_created(app_id, mailbox_id, for_nameplate, when):
        pass

    def mailbox_side(app_id, mailbox_id, side, opened, added, mood):
        pass

    def mailbox_deleted(app_id, mailbox_id):
        pass

    def message_added(app_id, mailbox_id, message):
        pass

    def usage_added(record):
        """A usage record to persist (``--usage-db``), if configured."""

    def client_version_added(app_id, side, connect_time, implementation,
                             version):
        """One client's bind, for ``client_versions`` (``--usage-db``)."""

    def usage_current(rebooted, updated, blur_time, connections):
        """The live counts for the usage database's ``current`` row."""

    failing = Attribute("True while the last commit failed")

    def after_commit(fn, *args):
        """Call ``fn(*args)`` once every change recorded so far is
        committed (at once if nothing is pending)."""

    def load():
        """Return the stored rows: a dict of lists of tuples (keys
        nameplates, nameplate_sides, mailboxes, mailbox_sides, messages)."""

    def close():
        """Commit what is pending and stop; returns a Deferred."""


class IUsageRecorder(Interface):
    """Receives one record per finished nameplate or mailbox."""

    def record(record):
        """``record`` is a dict: kind, app_id, started, waiting_time,
        total_time, result (and for_nameplate for a mailbox)."""

    def bound(app_id, side, client_version, when):
        """A client bound (Mailbox server protocol, "Connection-Specific
        (Client-to-Server) Messages")."""

    def current(rebooted, now, connections):
        """The live counts, refreshed once a minute."""


class IAppNamespace(Interface):
    """Nameplates and mailboxes of one AppID (Mailbox server protocol, "Application IDs")."""

    app_id = Attribute("the AppID")

    def list_nameplate_ids():
        pass

    def allocate(side, now):
        pass

    def claim(name, side, now):
        pass

    def release(name, side, now):
        pass

    def open(mailbox_id, side, listener, now):
        pass

    def stop_listening(mailbox_id, listener):
        pass

    def add(mailbox_id, side, phase, body, server_rx, msg_id, now):
        pass

    def close(mailbox_id, side, mood, now):
        pass

    def prune(now, older_than):
        pass


class IMailboxListener(Interface):
    """A connection subscribed to a mailbox."""

    def deliver(message):
        """A message was added to the mailbox (or was there at `open`)."""


class IConnection(Interface):
    """The per-connection protocol machine (Mailbox server protocol, "All Message Types")."""

    def connected(your_address=None):
        """The WebSocket opened: send `welcome` (with ``your-address``
        when the glue knows where the client came from)."""

    def received(payload):
        """One WebSocket message arrived (bytes)."""

    def lost():
        """The WebSocket went away."""


class ITransportGlue(Interface):
    """What a connection machine needs from the WebSocket below it."""

    def send_json(message):
        """Send one server->client message (adds nothing, encodes)."""

    def drop(code, reason):
        """Close the WebSocket with ``code`` and ``reason`` (after what is
        already queued)."""

    def abort():
        """Drop the connection at once, discarding what is queued."""


class IPermissionPolicy(Interface):
    """Mailbox server protocol, "Permission to Use the Server"."""

    def welcome_fields(connection_secret):
        """The `permission-required` dict for one connection, or None."""

    def allows_without_submission():
        """True if a client may bind without `submit-permissions`."""

    def check(submission, connection_secret, now):
        """Return None if acceptable, else a human-readable refusal."""
