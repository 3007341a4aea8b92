"""One zope Interface per machine and per public object.

Each machine's ``wire(...)`` adapts its neighbours through these (e.g.
``IMailbox(mailbox)``), so a swapped argument fails at start-up. The
methods listed are the inputs other machines may call.
"""

from zope.interface import Attribute, Interface

# pylint: disable=no-self-argument,no-method-argument,inherit-non-class


class IWormhole(Interface):
    """The public wormhole object (Client API, "Full API list"), either mode."""

    def allocate_code(code_length=2, length=None):
        """Ask the server for a nameplate and pick random words."""

    def set_code(code):
        """Use a code the human already knows."""

    def input_code():
        """Return an IInputHelper for interactive code entry."""

    def send_message(msg):
        """Queue ``msg`` (bytes) for the peer."""

    def derive_key(purpose, length):
        """Derive an application key from the shared key."""

    def close():
        """Release everything; Deferred mode returns a Deferred."""

    def debug_set_trace(client_name, which="B N M S O K R RC L C I A T", file=None):
        """Print every transition of the named machines."""


class IDeferredWormhole(IWormhole):
    def get_welcome():
        """Deferred firing with the welcome dict."""

    def get_code():
        """Deferred firing with the code."""

    def get_unverified_key():
        """Deferred firing with the raw shared key."""

    def get_verifier():
        """Deferred firing with the verifier bytes."""

    def get_versions():
        """Deferred firing with the peer's app_versions."""

    def get_message():
        """Deferred firing with the next inbound message."""


class IWormholeEvents(Interface):
    """What the Boss tells the facade (Deferred or Delegated)."""

    def got_welcome(welcome):
        pass

    def got_code(code):
        pass

    def got_key(key):
        pass

    def got_verifier(verifier):
        pass

    def got_versions(versions):
        pass

    def received(plaintext):
        pass

    def closed(result):
        pass


class IWormholeDelegate(Interface):
    """What a Delegated-mode application provides (Client API, "Full API list")."""

    def wormhole_got_welcome(welcome):
        pass

    def wormhole_got_code(code):
        pass

    def wormhole_got_unverified_key(key):
        pass

    def wormhole_got_verifier(verifier):
        pass

    def wormhole_got_versions(versions):
        pass

    def wormhole_got_message(msg):
        pass

    def wormhole_closed(result):
        pass


class IBoss(Interface):
    def start():
        pass

    def allocate_code(code_length):
        pass

    def input_code():
        pass

    def set_code(code):
        pass

    def send(plaintext):
        pass

    def close():
        pass

    def rx_welcome(welcome):
        pass

    def rx_unwelcome(err):
        pass

    def rx_error(errmsg, orig):
        pass

    def error(err):
        pass

    def got_code(code):
        pass

    def got_key(key):
        pass

    def happy():
        pass

    def scared():
        pass

    def got_verifier(verifier):
        pass

    def got_message(phase, plaintext):
        pass

    def message_taken(plaintext):
        """The application has taken this message: it no longer counts
        against the unread bound (docs/security.md)."""

    def closed():
        pass


class INameplate(Interface):
    def connected():
        pass

    def lost():
        pass

    def set_nameplate(nameplate):
        pass

    def rx_claimed(mailbox):
        pass

    def rx_released():
        pass

    def release():
        pass

    def close():
        pass


class IMailbox(Interface):
    def connected():
        pass

    def lost():
        pass

    def got_mailbox(mailbox):
        pass

    def add_message(phase, body):
        pass

    def rx_message(side, phase, body):
        pass

    def rx_closed():
        pass

    def close(mood):
        pass


class IOrder(Interface):
    def got_message(side, phase, body):
        pass

    def got_key():
        pass


class IKey(Interface):
    def got_code(code):
        pass

    def got_pake(body):
        pass

    def key_settled(key):
        pass


class IReceive(Interface):
    def got_key(key):
        pass

    def got_keys(key, alternative):
        pass

    def got_message(side, phase, body):
        pass


class ISend(Interface):
    def send(phase, plaintext):
        pass

    def got_verified_key(key):
        pass


