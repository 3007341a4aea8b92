"""The ``wormhole`` click group: options in the places users of the
reference expect them (Command line, "CLI tool"; checked against
``wormhole --help`` of the reference 0.24), then one command run on the
reactor.

Each command is ``command(reactor, cfg) -> Deferred``; ``_dispatch``
runs it under ``task.react``, turns every expected error into one
readable line on stderr (no traceback) and its exit status (both
decided in ``_failures``), and writes
``--dump-timing``. Tests replace the dispatcher through click's ``obj``.
"""
import os
import sys

import click
from click.core import ParameterSource
from twisted.internet import defer, task

from .. import IMPLEMENTATION, __version__
from ..session import escape_text
from . import _collector
from ._config import APPID, Config

# what a failure is called and its exit status (docs/cli.md "Exit status",
# "Messages") are decided in _failures
from ._failures import EXIT_DECLINED, EXIT_FAILED, describe_error, exit_status  # noqa: F401
from ._proxy_options import proxy_options
from .public_relay import RENDEZVOUS_RELAY, TRANSIT_RELAY

# the letters debug_set_trace knows (Client API: Boss, Nameplate, Mailbox,
# Send, Order, Key, Receive, RendezvousConnector, Lister, Code, Input,
# Allocator, Terminator)
MACHINES = ("B", "N", "M", "S", "O", "K", "R", "RC", "L", "C", "I", "A", "T")


def _dispatch(command, cfg):
    """Run ``command`` on the real reactor; never returns. The terminal is
    left as it was found on every way out (``ui.terminal``)."""
    from twisted.internet import reactor

    from .ui.terminal import TerminalState
    # after the reactor's own signal handlers (installed when it runs)
    reactor.callWhenRunning(cfg.interruption.install)
    reactor.callWhenRunning(cfg.collector.resume)
    with TerminalState(sys.stdin), cfg.screen.command(cfg.stderr):
        try:
            task.react(_main, (command, cfg))
        except SystemExit as e:
            # stopped by a signal: not 0 (docs/cli.md "Exit status")
            if not e.code and cfg.interruption.status is not None:
                raise SystemExit(cfg.interruption.status) from None
            raise
        finally:
            cfg.collector.leave()


@defer.inlineCallbacks
def _with_tor(reactor, command, cfg):
    """Reach Tor first (--tor), run the command, then stop a Tor we
    launched: after the command, so Transit has closed cleanly before."""
    if cfg.launch_tor and cfg.tor_manager is None:
        # txtorcon logs the end of the Tor we launch as an error; Twisted
        # would print it as "Unhandled Error" after a good transfer
        from twisted.logger import globalLogBeginner

        from ..tor_manager import error_observer_without_tor_exit
        globalLogBeginner.beginLoggingTo([error_observer_without_tor_exit(cfg.stderr)],
                                         discardBuffer=True, redirectStandardIO=False)
    if cfg.tor and cfg.tor_manager is None:
        from ..tor_manager import TorError
        try:
            cfg.tor_manager = yield cfg.get_tor(
                reactor, launch_tor=cfg.launch_tor, tor_control_port=cfg.tor_control_port,
                timing=cfg.timing, stderr=cfg.stderr)
        except TorError as e:
            # one line and exit 1, before anything else happened
            print(f"ERROR: {e}", file=cfg.stderr, flush=True)
            raise SystemExit(1) from None
    try:
        return (yield defer.maybeDeferred(command, reactor, cfg))
    finally:
        if cfg.tor_manager is not None:
            yield cfg.tor_manager.quit()


def _checked_then_run(reactor, command, cfg):
    # a malformed --relay-url is refused before the command says anything
    # (it printed "Sending text message" first; docs/cli.md "Messages");
    # imported here, as the client is, so --help loads no autobahn
    from .. import parse_relay_url
    parse_relay_url(cfg.relay_url)
    if cfg.code:
        # so is a malformed code given on the command line (send --code,
        # receive CODE); a code typed at the prompt is checked as typed
        from ..wormhole import validate_code
        validate_code(cfg.code)
    return _with_tor(reactor, command, cfg)


