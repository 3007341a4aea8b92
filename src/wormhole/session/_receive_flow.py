"""The course of a receiving transfer-v2 session as a machine
(docs/api.md "Sessions"; docs/transfer-v2.md "The CLI"; diagram:
docs/state-machines/wormhole.session._receive_flow.ReceiveFlow.m.svg):
``Transfer.receive`` and ``wormhole receive`` run it.

The sender offers at once, one offer after the other, then closes. While
no offer is under way the receiver gives up after ``peer_timeout``
seconds without a new one (the CLI's ``--peer-timeout``, docs/security.md
"Timeouts on the receive side"): the session is closed, and
``silence_error()`` answers why. ``Share`` and ``wormhole share`` never
call ``expect_offers``: their session lasts until the application (the
human) ends it, so its offers come and go in the first state, with no
bound on the wait.
"""
from automat import MethodicalMachine

from .. import trace_hook
from .._inactivity import Watchdog, silence


def _only(outputs):
    """The one output's value (an input that answers a question)."""
    return list(outputs)[0]


class ReceiveFlow:
    m = MethodicalMachine()
    set_trace = trace_hook(m)

    def __init__(self, clock, peer_timeout, hint=""):
        """``hint`` ends the silence's message (the CLI names its option)."""
        self._clock = clock
        self._peer_timeout = peer_timeout  # seconds, or None: no bound
        self._hint = hint
        self._session = None  # the TransferSession, from expect_offers
        self._watchdog = None  # between offers only
        self._under_way = set()  # offers asked about or being received

    # -- public inputs, routed before the machine -----------------------------
    def expect_offers(self, session):
        """``wormhole receive``: from now on, bound the wait for each next
        offer; ``session`` is closed when the sender's silence outlasts it."""
        if self._under_way:
            self._expect_busy(session)
        else:
            self._expect_idle(session)

    def offer_came(self, incoming):
        self._under_way.add(incoming)
        self._offer_came()

    def offer_over(self, incoming):
        """``incoming`` is done (received, refused or failed)."""
        self._under_way.discard(incoming)
        if not self._under_way:
            self._last_offer_over()

    @m.state(initial=True)
    def S0_unbounded(self): pass  # noqa

    @m.state()
    def S1_waiting(self): pass  # noqa

    @m.state()
    def S2_busy(self): pass  # noqa

    @m.state()
    def S3_gave_up(self): pass  # noqa

    @m.state()
    def S4_over(self): pass  # noqa

    @m.input()
    def _expect_idle(self, session): pass  # noqa

    @m.input()
    def _expect_busy(self, session): pass  # noqa

    @m.input()
    def _offer_came(self): pass  # noqa

    @m.input()
    def _last_offer_over(self): pass  # noqa

    @m.input()
    def _silence_outlasted(self): pass  # noqa

    @m.input()
    def session_over(self):
        """The session ended (whoever closed it): no more offers to wait for."""

    @m.input()
    def silence_error(self):
        """The PeerTimeout that ended the session, or None."""

    @m.output()
    def _keep_session(self, session):
        self._session = session

    @m.output()
    def _watch(self):
        self._watchdog = Watchdog(self._clock, self._peer_timeout, self._silence_outlasted)

    @m.output()
    def _stop_watching(self):
        self._watchdog.stop()
        self._watchdog = None

    @m.output()
    def _close_session(self):
        self._watchdog = None  # it expired
        self._session.close()

    @m.output()
    def _forget_session(self):
        self._session = None

    @m.output()
    def _no_error(self):
        return None

    @m.output()
    def _the_silence(self):
        return silence("the sender's next offer", self._peer_timeout, self._hint)

    S0_unbounded.upon(_expect_idle, enter=S1_waiting, outputs=[_keep_session, _watch])
    S0_unbounded.upon(_expect_busy, enter=S2_busy, outputs=[_keep_session])
    S0_unbounded.upon(_offer_came, enter=S0_unbounded, outputs=[])
    S0_unbounded.upon(_last_offer_over, enter=S0_unbounded, outputs=[])
    S0_unbounded.upon(session_over, enter=S4_over, outputs=[])
    S0_unbounded.upon(silence_error, enter=S0_unbounded, outputs=[_no_error], collector=_only)
    S1_waiting.upon(_offer_came, enter=S2_busy, outputs=[_stop_watching])
    S1_waiting.upon(_silence_outlasted, enter=S3_gave_up, outputs=[_close_session])
    S1_waiting.upon(session_over, enter=S4_over, outputs=[_stop_watching, _forget_session])
    S1_waiting.upon(silence_error, enter=S1_waiting, outputs=[_no_error], collector=_only)
    S2_busy.upon(_offer_came, enter=S2_busy, outputs=[])
    S2_busy.upon(_last_offer_over, enter=S1_waiting, outputs=[_watch])
    S2_busy.upon(session_over, enter=S4_over, outputs=[_forget_session])
    S2_busy.upon(silence_error, enter=S2_busy, outputs=[_no_error], collector=_only)
    S3_gave_up.upon(_offer_came, enter=S3_gave_up, outputs=[])
    S3_gave_up.upon(_last_offer_over, enter=S3_gave_up, outputs=[])
    S3_gave_up.upon(session_over, enter=S3_gave_up, outputs=[_forget_session])
    S3_gave_up.upon(silence_error, enter=S3_gave_up, outputs=[_the_silence], collector=_only)
    S4_over.upon(_offer_came, enter=S4_over, outputs=[])
    S4_over.upon(_last_offer_over, enter=S4_over, outputs=[])
    S4_over.upon(session_over, enter=S4_over, outputs=[])
    S4_over.upon(silence_error, enter=S4_over, outputs=[_no_error], collector=_only)