class ICode(Interface):
    def allocate_code(length, wordlist):
        pass

    def input_code():
        pass

    def set_code(code):
        pass

    def allocated(nameplate, code):
        pass

    def got_nameplate(nameplate):
        pass

    def finished_input(code):
        pass


class IAllocator(Interface):
    def connected():
        pass

    def lost():
        pass

    def allocate(length, wordlist):
        pass

    def rx_allocated(nameplate):
        pass


class IInput(Interface):
    def start():
        pass

    def got_nameplates(all_nameplates):
        pass

    def got_wordlist(wordlist):
        pass

    def refresh_nameplates():
        pass

    def get_nameplate_completions(prefix):
        pass

    def choose_nameplate(nameplate):
        pass

    def when_wordlist_is_available():
        pass

    def get_word_completions(prefix):
        pass

    def choose_words(words):
        pass

    def close(reason):
        """The wormhole is closing, ``reason`` the mood or the error: the
        helper refuses from now on."""


class IInputHelper(Interface):
    """The code-entry helper of Client API, "Code Management"."""

    def refresh_nameplates():
        pass

    def get_nameplate_completions(prefix):
        pass

    def choose_nameplate(nameplate):
        pass

    def when_wordlist_is_available():
        pass

    def get_word_completions(prefix):
        pass

    def choose_words(words):
        pass


class ILister(Interface):
    def connected():
        pass

    def lost():
        pass

    def refresh():
        pass

    def rx_nameplates(all_nameplates):
        pass


class ITerminator(Interface):
    def close(mood):
        pass

    def nameplate_done():
        pass

    def mailbox_done():
        pass

    def stopped():
        pass

    def connection_failed():
        pass


class IRendezvousConnector(Interface):
    def start():
        pass

    def stop():
        pass

    def tx_claim(nameplate):
        pass

    def tx_release(nameplate):
        pass

    def tx_open(mailbox):
        pass

    def tx_add(phase, body):
        pass

    def tx_close(mailbox, mood):
        pass

    def tx_allocate():
        pass

    def tx_list():
        pass


class IWordlist(Interface):
    def choose_words(length):
        """Return ``length`` random words joined by hyphens."""

    def get_completions(prefix, num_words=2):
        """Return the set of completions of ``prefix``."""


class IJournal(Interface):
    def queue_outbound(fn, *args, **kwargs):
        pass

    def process():
        """A context manager wrapping the processing of an inbound event."""


class ITiming(Interface):
    def add(name, when=None, **details):
        pass


class ITorManager(Interface):
    """What the library needs from a Tor manager (``create(tor=...)``)."""

    def stream_via(host, port, tls=False):
        """Return an IStreamClientEndpoint that reaches host:port over Tor."""


class IProxy(Interface):
    """What the library needs from a proxy (``create(proxy=...)``,
    ``wormhole.proxy.Proxy``; docs/proxy.md)."""

    direct = Attribute("True: the peer's direct hints are dialled too, "
                       "outside the proxy, and we listen for direct connections")

    def routes(host):
        """True when a connection to ``host`` goes through the proxy
        (False for a host NO_PROXY lists)."""

    def stream_via(host, port, tls=False):
        """Return an IStreamClientEndpoint that reaches host:port through
        the proxy (or directly, for a host it does not route)."""

    def route_note(host):
        """What a connection description adds for ``host``: " (through
        the proxy URL)" with the URL redacted, or "" when dialled directly."""


class IDilator(Interface):
    """What the Boss tells Dilation (Dilation protocol): ``wormhole._dilation._dilator``
    when ``create(dilation=True)``, else a null Dilator that ignores it."""

    def got_key(key):
        """The shared key exists (Dilation derives its own keys from it)."""

    def got_wormhole_versions(their_versions):
        """The peer's whole version dict (``can-dilate`` etc.)."""

    def received_dilate(plaintext):
        """A decrypted ``dilate-N`` phase from the peer, in arrival order."""

    def dilate(transit_relay_location, no_listen, on_status_update, ping_interval,
               expected_subprotocols, listen_addresses):
        """The application's ``dilate()``: returns a DilatedWormhole."""

    def stop():
        """The wormhole is closing: end Dilation."""