def _main(reactor, command, cfg):
    d = defer.maybeDeferred(_checked_then_run, reactor, command, cfg)

    def write_timing():
        if cfg.dump_timing and cfg.timing is not None:
            cfg.timing.write(cfg.dump_timing, cfg.stderr)

    def succeeded(result):
        write_timing()
        return result

    def failed(f):
        write_timing()
        if f.check(SystemExit):
            return f
        message = describe_error(f.value, cfg)
        if message is None:
            # not an error users can cause: a bug, show where it happened
            f.printTraceback(file=cfg.stderr)
            message = f"ERROR: {escape_text(f.getErrorMessage())}"
        cfg.screen.abandon(cfg.stderr)  # a question still open: end its line first
        print(message, file=cfg.stderr, flush=True)
        raise SystemExit(exit_status(f.value))
    d.addCallbacks(succeeded, failed)
    return d


def _run(ctx, command, cfg):
    from ._proxy_options import settle
    settle(ctx, cfg)  # --proxy and the environment's (docs/proxy.md)
    dispatch = (ctx.obj or {}).get("dispatch", _dispatch)
    if cfg.lan:
        command = _on_the_lan(command, cfg, ctx.info_name)
    return dispatch(command, cfg)


def _lan_option(f):
    """``--lan`` (send, share, receive): rendezvous on the local network
    by mDNS, no server anywhere (docs/lan.md); ``cfg.lan``."""
    def chosen(ctx, param, value):
        if value:
            ctx.find_root().obj["config"].lan = True
    return click.option("--lan", is_flag=True, expose_value=False, callback=chosen,
                        help="find the peer on this local network by mDNS: no Mailbox "
                             "server or relay anywhere (needs the 'lan' extra)")(f)


def _on_the_lan(command, cfg, role):
    if cfg.tor or cfg.zeromode or cfg.allocate:
        raise click.UsageError("--lan cannot be used with --tor, -0 or --allocate")
    from ._lan import with_lan
    return lambda reactor, cfg: with_lan(reactor, command, cfg, role)


# -- the click group -----------------------------------------------------------
def _debug_state(ctx, param, value):
    """``--debug-state`` takes a comma-separated list of machine letters,
    or nothing for all of them; debug_set_trace wants them space-separated."""
    if value is None:
        return None
    if value.strip().lower() == "all":
        value = ",".join(MACHINES)
    letters = [v.strip() for v in value.replace(" ", ",").split(",") if v.strip()]
    unknown = [v for v in letters if v not in MACHINES]
    if unknown:
        raise click.BadParameter(
            f"unknown machine(s) {','.join(unknown)}; valid: {','.join(MACHINES)}")
    return " ".join(letters)


_DEBUG_STATE_HELP = ("Debug state-machine transitions (printed on stdout). A "
                     "comma-separated list of machines, or 'all'. Valid machines: "
                     + ",".join(MACHINES))
# on send/receive the value may be left out (all machines), as with the
# reference; before the command it is required, or `wormhole --debug-state
# send` would read "send" as the list of machines
_debug_state_option = click.option(
    "--debug-state", default=None, is_flag=False, flag_value="all",
    metavar="MACHINES", callback=_debug_state,
    help=_DEBUG_STATE_HELP + " (all of them if no value is given)")
_top_debug_state_option = click.option(
    "--debug-state", default=None, metavar="MACHINES", callback=_debug_state,
    help=_DEBUG_STATE_HELP)


