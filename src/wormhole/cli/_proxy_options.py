"""``--proxy URL``, ``--no-proxy``, ``--proxy-direct`` and
``--proxy-ask-password`` (docs/proxy.md, "The command line").

The options are accepted before the command (``wormhole --proxy URL
send``) and after it (``wormhole send --proxy URL``); their callbacks
only note what was given in the click context's ``meta`` (shared by the
group and its commands), and ``settle`` turns that and the environment
into the Config's ``proxy_url``/``no_proxy``/``proxy_direct`` once, when
the command runs.
"""
import os

import click

_KEY = "wormhole.proxy"


def _note(ctx, param, value):
    if value is not None and value is not False:
        ctx.meta.setdefault(_KEY, {})[param.name] = value
    return value


def proxy_options(f):
    """The four options, on the group or on a command."""
    for option in reversed([
            click.option("--proxy", "proxy", metavar="URL", default=None, expose_value=False,
                         callback=_note,
                         help="reach the mailbox server and the relays through this proxy: "
                              "http://, https:// (HTTP CONNECT), socks5:// or socks5h://, "
                              "optionally with user:password@ (default: $HTTPS_PROXY, "
                              "$ALL_PROXY, $HTTP_PROXY; hosts in $NO_PROXY are dialled "
                              "directly)"),
            click.option("--no-proxy", "no_proxy", is_flag=True, default=None,
                         expose_value=False, callback=_note,
                         help="use no proxy, whatever the environment says"),
            click.option("--proxy-direct", "proxy_direct", is_flag=True, default=None,
                         expose_value=False, callback=_note,
                         help="behind a proxy, also try direct connections to the peer "
                              "(and listen for them); by default only the relay is used, "
                              "through the proxy"),
            click.option("--proxy-ask-password", "proxy_ask_password", is_flag=True,
                         default=None, expose_value=False, callback=_note,
                         help="ask for the proxy's password (not given in the URL)")]):
        f = option(f)
    return f


def settle(ctx, cfg, environ=None, ask=None):
    """Fill ``cfg.proxy_url`` (a ProxyURL or None), ``cfg.no_proxy`` and
    ``cfg.proxy_direct`` from the options and the environment; a usage
    error (exit 2) for what cannot go together or cannot be parsed."""
    from ..proxy import NoProxy, ProxyURLError, parse_proxy_url, proxy_from_environment
    given = ctx.meta.get(_KEY, {})
    environ = os.environ if environ is None else environ
    if given.get("no_proxy") and given.get("proxy"):
        raise click.UsageError("--proxy and --no-proxy exclude each other")
    if given.get("proxy") and cfg.tor:
        # docs/proxy.md, "Tor": Tor is a proxy of its own
        raise click.UsageError("--proxy and --tor exclude each other: Tor is a proxy of "
                               "its own")
    try:
        if given.get("no_proxy") or cfg.tor:
            url = None  # --tor: a proxy set in the environment is not used
        elif given.get("proxy"):
            url = parse_proxy_url(given["proxy"])
        else:
            url = proxy_from_environment(environ)
    except ProxyURLError as e:
        raise click.UsageError(str(e)) from None
    if url is None:
        for option in ("proxy_direct", "proxy_ask_password"):
            if given.get(option):
                raise click.UsageError(f"--{option.replace('_', '-')} needs a proxy "
                                       "(--proxy URL, or $HTTPS_PROXY and the like)")
    elif given.get("proxy_ask_password"):
        url = _with_asked_password(url, ask or _ask)
    cfg.proxy_url = url
    cfg.no_proxy = NoProxy.from_environment(environ)
    cfg.proxy_direct = bool(given.get("proxy_direct"))


def _ask(prompt, hide):
    return click.prompt(prompt, hide_input=hide, err=True, default="", show_default=False)


def _with_asked_password(url, ask):
    from attrs import evolve
    if url.username is None:
        url = evolve(url, username=ask(f"User name for the proxy {url}", False))
    return url.with_password(ask(f"Password for the proxy {url}", True))
