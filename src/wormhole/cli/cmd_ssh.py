"""``wormhole ssh invite`` / ``wormhole ssh accept``: hand an SSH public
key to someone who will add it to their ``~/.ssh/authorized_keys``.

On the wire (settled by running the reference 0.24): the application id
is ``lothar.com/wormhole/ssh-add``; the inviter allocates the code and
waits; the accepter sends the public key file's text as a text offer
(``{"offer": {"message": KEYLINE}}``, File-transfer protocol, "Sender")
and the inviter answers ``message_ack``, as for any text. So ``accept``
is the text sender and ``invite`` the text recipient, with a check in
between: the text must be one public-key line (no newline, no
``authorized_keys`` options such as ``command="..."``) before anything
is appended.
"""
import base64
import os
import pwd
import re
import struct

from twisted.internet import defer

from ..errors import TransferError
from ..session import escape_text, give_up_after
from ..transfer import Receiver, parse_message, text_sender
from ..util import dict_to_bytes
from ._common import make_wormhole, run_and_close
from ._config import APPID
from .ui.prompt import ask

SSH_APPID = "lothar.com/wormhole/ssh-add"
NOT_A_KEY = "that is not an SSH public key"
# "TYPE BASE64 [COMMENT]": the line starts with the key type, so it can
# carry no options (command=, from=, ...) into authorized_keys
_KEY_LINE = re.compile(r"^(?P<type>ssh-[a-z0-9-]+(?:@[a-z0-9.-]+)?|ecdsa-sha2-[a-z0-9-]+|"
                       r"sk-[a-z0-9@.-]+) (?P<blob>[A-Za-z0-9+/]+={0,3})"
                       r"(?: (?P<comment>[^\r\n\x00]*))?$")


class PubkeyError(TransferError):
    """No usable public key (accept) or a bad one received (invite)."""


def parse_key(text):
    """(type, comment, line) of one public-key line, or PubkeyError."""
    line = text.strip() if isinstance(text, str) else ""
    m = _KEY_LINE.match(line)
    if m is None or "\n" in line or not _blob_names(m.group("blob"), m.group("type")):
        raise PubkeyError(f"{NOT_A_KEY}: {text[:80]!r}" if isinstance(text, str)
                          else NOT_A_KEY)
    return m.group("type"), (m.group("comment") or "").strip(), line


def _blob_names(blob, kind):
    """A key's base64 blob starts with its own type, length-prefixed."""
    try:
        raw = base64.b64decode(blob, validate=True)
    except ValueError:
        return False
    name = kind.encode("ascii")
    return raw[:4 + len(name)] == struct.pack(">I", len(name)) + name


def _appid(cfg):
    # --appid changes it; the text-or-file default is not meant for keys
    return SSH_APPID if cfg.appid == APPID else cfg.appid


# -- accept ---------------------------------------------------------------------
def _ssh_dir(home=None):
    return os.path.join(home or os.path.expanduser("~"), ".ssh")


@defer.inlineCallbacks
def find_public_key(reactor, cfg):
    """The key file to send: --key-file, else the only ``~/.ssh/*.pub``
    (with several, the human picks one)."""
    if cfg.key_file:
        path = os.path.expanduser(cfg.key_file)
    else:
        where = _ssh_dir()
        try:
            names = sorted(n for n in os.listdir(where) if n.endswith(".pub"))
        except OSError:
            names = []
        if not names:
            raise PubkeyError(f"No public keys in '{where}' (use --key-file)")
        if len(names) == 1:
            path = os.path.join(where, names[0])
        else:
            listing = "".join(f"  {i}: {n}\n" for i, n in enumerate(names))
            answer = yield ask(reactor, cfg,
                               f"Multiple public-keys found:\n{listing}Send which one?: ")
            try:
                path = os.path.join(where, names[int(answer.strip())])
            except (ValueError, IndexError):
                raise PubkeyError(f"no key numbered {answer.strip()!r}") from None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise PubkeyError(f"cannot read '{path}': {e}") from None
    kind, keyid, _ = parse_key(text)
    return kind, keyid, text


