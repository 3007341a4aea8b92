"""``p2p-node``: run a mesh node, or join for one action (shout, whisper,
get, set) and leave. docs/p2pmesh.md shows a session."""

import functools
import sys

import click
from twisted.internet import defer, task

from ._config import SHOUT, WHISPER, SubnetConfig
from ._service import build_node, display, load_or_create_key, parse_peer


def _peer(ctx, param, values):
    try:
        return [parse_peer(v) for v in values]
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def _advertise(ctx, param, value):
    if value is None:
        return None
    try:
        return parse_peer(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def node_options(listen_default):
    def wrap(f):
        @click.option("--key-file", default="p2pmesh-key.pem",
                      show_default=True,
                      help="Private key (PEM); created with mode 0600 on "
                           "first run.")
        @click.option("--bootstrap", "-b", multiple=True, callback=_peer,
                      help="host:port of a node to join through "
                           "(repeatable).")
        @click.option("--listen", "-l", default=listen_default,
                      show_default=True,
                      help="Server endpoint to listen on, e.g. "
                           "tcp:4000:interface=127.0.0.1; empty: accept no "
                           "connections.")
        @click.option("--advertise", "-a", callback=_advertise,
                      help="host:port other nodes dial (IP literal); "
                           "default: the listening address.")
        @click.option("--description", default="d1:default",
                      show_default=True,
                      help="Network description (compared at connect).")
        @click.option("--ell", default=8, show_default=True,
                      help="Persistent outbound connections (the l of "
                           "the P2P mesh protocol).")
        @functools.wraps(f)
        def inner(*args, **kw):
            return f(*args, **kw)
        return inner
    return wrap


def _build(reactor, key_file, bootstrap, listen, advertise, description,
           ell):
    key = load_or_create_key(key_file)
    return build_node(reactor, key, listen=listen or None,
                      advertise=advertise, bootstrap=bootstrap,
                      config=SubnetConfig(description=description, ell=ell))


def _once(action, **options):
    """Start a node, join, run `action(node)`, print, stop."""
    @defer.inlineCallbacks
    def main(reactor):
        node = _build(reactor, **options)
        yield node.start()
        try:
            result = yield action(node)
            if result is not None:
                click.echo(display(result))
        finally:
            yield node.stop()

    task.react(main)


@click.group()
def main():
    """A node of the peer-to-peer mesh (signed msgpack messages,
    SHOUT/WHISPER, a Kademlia DHT)."""


@main.command()
@click.option("--key-file", default="p2pmesh-key.pem", show_default=True)
def key(key_file):
    """Print this node's public key (hex DER), creating it if needed."""
    click.echo(_public_hex(load_or_create_key(key_file)))


def _public_hex(private):
    from ._keys import public_der
    return public_der(private).hex()


@main.command()
@node_options("tcp:4000")
def run(**options):
    """Run until interrupted, printing every SHOUT and WHISPER."""
    def show(name):
        def callback(sender, value):
            click.echo("%s from %s: %s" % (name, sender.hex()[-16:],
                                           display(value)))
            sys.stdout.flush()
        return callback

    def main(reactor):
        node = _build(reactor, **options)
        node.on(SHOUT, show("SHOUT"))
        node.on(WHISPER, show("WHISPER"))
        d = node.start()
        d.addCallback(lambda _: click.echo(
            "p2p-node %s listening at %s" % (node.key.hex()[-16:],
                                             display(node.advertised()))))
        reactor.addSystemEventTrigger("before", "shutdown", node.stop)
        return defer.Deferred()   # until interrupted

    task.react(main)


@main.command()
@node_options("")
@click.argument("text")
def shout(text, **options):
    """Flood TEXT to the whole network."""
    _once(lambda node: node.shout(text), **options)


@main.command()
@node_options("")
@click.argument("peer_key")
@click.argument("text")
def whisper(peer_key, text, **options):
    """Send TEXT, encrypted, to the node whose key is PEER_KEY (hex)."""
    try:
        der = bytes.fromhex(peer_key)
    except ValueError:
        raise click.BadParameter("PEER_KEY must be hex") from None
    _once(lambda node: node.whisper(der, text).addCallback(
        lambda _: "acknowledged"), **options)


@main.command()
@node_options("")
@click.argument("name")
def get(name, **options):
    """Print the value stored under NAME (UTF-8), or null."""
    _once(lambda node: node.get(name.encode("utf-8")), **options)


@main.command(name="set")
@node_options("")
@click.argument("name")
@click.argument("value")
def set_(name, value, **options):
    """Store VALUE under NAME; prints how many nodes acknowledged."""
    _once(lambda node: node.set(name.encode("utf-8"), value), **options)
