"""What one ``wormhole`` invocation was asked to do, and with what.

The click layer fills a ``Config``; the commands read it. Everything a
command touches outside itself is here too (streams, ``create``, how a
line is read from the human), so tests run commands with fakes and no
terminal.
"""
import sys

import attrs

from ..timing import DebugTiming
from ._collector import Collector
from ._interrupt import Interruption
from .public_relay import RENDEZVOUS_RELAY, TRANSIT_RELAY
from .ui.screen import Screen

APPID = "lothar.com/wormhole/text-or-file-xfer"


def _default_create(*args, **kwargs):
    from .. import create
    return create(*args, **kwargs)


def _terminal_lines():
    from .ui.prompt import TerminalLines
    return TerminalLines()


def _default_free_space(path):
    from ..session import default_free_space
    return default_free_space(path)


def _default_transit_sender(*args, **kwargs):
    from ..transit import TransitSender
    return TransitSender(*args, **kwargs)


def _default_get_tor(*args, **kwargs):
    from ..tor_manager import get_tor
    return get_tor(*args, **kwargs)


def _default_transit_receiver(*args, **kwargs):
    from ..transit import TransitReceiver
    return TransitReceiver(*args, **kwargs)


@attrs.define
class Config:
    """(``attrs``' repr shows a proxy URL redacted: ``ProxyURL`` never
    shows its password.)"""
    appid: str = APPID
    relay_url: str = RENDEZVOUS_RELAY
    transit_helper: str = TRANSIT_RELAY
    dump_timing: str = None
    punch: bool = True               # --no-punch / $WORMHOLE_NO_PUNCH: off
    debug_state: str = None          # space-separated machine letters
    # send and receive
    code: str = None
    code_length: int = 2
    verify: bool = False
    hide_progress: bool = False
    zeromode: bool = False
    listen: bool = True
    tor: bool = False                 # --tor (implied by the next two)
    launch_tor: bool = False
    tor_control_port: str = None
    get_tor: object = _default_get_tor  # get_tor(reactor, ...) -> Deferred(TorManager)
    tor_manager: object = None        # what get_tor gave, once the command runs
    # --proxy & co (docs/proxy.md), settled by _proxy_options.settle
    proxy_url: object = None          # a wormhole.proxy.ProxyURL, or None
    no_proxy: object = None           # a wormhole.proxy.NoProxy ($NO_PROXY)
    proxy_direct: bool = False        # --proxy-direct
    proxy: object = None              # the wormhole.proxy.Proxy, made once
    # send
    text: str = None
    what: str = None
    paths: tuple = ()                 # every PATH given (transfer-v2 sends them all)
    classic: bool = False             # --classic: never transfer-v2
    qr: bool = True
    ignore_unsendable_files: bool = False
    lan: bool = False                 # --lan (send, share, receive): cli/_lan.py
    # receive
    only_text: bool = False
    accept_file: bool = False
    output_file: str = None
    allocate: bool = False
    # receive --discard-partial: remove what interrupted receives kept (_kept)
    discard_partial: bool = False
    # seconds of silence from the sender before we give up, once it has
    # shown up, and (send, share) from the peer in a transfer-v2 offer
    # (docs/security.md "Timeouts on the receive side"); None waits forever
    peer_timeout: float = 300.0
    # ssh invite / accept
    ssh_user: str = None
    key_file: str = None
    yes: bool = False
    # the outside world
    stdin: object = attrs.field(factory=lambda: sys.stdin)
    stdout: object = attrs.field(factory=lambda: sys.stdout)
    stderr: object = attrs.field(factory=lambda: sys.stderr)
    # what the terminal shows while a human is asked (ui.screen)
    screen: object = attrs.field(factory=Screen)
    create: object = _default_create
    read_line: object = None          # read_line(reactor, prompt) -> Deferred(str)
    # where the answers come from without one: stdin, one reader (ui.prompt)
    terminal_lines: object = attrs.field(factory=_terminal_lines)
    # made with the Config, so that everything the command builds (Transit
    # before the wormhole, too) records into the one --dump-timing bundle
    timing: object = attrs.field(factory=DebugTiming)
    cwd: str = None                   # where received files go (None: os.getcwd())
    tmpdir: str = None                # where a sent directory is zipped (None: $TMPDIR)
    free_space: object = _default_free_space      # free_space(dir) -> bytes
    transit_sender: object = _default_transit_sender
    transit_receiver: object = _default_transit_receiver
    # the signal that stopped the command (_interrupt), and the garbage
    # collector's schedule over the process's life (_collector)
    interruption: object = attrs.field(factory=Interruption)
    collector: object = attrs.field(factory=Collector)
