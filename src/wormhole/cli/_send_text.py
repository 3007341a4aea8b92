"""``wormhole send --text``: the text as transfer-v2's control message
(spec "Control Channel Messages") when the peer has it, classic's text
offer (spec 004 9.1) otherwise."""
from twisted.internet import defer

from ..errors import TransferError
from ._announce import ConsumedNote, announce_code
from ._common import make_wormhole, run_and_close
from ._prompt import ask
from ._send_classic import send_text_on
from ._sending import send_v2_or_classic


@defer.inlineCallbacks
def text_to_send(reactor, cfg):
    """``--text``'s value, stdin's text (``--text -``), or a line the
    human types (neither WHAT nor --text)."""
    if cfg.text == "-":
        print("Reading text message from stdin..", file=cfg.stderr)
        return cfg.stdin.read()
    if cfg.text is not None:
        return cfg.text
    # the reference prompts on stdout
    try:
        text = yield ask(reactor, cfg, "Text to send: ")
    except EOFError:
        raise TransferError("no text to send: standard input ended before a line was read")
    return text


@defer.inlineCallbacks
def send_text(reactor, cfg, text):
    """Send ``text``. Fires with True once it went, False if interrupted."""
    if cfg.classic:
        note = ConsumedNote(cfg.stdout)
        w = make_wormhole(reactor, cfg, "send", on_status_update=note.status_update)

        @defer.inlineCallbacks
        def classic_only():
            yield announce_code(cfg, w)
            yield send_text_on(reactor, cfg, w, text)
        return (yield run_and_close(reactor, w, classic_only))

    @defer.inlineCallbacks
    def over_v2(session, path):
        try:
            session.send_text(text)
        finally:
            yield session.close()
    return (yield send_v2_or_classic(
        reactor, cfg, classic=lambda cfg, w: send_text_on(reactor, cfg, w, text),
        over_v2=over_v2))
