"""``create()`` and the two facades of the Client API, "Modes".

Deferred mode turns each event into Deferreds (every ``get_*`` call gets
its own, before or after the event), which fire in a later reactor turn;
Delegated mode calls the delegate's ``wormhole_*`` methods at once, inside
the turn that caused the event (as the reference 0.24 does). Both only
validate arguments and hand them to the Boss.
"""

import os
import sys

from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from . import _interfaces
from ._boss import Boss
from ._crypto import derive_key
from ._eventual import EventualQueue
from ._mailbox import MAX_PROCESSED
from ._observer import OneShotObserver, SequenceObserver
from ._serialization import SerializationError
from ._unread import MAX_UNREAD, MAX_UNREAD_BYTES, UnreadBudget
from ._version import client_version
from ._welcome import WelcomeAdvice
from ._ws import parse_relay_url
from .errors import KeyFormatError, NoKeyError, WormholeClosed
from .journal import ImmediateJournal
from .timing import DebugTiming
from .util import bytes_to_hexstr, to_bytes

__all__ = ["create", "DeferredWormhole", "DelegatedWormhole", "validate_code",
           "IDeferredWormhole", "IWormhole"]

log = Logger()


def validate_code(code):
    """Raise KeyFormatError unless ``code`` looks like ``NNN-words``
    (Client API, "Code Management": a pasted leading space or a missing number are the
    usual mistakes)."""
    if not isinstance(code, str):
        raise KeyFormatError(f"The code must be a str, not {type(code).__name__}")
    if code != code.strip():
        raise KeyFormatError(f"Code '{code}' has leading or trailing whitespace: remove it")
    if " " in code or "\t" in code:
        raise KeyFormatError(f"Code '{code}' contains spaces: use hyphens between parts")
    nameplate, hyphen, words = code.partition("-")
    if not hyphen:
        raise KeyFormatError(f"Code '{code}' has no hyphen: it must look like 4-purple-sausages")
    if not (nameplate.isdigit() and nameplate.isascii()):
        raise KeyFormatError(
            f"Code '{code}' must start with the numeric nameplate, then a hyphen "
            f"(like 4-purple-sausages), not '{nameplate}'")
    # "0-" is the code of the CLI's -0 ("zero mode", no secret at all),
    # which the reference accepts too; any other code needs words
    if not words and code != "0-":
        raise KeyFormatError(f"Code '{code}' has no words after the nameplate")


class _WormholeBase:
    """What both modes share: the commands (Client API, "Full API list": its "action" column)."""

    def __init__(self, reactor, eventual_queue, stderr, welcome_handler, relay_url, make_boss):
        """``make_boss(events)`` builds the Boss (and with it every machine,
        Dilation included) around this facade, its IWormholeEvents."""
        self._reactor = reactor
        self._eq = eventual_queue
        self._stderr = stderr
        self._welcome_handler = welcome_handler
        self._relay_url = relay_url
        self._key = None
        self._welcomed = False
        self._boss = make_boss(self)

    @property
    def _dilator(self):
        """Read-only view: the Boss's IDilator (``_boss._D``), whose
        ``_manager`` is None until Dilation runs and without Dilation."""
        return self._boss._D

    # -- commands ------------------------------------------------------------
    def allocate_code(self, code_length=2, length=None):
        # Client API, "Code Management" spells it ``length``; the reference ``code_length``
        if length is not None:
            code_length = length
        if not isinstance(code_length, int) or isinstance(code_length, bool) or code_length < 1:
            raise ValueError(f"code_length must be a positive int, not {code_length!r}")
        self._boss.allocate_code(code_length)

    def input_code(self):
        return self._boss.input_code()

    def set_code(self, code):
        validate_code(code)
        self._boss.set_code(code)

    def send_message(self, plaintext):
        if not isinstance(plaintext, bytes):
            raise TypeError(f"send_message() takes bytes, not {type(plaintext).__name__}")
        self._boss.send(plaintext)

    def derive_key(self, purpose, length):
        if not isinstance(purpose, str):
            raise TypeError(f"purpose must be a str, not {type(purpose).__name__}")
        if not isinstance(length, int):
            raise TypeError(f"length must be an int, not {type(length).__name__}")
        if self._key is None:
            raise NoKeyError()
        return derive_key(self._key, to_bytes(purpose), length)

    def _nat_mapping(self):
        """Deferred ``_punch.Mapping`` (or None): the port and outside
        address classic Transit may punch with (docs/transit.md, "Through a
        NAT: hole punching")."""
        return self._boss.nat_mapping()

    def dilate(self, transit_relay_location=None, no_listen=False, on_status_update=None,
               ping_interval=None, expected_subprotocols=None, *, status_update=None,
               _listen_addresses=None, **limits):
        """Start Dilation (Dilation protocol, "Initiating Dilation"); returns the
        DilatedWormhole. The arguments are the reference 0.24's, in its
        order; ``status_update`` is the Dilation protocol's name for ``on_status_update``.
        Our additions, keyword-only: the limits ``max_peer_subchannels``,
        ``max_backlog``, ``max_unacked``, ``close_timeout`` (docs/api.md,
        docs/security.md "Dilation"). A second call raises
        CanOnlyDilateOnceError."""
        return self._boss.dilate(
            transit_relay_location=transit_relay_location, no_listen=no_listen,
            on_status_update=on_status_update or status_update, ping_interval=ping_interval,
            expected_subprotocols=expected_subprotocols, listen_addresses=_listen_addresses,
            **limits)

    def _stop_dilation(self):
        self._boss.stop_dilation()

    def debug_set_trace(self, client_name, which="B N M S O K R RC L C I A T", file=sys.stderr):
        self._boss._set_trace(client_name, which, file)

    # -- events from the Boss that both modes treat alike --------------------
    def _show_welcome(self, welcome):
        # Client API, "Welcome Messages": the motd is shown once, saying which server sent it
        if self._welcomed:
            return False
        self._welcomed = True
        if self._welcome_handler is not None:
            self._welcome_handler(welcome)
        else:
            # the motd and an upgrade notice, escaped (_welcome.py)
            WelcomeAdvice(self._relay_url, self._stderr)(welcome)
        return True