@defer.inlineCallbacks
def accept(reactor, cfg):
    """Send our public key to the inviter."""
    kind, keyid, text = yield find_public_key(reactor, cfg)
    print(f"Sending public key type='{kind}' keyid='{keyid}'", file=cfg.stdout, flush=True)
    if not cfg.yes:
        try:
            answer = yield ask(reactor, cfg, f"Really send public key '{keyid}' ? [y/N]: ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            raise TransferError("not sending the key (the answer was not yes)")
    cfg.appid = _appid(cfg)
    w = make_wormhole(reactor, cfg, "send")
    yield run_and_close(reactor, cfg, w, lambda: _accept_on(w, cfg, text))
    print("Key sent.", file=cfg.stderr, flush=True)


@defer.inlineCallbacks
def _accept_on(w, cfg, text):
    w.set_code(cfg.code)
    finished = defer.Deferred()
    sender = text_sender(w.send_message, finished.callback)
    sender.send_offer({"message": text})
    while not finished.called:
        body = yield w.get_message()
        sender.got_message(body)
    error = yield finished
    if error is not None:
        raise error


# -- invite ---------------------------------------------------------------------
def authorized_keys_path(user=None):
    if user:
        try:
            home = pwd.getpwnam(user).pw_dir
        except KeyError:
            raise PubkeyError(f"no such user: {user!r}") from None
    else:
        home = None
    return os.path.join(_ssh_dir(home), "authorized_keys")


def append_key(path, line):
    """Append one key line, creating ``~/.ssh`` (0700) and the file (0600)."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        if f.tell() > 0:
            with open(path, "rb") as r:
                r.seek(-1, os.SEEK_END)
                if r.read(1) != b"\n":
                    f.write("\n")
        f.write(line + "\n")


def _check_writable(path):
    """Fail before the code is even allocated if the key could not be
    written (the peer would be told "ok" for nothing)."""
    existing = path
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.access(existing, os.W_OK):
        raise PubkeyError(f"cannot write '{path}' ('{existing}' is not writable)")


@defer.inlineCallbacks
def invite(reactor, cfg):
    """Allocate a code, wait for a key, append it to authorized_keys."""
    path = authorized_keys_path(cfg.ssh_user)
    _check_writable(path)
    if not os.path.exists(path):
        print(f"Note: '{path}' not found; will be created", file=cfg.stderr, flush=True)
    cfg.appid = _appid(cfg)
    w = make_wormhole(reactor, cfg, "receive")
    yield run_and_close(reactor, cfg, w, lambda: _invite_on(reactor, w, cfg, path))


@defer.inlineCallbacks
def _invite_on(reactor, w, cfg, path):
    w.allocate_code(cfg.code_length)
    code = yield w.get_code()
    print(f"Now tell the other user to run:\n\nwormhole ssh accept {code}\n",
          file=cfg.stderr, flush=True)
    finished = defer.Deferred()
    keys = []

    def declined(kind, offer):
        receiver.decline(TransferError(f"the peer offered a {kind}, not an SSH key"))
    receiver = Receiver(w.send_message, keys.append, lambda hints: None, declined,
                        finished.callback)
    # the other user runs `accept` when they like; once their side has
    # shown up, its messages are bounded like `receive`'s (docs/security.md)
    yield w.get_unverified_key()
    while not finished.called:
        body = yield give_up_after(w.get_message(), reactor, cfg.peer_timeout,
                                   "the peer's key")
        # validate before the machine: a text that is not one key line is
        # refused with an error, never acknowledged
        msg = parse_message(body)
        offer = msg.get("offer") if isinstance(msg, dict) and "error" not in msg else None
        if isinstance(offer, dict) and isinstance(offer.get("message"), str):
            try:
                parse_key(offer["message"])
            except PubkeyError:
                w.send_message(dict_to_bytes({"error": NOT_A_KEY}))
                raise
        receiver.got_message(body)
    error = yield finished
    if error is not None:
        raise error
    kind, keyid, line = parse_key(keys[0])
    append_key(path, line)
    # the key's comment is the peer's text
    print(f"Appended key type='{kind}' id='{escape_text(keyid)}' to '{path}'",
          file=cfg.stderr, flush=True)