class _AliasedGroup(click.Group):
    """``tx``/``rx`` are ``send``/``receive``."""
    ALIASES = {"tx": "send", "rx": "receive"}

    def main(self, args=None, **kwargs):
        # run as the program, on the command line's arguments (the
        # console script, python -m wormhole): the collector waits for the
        # reactor (_collector); the command's Config gets it
        collector = _collector.Collector(program=args is None)
        obj = kwargs.setdefault("obj", {})
        obj.setdefault("collector", collector)
        return super().main(args, **kwargs)

    def get_command(self, ctx, name):
        return super().get_command(ctx, self.ALIASES.get(name, name))

    def resolve_command(self, ctx, args):
        name, cmd, rest = super().resolve_command(ctx, args)
        return cmd.name if cmd else name, cmd, rest


@click.group(cls=_AliasedGroup)
@click.option("--appid", default=APPID, metavar="APPID", help="appid to use")
@click.option("--relay-url", default=RENDEZVOUS_RELAY, envvar="WORMHOLE_RELAY_URL",
              metavar="URL", show_envvar=True, help="rendezvous relay to use")
@click.option("--transit-helper", default=TRANSIT_RELAY, envvar="WORMHOLE_TRANSIT_HELPER",
              metavar="tcp:HOST:PORT|ws://URL", show_envvar=True,
              help="transit relay to use: tcp:HOST:PORT, a ws:// or wss:// URL, "
                   "or several separated by commas")
@click.option("--dump-timing", type=click.Path(dir_okay=False), metavar="FILE.json",
              help="(debug) write timing data to file")
@click.option("--no-punch", is_flag=True, envvar="WORMHOLE_NO_PUNCH", show_envvar=True,
              help="no NAT hole punching: advertise only local addresses "
                   "(docs/transit.md)")
@click.option("--listen-port", type=click.IntRange(1, 65535), metavar="PORT",
              envvar="WORMHOLE_LISTEN_PORT", show_envvar=True,
              help="listen for direct connections on this TCP port (e.g. one "
                   "forwarded on your router) and offer it at your outside address")
@_top_debug_state_option
@proxy_options
@click.version_option(version=__version__, prog_name="wormhole",
                      message=f"%(prog)s %(version)s ({IMPLEMENTATION})")
@click.pass_context
def wormhole(ctx, appid, relay_url, transit_helper, dump_timing, no_punch, listen_port,
             debug_state):
    """Create a Magic Wormhole and communicate through it.

    Wormholes are created by speaking the same magic CODE in two different
    places at the same time. Wormholes are secure against anyone who
    doesn't use the same code.
    """
    # autobahn's "NVX" UTF-8 validator and XOR masker are compiled by cffi
    # at import time, parsing their C declarations with pycparser: ~0.05
    # CPU-s of every CLI start. The Mailbox connection carries a few small
    # JSON frames, for which autobahn's pure-Python versions are just as
    # good. Set when the command runs (not when this module is imported:
    # no import-time side effects), before the commands import the client;
    # AUTOBAHN_USE_NVX=1 in the environment still wins.
    os.environ.setdefault("AUTOBAHN_USE_NVX", "0")
    if listen_port is not None:
        # read by Transit and Dilation alike (wormhole._transit._addresses)
        os.environ["WORMHOLE_LISTEN_PORT"] = str(listen_port)
    ctx.ensure_object(dict)
    # --debug-state is also accepted here, before the command; the
    # reference has it on send/receive, where it overrides this one
    ctx.obj["config"] = Config(appid=appid, relay_url=relay_url,
                               transit_helper=transit_helper, dump_timing=dump_timing,
                               debug_state=debug_state, punch=not no_punch)
    if "collector" in ctx.obj:
        ctx.obj["config"].collector = ctx.obj["collector"]


def _tor_options(f):
    for option in reversed([
            click.option("--tor", is_flag=True, help="use Tor when connecting"),
            click.option("--launch-tor", is_flag=True,
                         help="launch Tor, rather than use existing control/socks port"),
            click.option("--tor-control-port", default=None, metavar="ENDPOINT",
                         help="endpoint descriptor for Tor control port")]):
        f = option(f)
    return proxy_options(f)


