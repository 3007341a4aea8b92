"""``wormhole send --text``: the text as classic's text offer
(File-transfer protocol, "Sender"), whatever the peer speaks. It travels
in the mailbox, so it needs no Transit relay and no direct connection: a
text gets through wherever the rendezvous does, as with the reference.
(transfer-v2's control message would need a Dilation connection for one
line; ``share`` still sends texts that way, inside a session it opens
anyway.) The wormhole announces no transfer-v2, so the receiver answers
with classic's ``message_ack``."""
from twisted.internet import defer

from ..errors import TransferError
from ._announce import ConsumedNote, announce_code
from ._common import make_wormhole, run_and_close
from ._send_classic import send_text_on
from .ui.prompt import ask


@defer.inlineCallbacks
def text_to_send(reactor, cfg):
    """``--text``'s value, stdin's text (``--text -``), or a line the
    human types (neither WHAT nor --text)."""
    if cfg.text == "-":
        print("Reading text message from stdin..", file=cfg.stderr)
        # a long one (a LongText) goes as a stream (docs/cli.md "Streams")
        from ._stream_send import read_text
        return read_text(cfg)
    if cfg.text is not None:
        return cfg.text
    # the reference prompts on stdout
    try:
        text = yield ask(reactor, cfg, "Text to send: ")
    except EOFError:
        raise TransferError(
            "no text to send: standard input ended before a line was read") from None
    return text


@defer.inlineCallbacks
def send_text(reactor, cfg, text):
    """Send ``text``. Fires with True once it went, False if interrupted."""
    note = ConsumedNote(cfg.stdout)
    w = make_wormhole(reactor, cfg, "send", on_status_update=note.status_update)

    @defer.inlineCallbacks
    def announce_and_send():
        yield announce_code(cfg, w)
        yield send_text_on(reactor, cfg, w, text)
    return (yield run_and_close(reactor, cfg, w, announce_and_send))