@implementer(_interfaces.IDeferredWormhole, _interfaces.IWormholeEvents)
class DeferredWormhole(_WormholeBase):
    def __init__(self, reactor, eventual_queue, stderr, welcome_handler, relay_url, make_boss):
        # the observers exist before the Boss, which may report at once
        self._welcome_observer = OneShotObserver(eventual_queue)
        self._code_observer = OneShotObserver(eventual_queue)
        self._key_observer = OneShotObserver(eventual_queue)
        self._verifier_observer = OneShotObserver(eventual_queue)
        self._version_observer = OneShotObserver(eventual_queue)
        # the peer's messages count against the Boss's unread bound until
        # get_message() hands them out (docs/security.md "Mailbox client")
        self._received_observer = SequenceObserver(
            eventual_queue, taken=lambda plaintext: self._boss.message_taken(plaintext))
        self._closed_observer = OneShotObserver(eventual_queue)
        super().__init__(reactor, eventual_queue, stderr, welcome_handler, relay_url, make_boss)

    def get_welcome(self):
        return self._welcome_observer.when_fired()

    def get_code(self):
        return self._code_observer.when_fired()

    def get_unverified_key(self):
        return self._key_observer.when_fired()

    def get_verifier(self):
        return self._verifier_observer.when_fired()

    def get_versions(self):
        return self._version_observer.when_fired()

    def get_message(self):
        return self._received_observer.when_next_event()

    def serialize(self):
        raise SerializationError(
            "only Delegated-mode wormholes can be serialized (Client API, 'Serialization': a "
            "Deferred cannot outlive its process): create(..., delegate=...)")

    def close(self):
        d = self._closed_observer.when_fired()
        self._stop_dilation()
        self._boss.close()
        return d

    # IWormholeEvents
    def got_welcome(self, welcome):
        if self._show_welcome(welcome):
            self._welcome_observer.fire(welcome)

    def got_code(self, code):
        self._code_observer.fire(code)

    def got_key(self, key):
        self._key = key
        self._key_observer.fire(key)

    def got_verifier(self, verifier):
        self._verifier_observer.fire(verifier)

    def got_versions(self, versions):
        self._version_observer.fire(versions)

    def received(self, plaintext):
        self._received_observer.fire(plaintext)

    def closed(self, result):
        # Client API, "Closing": pending Deferreds errback with the error that
        # closed us, or WormholeClosed after a clean close
        if isinstance(result, Exception):
            failure = Failure(result)
        else:
            failure = Failure(WormholeClosed(result))
        # also those that had answered: every new get_*() call fails from
        # now on, as in the reference 0.24 (after a wrong code too, since
        # the Boss closes the wormhole itself then)
        for o in (self._welcome_observer, self._code_observer, self._key_observer,
                  self._verifier_observer, self._version_observer):
            o.error(failure)
        self._received_observer.fire(failure)
        self._closed_observer.fire(Failure(result) if isinstance(result, Exception) else result)