# the reference says "(in bytes/words)": a code is counted in words
CODE_LENGTH_HELP = "number of words in an allocated code"
# --verify: the sender (and each side of share) asks its human; the
# receiver only shows the verifier (docs/cli.md "Options")
VERIFY_ASKS = "display verification string (and wait for approval)"
VERIFY_SHOWS = "display verification string (the sender asks for approval)"


def _options_without_tor(verify_help=VERIFY_ASKS):
    """Options every transfer command takes, in the reference's order."""
    options = [
        click.option("-0", "zeromode", is_flag=True, help="enable no-code anything-goes mode"),
        click.option("-c", "--code-length", default=2, metavar="NUMWORDS",
                     type=click.IntRange(min=1), help=CODE_LENGTH_HELP),
        click.option("-v", "--verify", is_flag=True, help=verify_help),
        click.option("--hide-progress", is_flag=True, help="suppress progress-bar display"),
        click.option("--listen/--no-listen", default=True,
                     help="--no-listen: open no port for direct connections and offer "
                          "no address of ours (the relay, or the peer's addresses, only)"),
    ]

    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f
    return decorate


def _common_options(verify_help=VERIFY_ASKS):
    """Options send and receive take, in the reference's order: the
    transfer options, then Tor's ('wormhole share' has no Tor: transfer-v2
    would listen and dial outside it)."""
    return lambda f: _options_without_tor(verify_help)(_tor_options(f))


def _fill(cfg, zeromode, code_length, verify, hide_progress, listen, tor, launch_tor,
          tor_control_port, debug_state, code):
    if launch_tor and tor_control_port is not None:
        raise click.UsageError("--launch-tor and --tor-control-port= are mutually exclusive")
    # Tor support, "Other Ways To Reach Tor"; either Tor option means --tor
    # (the reference ignores them without --tor, which surprises more than
    # it helps)
    cfg.tor = bool(tor or launch_tor or tor_control_port is not None)
    cfg.launch_tor = launch_tor
    cfg.tor_control_port = tor_control_port
    if zeromode and code:
        raise click.UsageError("-0 and a code cannot be used together")
    cfg.zeromode = zeromode
    cfg.code_length = code_length
    cfg.verify = verify
    cfg.hide_progress = hide_progress
    cfg.listen = listen
    if debug_state is not None:
        cfg.debug_state = debug_state
    cfg.code = code


# transfer-v2 rides on Dilation, which has no Tor support: its direct
# hints and dials would bypass Tor (docs/transfer-v2.md "The CLI")
NO_V2_OVER_TOR = ("transfer-v2 (several paths, --transfer-v2) does not "
                  "go through Tor yet; with --tor, send one file or directory (classic)")


# --json for the transfer commands (docs/cli.md "JSON lines")
_json_option = click.option(
    "--json", "json_lines", is_flag=True,
    help="Write the transfer's events as JSON lines on stdout (schema: "
         "docs/json-lines.schema.json); decisions (and share's offers) are read as JSON lines "
         "on stdin.")


def _peer_timeout_option(help):
    """``--peer-timeout``: the silence after which we give up on the peer
    (docs/security.md, "Timeouts on the receive side")."""
    return click.option("--peer-timeout", default=300.0, metavar="SECONDS",
                        type=click.FloatRange(min=0, min_open=True),
                        envvar="WORMHOLE_PEER_TIMEOUT", show_envvar=True, show_default=True,
                        help=help)


@wormhole.command()
@_common_options()
@click.option("--code", metavar="CODE", help="human-generated code phrase")
@click.option("--text", metavar="MESSAGE",
              help="text message to send, instead of a file. Use '-' to read from stdin.")
@click.option("--ignore-unsendable-files", is_flag=True,
              help="skip, with a warning, what cannot be sent in a directory (else "
                   "the send stops before a code is made)")
@_debug_state_option
@click.option("--qr/--no-qr", default=True, envvar="WORMHOLE_QR", show_envvar=True,
              help="Show the code as a QR code (a wormhole-transfer: URI).")
