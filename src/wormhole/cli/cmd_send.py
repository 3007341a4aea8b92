"""``wormhole send``: the sender (File-transfer protocol, "Sender"): a
text through the mailbox, or a file or directory through Transit
(File-transfer protocol, "Transit"); over transfer-v2 when the peer has
it (docs/transfer-v2.md "The CLI").

What goes where was settled by running the reference 0.24 (docs/cli.md):
progress and instructions on stderr; on stdout only what a script may
read -- the "Text to send: " prompt, the verifier question, and the note
that the code was consumed.
"""
from twisted.internet import defer

from ._announce import CONSUMED_NOTE
from ._send_classic import send_path
from ._send_paths import send_paths
from ._send_text import send_text, text_to_send
from .ui.wording import TEXT_SENT, sending_text

__all__ = ["CONSUMED_NOTE", "send"]


@defer.inlineCallbacks
def send(reactor, cfg):
    """Send ``cfg.what`` (a file or directory), or ``cfg.text`` (or stdin,
    or a prompted line) to the peer."""
    if cfg.what == "-" and cfg.text is None:
        # standard input as a stream (docs/cli.md "Streams")
        from ._stream_send import send_stream
        yield send_stream(reactor, cfg)
        return
    if cfg.what is not None and cfg.text is None:
        if cfg.classic:
            yield send_path(reactor, cfg)
        else:  # transfer-v2 when the peer has it, else classic
            yield send_paths(reactor, cfg)
        return
    text = yield text_to_send(reactor, cfg)
    if not isinstance(text, str):  # a LongText: more than the mailbox carries
        from ._stream_send import send_stream
        yield send_stream(reactor, cfg, text)
        return
    print(sending_text(text), file=cfg.stderr)
    if (yield send_text(reactor, cfg, text)):
        print(TEXT_SENT, file=cfg.stderr)