@implementer(_interfaces.IWormhole, _interfaces.IWormholeEvents)
class DelegatedWormhole(_WormholeBase):
    """Calls the delegate's ``wormhole_*`` methods inside the turn (and the
    Boss's transition) that caused each event, as the reference 0.24 does:
    ``wormhole_got_code`` before ``set_code()`` returns, an event caused by
    a server message while that message is processed, so in journalled
    mode inside the same ``journal.process()`` (Journalled mode, "Wormhole Support"). The order
    of events is docs/api.md "Delegated mode"."""

    def __init__(self, delegate, reactor, eventual_queue, stderr, welcome_handler, relay_url,
                 journal, make_boss):
        self._delegate = delegate
        # what cannot be journalled is refused (docs/journal.md)
        self._journalled = not isinstance(journal, ImmediateJournal)
        super().__init__(reactor, eventual_queue, stderr, welcome_handler, relay_url, make_boss)

    def close(self):
        self._stop_dilation()
        self._boss.close()

    def input_code(self):
        if self._journalled:
            raise SerializationError(
                "input_code() cannot be journalled: its helper belongs to a human at a "
                "terminal and to this process; use set_code() (docs/journal.md)")
        return super().input_code()

    def serialize(self):
        """This wormhole as a JSON-able dict (Client API, "Serialization"; the format is
        in docs/journal.md); ``wormhole.from_serialized()`` rebuilds it."""
        from ._from_serialized import wormhole_record
        return wormhole_record(self._relay_url, self._welcomed, self._key,
                               self._boss.serialize())

    def _restore(self, welcomed, key):
        self._welcomed = welcomed
        self._key = key

    def _deliver(self, method, *args):
        # an exception from the delegate is the application's bug: it must
        # not unwind the machine transition that is calling us (the
        # reference lets it escape; docs/api.md "Behaviour differences")
        try:
            getattr(self._delegate, method)(*args)
        except Exception:  # noqa: BLE001 -- logged with its traceback
            log.failure("the delegate's {method} raised", method=method)

    # IWormholeEvents
    def got_welcome(self, welcome):
        # the motd is shown once, but the delegate hears every welcome
        # (one per connection to the server), as in the reference
        self._show_welcome(welcome)
        self._deliver("wormhole_got_welcome", welcome)

    def got_code(self, code):
        self._deliver("wormhole_got_code", code)

    def got_key(self, key):
        self._key = key
        self._deliver("wormhole_got_unverified_key", key)

    def got_verifier(self, verifier):
        self._deliver("wormhole_got_verifier", verifier)

    def got_versions(self, versions):
        self._deliver("wormhole_got_versions", versions)

    def received(self, plaintext):
        # nothing waits in this facade: the delegate has it now
        self._boss.message_taken(plaintext)
        self._deliver("wormhole_got_message", plaintext)

    def closed(self, result):
        self._deliver("wormhole_closed", result)


# the reference 0.24's names in this module, which applications' test
# fixtures import (docs/api.md): its interfaces and its facade classes
IDeferredWormhole = _interfaces.IDeferredWormhole
IWormhole = _interfaces.IWormhole
_DeferredWormhole = DeferredWormhole
_DelegatedWormhole = DelegatedWormhole


def _nat_observer(reactor, relay_url, tor, punch):
    """What our Mailbox connection learns about our NAT, unless punching is
    off (Tor hides our addresses: never with Tor; nor through a proxy,
    where ``tor`` is the Proxy); docs/transit.md,
    "Through a NAT: hole punching"."""
    from ._transit._punch import NatObserver, punching_disabled
    if tor is not None or not punch or punching_disabled():
        return None
    from ._transit._observe import observe_welcome
    return NatObserver(reactor, relay_url, lambda url: observe_welcome(reactor, url))


def _proxy_of(reactor, proxy, tor):
    """``create(proxy=...)`` as an IProxy, or None (docs/proxy.md)."""
    if proxy is None:
        return None
    if tor is not None:
        raise ValueError("tor= and proxy= exclude each other: Tor is a proxy of its own")
    if isinstance(proxy, str):
        from .proxy import Proxy
        proxy = Proxy(reactor, proxy)
    return _interfaces.IProxy(proxy)