@click.option("--transfer-v2", "transfer_v2", is_flag=True,
              help="Use Dilated File Transfer when the receiver speaks it (the default; "
                   "kept for scripts): otherwise the classic protocol is used.")
@click.option("--classic", is_flag=True,
              help="Use the classic protocol even when the receiver speaks transfer-v2 "
                   "(one file, directory or text).")
@_peer_timeout_option("transfer-v2: give up on an offer when the receiver, once it "
                      "accepted, takes or acknowledges nothing for this long.")
@_json_option
@click.argument("what", nargs=-1, metavar="[PATH]...")
@_lan_option
@click.pass_context
def send(ctx, zeromode, code_length, verify, hide_progress, listen, tor, launch_tor,
         tor_control_port, code, text, ignore_unsendable_files, debug_state, qr,
         transfer_v2, classic, peer_timeout, json_lines, what):
    """Send a text message, file, or directory"""
    from . import cmd_send
    cfg = ctx.obj["config"]
    _fill(cfg, zeromode, code_length, verify, hide_progress, listen, tor, launch_tor,
          tor_control_port, debug_state, code)
    cfg.text = text
    if text is not None and what:
        # the reference sends the text and ignores the paths, unsaid
        raise click.UsageError("--text sends a text message: give no PATH with it")
    if len(what) > 1 and classic:
        raise click.UsageError("--classic sends one file or directory per code")
    if transfer_v2 and classic:
        raise click.UsageError("--transfer-v2 and --classic exclude each other")
    if "-" in what and (len(what) > 1 or classic or cfg.tor or json_lines or verify):
        # (a file named "-" is ./-); --verify would ask on the stream's input
        raise click.UsageError("- sends standard input as a stream, alone and over "
                               "transfer-v2 (not with --classic, --tor, --json, --verify "
                               "or other paths)")
    cfg.what = what[0] if what else None
    cfg.paths = what
    if cfg.tor and (transfer_v2 or len(what) > 1):
        raise click.UsageError(NO_V2_OVER_TOR)
    # transfer-v2 whenever the peer speaks it (docs/transfer-v2.md "The
    # CLI"); never with --tor: Dilation would listen and dial outside Tor
    cfg.classic = classic or cfg.tor
    cfg.peer_timeout = peer_timeout
    cfg.qr = qr
    cfg.ignore_unsendable_files = ignore_unsendable_files
    if json_lines:
        from . import _json_mode
        return _run(ctx, _json_mode.send, cfg)
    return _run(ctx, cmd_send.send, cfg)


def _complete_code(ctx, param, incomplete):
    """The shell's <Tab> on receive's CODE (docs/cli.md, "Shell completion")."""
    from ._completion import complete_code
    top = ctx.find_root().params
    return complete_code(top.get("appid") or APPID, top.get("relay_url") or RENDEZVOUS_RELAY,
                         incomplete)


@wormhole.command()
@_common_options(VERIFY_SHOWS)
@click.option("-t", "--only-text", is_flag=True,
              help="refuse file transfers, only accept text transfers")
@click.option("--accept-file", "--yes", "accept_file", is_flag=True,
              envvar="WORMHOLE_ACCEPT_FILE", show_envvar=True,
              help="accept file transfer without asking for confirmation")
@click.option("-o", "--output-file", default=None, metavar="FILENAME|DIRNAME",
              help="The file or directory to create, overriding the name suggested "
                   "by the sender.")
@click.option("--stdout", "to_stdout", is_flag=True,
              help="Write a stream (wormhole send -) to standard output, as it comes "
                   "(the same as -o -).")
@click.option("-a", "--allocate", is_flag=True,
              help="Allocate a fresh code (do not prompt for one)")
@_peer_timeout_option("Give up when the sender, once it has shown up, sends nothing for "
                      "this long (its offer, the file's bytes).")
@_debug_state_option
@click.option("--classic", is_flag=True,
              help="use the classic protocol even when the peer speaks transfer-v2")
