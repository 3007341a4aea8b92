"""One-shot helpers (the reference 0.24's ``wormhole.xfer_util``): send or
receive one text message, the way ``wormhole send --text`` does (the
File-transfer protocol's text "offer" and its "answer"), and close.

    code_d = Deferred()
    yield send(reactor, appid, relay_url, "hello", None, on_code=print)
    text = yield receive(reactor, appid, relay_url, "4-purple-sausages")

Either side may allocate the code (``code=None``) or use a given one;
``on_code(code)`` hears it either way. The wire messages are those of the
file-transfer protocol, so the other side may be the reference's helpers.
"""

import json

from twisted.internet.defer import ensureDeferred

from .errors import TransferError
from .tor_manager import get_tor
from .wormhole import create

__all__ = ["receive", "send"]


async def _open(reactor, appid, relay_url, code, use_tor, launch_tor, tor_control_port,
                on_code):
    tor = None
    if use_tor:
        tor = await get_tor(reactor, launch_tor, tor_control_port)
    w = create(appid, relay_url, reactor, tor=tor)
    if code is None:
        w.allocate_code()
        code = await w.get_code()
    else:
        w.set_code(code)
    if on_code is not None:
        on_code(code)
    return w


async def _close_after(w, outcome):
    """Close the wormhole, then hand back ``outcome`` (or raise it)."""
    try:
        await w.close()
    except Exception:
        if isinstance(outcome, Exception):
            raise outcome from None
        raise
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def _decode(plaintext):
    try:
        msg = json.loads(plaintext.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise TransferError(f"the peer sent something that is not JSON: {e}") from None
    if not isinstance(msg, dict):
        raise TransferError("the peer's message is not a JSON object")
    return msg


def receive(reactor, appid, relay_url, code, use_tor=False, launch_tor=False,
            tor_control_port=None, on_code=None):
    """A Deferred firing with the text the peer sent (then the wormhole
    is closed); TransferError if the peer offered anything else."""
    async def run():
        w = await _open(reactor, appid, relay_url, code, use_tor, launch_tor,
                        tor_control_port, on_code)
        try:
            msg = _decode(await w.get_message())
            offer = msg.get("offer")
            if not isinstance(offer, dict) or not isinstance(offer.get("message"), str):
                raise TransferError(f"the peer offered something other than a text "
                                    f"message: {sorted(msg)!r}")
            w.send_message(json.dumps({"answer": {"message_ack": "ok"}}).encode("utf-8"))
            outcome = offer["message"]
        except Exception as e:
            outcome = e
        return await _close_after(w, outcome)
    return ensureDeferred(run())


def send(reactor, appid, relay_url, data, code, use_tor=False, launch_tor=False,
         tor_control_port=None, on_code=None):
    """A Deferred firing with None once the peer acknowledged the text
    ``data`` (then the wormhole is closed); TransferError otherwise."""
    if not isinstance(data, str):
        raise TypeError(f"send() takes a str, not {type(data).__name__}")

    async def run():
        w = await _open(reactor, appid, relay_url, code, use_tor, launch_tor,
                        tor_control_port, on_code)
        try:
            w.send_message(json.dumps({"offer": {"message": data}}).encode("utf-8"))
            msg = _decode(await w.get_message())
            answer = msg.get("answer")
            if not isinstance(answer, dict) or answer.get("message_ack") != "ok":
                raise TransferError(f"the peer did not accept the message: {msg!r}"[:300])
            outcome = None
        except Exception as e:
            outcome = e
        return await _close_after(w, outcome)
    return ensureDeferred(run())