def create(appid, relay_url, reactor,
           versions={},  # noqa: B006  the reference's default (tests/app/test_surface.py); never mutated
           delegate=None, journal=None, tor=None,
           timing=None, stderr=sys.stderr, dilation=False, _eventual_queue=None,
           on_status_update=None, *, welcome_handler=None, proxy=None, _enable_dilate=False,
           _reconnect_delay=1.0, _reconnect_max_delay=60.0, _endpoint_factory=None,
           _dilation_side=None, _max_unread=MAX_UNREAD, _max_unread_bytes=MAX_UNREAD_BYTES,
           _max_phases=MAX_PROCESSED, _punch=True):
    """Make a wormhole (Client API, "Wormhole Parameters"). Returns a DeferredWormhole, or a
    DelegatedWormhole when ``delegate`` is given.

    The positional order is the reference 0.24's. Keyword-only:
    ``welcome_handler(welcome)`` replaces printing the motd;
    ``_reconnect_delay``/``_reconnect_max_delay`` shorten the reconnection
    backoff for tests; ``_endpoint_factory(scheme, host, port)`` replaces
    how the Mailbox connection is made; ``_dilation_side`` forces the
    Dilation side (tests choose Leader or Follower with it);
    ``_max_unread``/``_max_unread_bytes`` bound the peer's messages the
    application has not read, ``_max_phases`` the distinct phases of the
    peer remembered for de-duplication (docs/security.md "Mailbox client").
    ``_punch=False`` (or $WORMHOLE_NO_PUNCH) turns NAT hole punching off
    (docs/transit.md "Through a NAT").
    ``proxy``: a proxy URL (``http://``, ``https://``, ``socks5://``,
    ``socks5h://``) or a ``wormhole.proxy.Proxy``; the Mailbox connection
    and Dilation's relay connections go through it (docs/proxy.md).
    """
    if not isinstance(appid, str):
        raise TypeError(f"appid must be a str, not {type(appid).__name__}")
    parse_relay_url(relay_url)  # raises RelayURLError now, not later
    if not isinstance(versions, dict):
        raise TypeError(f"versions must be a dict, not {type(versions).__name__}")
    if journal is not None and delegate is None:
        # Client API, "Wormhole Parameters": Deferreds cannot be checkpointed
        raise ValueError("a journal only works in Delegated mode: pass delegate= too")
    if journal is not None and (dilation or _enable_dilate):
        # Client API, "Serialization": a dilated wormhole cannot be serialized, so no
        # checkpoint could hold it
        raise ValueError("a journal only works with non-dilated wormholes: "
                         "drop dilation=True, or the journal (docs/journal.md)")
    proxy = _proxy_of(reactor, proxy, tor)
    timing = timing or DebugTiming()
    # 10 hex digits, as the reference client uses on the wire
    side = bytes_to_hexstr(os.urandom(5))
    # who wrote a --dump-timing bundle, and when the "connect" phase began
    timing.add("wormhole", side=side, appid=appid)
    journal = journal or ImmediateJournal()
    eq = _eventual_queue or EventualQueue(reactor)
    dilation = bool(dilation or _enable_dilate)
    dilation_options = {"side": _dilation_side} if _dilation_side else None

    def make_boss(events):
        return Boss(events, side, relay_url, appid, versions, client_version(), reactor, eq,
                    journal, tor, timing, dilation=dilation,
                    reconnect_delay=_reconnect_delay, reconnect_max_delay=_reconnect_max_delay,
                    endpoint_factory=_endpoint_factory, on_status_update=on_status_update,
                    dilation_options=dilation_options,
                    unread=UnreadBudget(_max_unread, _max_unread_bytes),
                    max_phases=_max_phases, proxy=proxy,
                    # punching binds our own Mailbox connection's port
                    nat=_nat_observer(reactor, relay_url, tor or proxy,
                                      _punch and _endpoint_factory is None))

    if delegate is not None:
        w = DelegatedWormhole(delegate, reactor, eq, stderr, welcome_handler, relay_url,
                              journal, make_boss)
    else:
        w = DeferredWormhole(reactor, eq, stderr, welcome_handler, relay_url, make_boss)
    w._boss.start()
    return w