@click.option("--discard-partial", is_flag=True,
              help="remove what interrupted receives kept in this folder (or -o DIR) "
                   "to resume later, and receive nothing")
@_json_option
# nargs=-1 only to explain why several words are refused: one CODE
@click.argument("code", nargs=-1, metavar="[CODE]", shell_complete=_complete_code)
@_lan_option
@click.pass_context
def receive(ctx, zeromode, code_length, verify, hide_progress, listen, tor, launch_tor,
            tor_control_port, only_text, accept_file, output_file, to_stdout, allocate,
            peer_timeout, debug_state, classic, discard_partial, json_lines, code):
    """Receive a text message, file, or directory (from 'wormhole send')"""
    from . import cmd_receive
    if len(code) > 1:
        raise click.UsageError(
            f"give the code as one argument (words joined by hyphens), not {len(code)}: "
            f"{' '.join(code)}")
    if discard_partial and (code or allocate):
        raise click.UsageError("--discard-partial receives nothing: give no code "
                               "and no --allocate")
    # the reference refuses these two as well: either would be ignored
    if code and allocate:
        raise click.UsageError("--allocate makes a new code: give no CODE with it")
    if zeromode and allocate:
        raise click.UsageError("-0 and --allocate cannot be used together")
    given = ctx.get_parameter_source("code_length") is not ParameterSource.DEFAULT
    if given and not allocate:
        raise click.UsageError("-c/--code-length counts the words of a code made with "
                               "--allocate: use them together")
    cfg = ctx.obj["config"]
    code = _code_of_uri(cfg, code[0]) if code else None
    _fill(cfg, zeromode, code_length, verify, hide_progress, listen, tor, launch_tor,
          tor_control_port, debug_state, code)
    cfg.only_text = only_text
    cfg.accept_file = accept_file
    if to_stdout and output_file not in (None, "-"):
        raise click.UsageError("--stdout is -o -: give one of them")
    # "-": a stream to standard output (docs/cli.md "Streams")
    cfg.output_file = "-" if to_stdout else output_file
    if cfg.output_file == "-" and (classic or tor or json_lines or discard_partial):
        raise click.UsageError("--stdout (-o -) takes a transfer-v2 stream: not with "
                               "--classic, --tor, --json or --discard-partial")
    cfg.allocate = allocate
    cfg.discard_partial = discard_partial
    cfg.peer_timeout = peer_timeout
    # with --tor, classic: Dilation would listen and dial outside Tor
    cfg.classic = classic or cfg.tor
    if json_lines:
        from . import _json_mode
        return _run(ctx, _json_mode.receive, cfg)
    return _run(ctx, cmd_receive.receive, cfg)


def _code_of_uri(cfg, code):
    """A ``wormhole-transfer:`` URI (the sender's QR code) in place of
    the code: its code, and its Mailbox server when it names one."""
    from ._uri import URIError, is_transfer_uri, parse_transfer_uri
    if not is_transfer_uri(code):
        return code
    try:
        uri = parse_transfer_uri(code)
    except URIError as e:
        raise click.BadParameter(str(e), param_hint="CODE") from None
    if uri.role != "follower":
        raise click.BadParameter(
            f"this URI asks its reader to send (role={uri.role}); "
            "`wormhole receive` only receives", param_hint="CODE")
    if uri.relay_url is not None:
        cfg.relay_url = uri.relay_url
    return uri.code


@wormhole.command()
@_options_without_tor()
@proxy_options
@click.option("--code", metavar="CODE", help="join the session with this code")
@click.option("--accept-file", "--yes", "accept_file", is_flag=True,
              help="accept every offer from the peer without asking")
@_debug_state_option
@_peer_timeout_option("Give up on an offer when the peer, sending or receiving it, sends "
                      "or takes nothing for this long.")
@click.option("-o", "--output-dir", default=None, metavar="DIRNAME",
              type=click.Path(exists=True, file_okay=False),
              help="The folder the peer's offers go into (default: the current folder).")
@_json_option
@click.argument("what", nargs=-1, metavar="[PATH]...")
@_lan_option
@click.pass_context
def share(ctx, zeromode, code_length, verify, hide_progress, listen, code, accept_file,
          debug_state, peer_timeout, output_dir, json_lines, what):
    """Offer files and directories and receive the peer's, in one session
    (transfer-v2, both sides run 'wormhole share')"""
    from . import cmd_share
    cfg = ctx.obj["config"]
    _fill(cfg, zeromode, code_length, verify, hide_progress, listen, False, False, None,
          debug_state, code)
    cfg.paths = what
    cfg.accept_file = accept_file
    cfg.peer_timeout = peer_timeout
    # a folder: every offer goes into it (``Receiving``, ``session.Share``)
    cfg.output_file = output_dir
    if json_lines:
        from . import _json_mode
        return _run(ctx, _json_mode.share, cfg)
    return _run(ctx, cmd_share.share, cfg)


@wormhole.group()
def ssh():
    """Facilitate sending/receiving SSH public keys"""


@ssh.command()
@click.option("-c", "--code-length", default=2, metavar="NUMWORDS",
              type=click.IntRange(min=1), help=CODE_LENGTH_HELP)
@click.option("-u", "--user", "user", default=None, metavar="USER",
              help="Add to USER's ~/.ssh/authorized_keys")
@_tor_options
@click.pass_context
def invite(ctx, code_length, user, tor, launch_tor, tor_control_port):
    """Add a public-key to a ~/.ssh/authorized_keys file"""
    from . import cmd_ssh
    cfg = ctx.obj["config"]
    _fill(cfg, False, code_length, False, True, True, tor, launch_tor, tor_control_port,
          None, None)
    cfg.ssh_user = user
    return _run(ctx, cmd_ssh.invite, cfg)


@ssh.command()
@click.option("-F", "--key-file", default=None, type=click.Path(exists=True, dir_okay=False),
              help="the public key to send (default: the only ~/.ssh/*.pub)")
@click.option("-y", "--yes", is_flag=True, help="Skip confirmation prompt to send key")
@_tor_options
@click.argument("code")
@click.pass_context
def accept(ctx, key_file, yes, tor, launch_tor, tor_control_port, code):
    """Send your SSH public-key

    In response to a 'wormhole ssh invite' this will send the public key
    you specify (or the only one in ~/.ssh/*.pub).
    """
    from . import cmd_ssh
    cfg = ctx.obj["config"]
    _fill(cfg, False, 2, False, True, True, tor, launch_tor, tor_control_port, None, code)
    cfg.key_file = key_file
    cfg.yes = yes
    return _run(ctx, cmd_ssh.accept, cfg)


@wormhole.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion(ctx, shell):
    """Print the shell completion script for SHELL.

    \b
    bash: eval "$(wormhole completion bash)"   (in ~/.bashrc)
    zsh:  eval "$(wormhole completion zsh)"    (in ~/.zshrc)
    fish: wormhole completion fish > ~/.config/fish/completions/wormhole.fish
    """
    from click.shell_completion import get_completion_class

    from ._completion_scripts import fixed_script
    prog_name = ctx.find_root().info_name or "wormhole"
    complete_var = "_{}_COMPLETE".format(prog_name.replace("-", "_").upper())
    cls = get_completion_class(shell)
    source = cls(ctx.find_root().command, {}, prog_name, complete_var).source()
    click.echo(fixed_script(shell, source))


@wormhole.command(name="help")
@click.pass_context
def help_(ctx):
    """Show this help and exit."""
    click.echo(ctx.parent.get_help())


def main():
    # a peer's text that the terminal's encoding cannot show (an emoji on
    # an ASCII or Latin-1 terminal) is written as an escape, not a crash
    # (docs/security.md, "What reaches the terminal")
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    wormhole(prog_name="wormhole")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
