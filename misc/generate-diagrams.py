#!/usr/bin/env python
"""Write docs/state-machines/ from the Automat machines of every package in src/.

    python misc/generate-diagrams.py            # or: ./dev diagrams, tox -e diagrams
    python misc/generate-diagrams.py --output DIR --no-svg
    python misc/generate-diagrams.py --refusals        # the refused-inputs table
    python misc/generate-diagrams.py --write-refusals  # ... into refusals.md

As docs/architecture.md, "Diagrams come from the code" asks: one Graphviz
``.dot`` file per machine, named after the machine's fully qualified name as
``automat-visualize`` names it (``wormhole._boss.Boss.m.dot``), plus
``wiring.dot``, the graph of which machine holds which neighbour. When the
``dot`` program is installed each ``.dot`` is also rendered to ``.svg``; the
SVG carries the SHA-256 of the ``.dot`` it was drawn from, so that a test
without ``dot`` can still tell a stale picture.

Machines are found, not listed: every module under each package of
``PACKAGES`` (every import package under src/) is imported
(a module that fails to import stops the run with its traceback) and every
``MethodicalMachine`` on a class and every ``TypeMachineBuilder`` result is
drawn with Automat's own ``makeDigraph``. Automat iterates frozensets of
states and transitions whose order changes from run to run; we only sort
them, so two runs write identical bytes.

The wiring is taken from live objects, not from a table kept by hand: each
scenario below builds the objects the way an application or the server does
(``wormhole.create()`` on a memory reactor; the Mailbox server's
``connection_for()`` and a ``bind``; a Transit that selects an inbound
connection; a pair on the Transit relay; the CLI's offer machines; two
Dilators joined in memory), and the generator follows the attributes of
every machine instance to the machine instances they hold. Nothing runs:
memory reactors are never started, and a scenario that holds something
(the relay's socketpairs, the Dilation connection) releases it after the
walk.

``tests/docs/`` loads this file and compares what it generates now with the
files on disk.

``--refusals`` prints docs/state-machines/refusals.md as the machines make it
now: every (state, input) pair without a transition, grouped by input and
reason, each pair with the reason the file on disk gives it, a new pair
marked "to audit" (``tests/docs/test_refusals.py`` refuses such a row).
``--write-refusals`` writes it there.
"""

import argparse
import contextlib
import hashlib
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import MethodType

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src"
OUTPUT = REPO / "docs" / "state-machines"
# every import package under src/ (docs/architecture.md); the machines of
# all but APART are also drawn in wiring.dot. ``automat-visualize PACKAGE``
# draws the same machines, one package at a time (tests/docs/test_visualize.py)
PACKAGES = ("wormhole", "wormhole_mailbox", "wormhole_relay", "wormhole_ops",
            "wormhole_analytics", "p2pmesh")
# the peer-to-peer mesh (docs/p2pmesh.md): its machines, not in the wiring
APART = ("p2pmesh",)
WIRING = "wiring"
COMMAND = "./dev diagrams  (or: .venv/bin/python misc/generate-diagrams.py)"
SVG_STAMP = "<!-- generated from {name}.dot sha256:{digest} -->"


def _use_this_checkout():
    # describe the code in this repository, even when run from an
    # environment (tox) that has another copy of the package installed
    src = str(SRC)
    if sys.path[:1] != [src]:
        sys.path.insert(0, src)


# -- discovery ----------------------------------------------------------------

def discover(package):
    """Return ``[(fqpn, machine)]`` for every Automat machine under
    ``package``, sorted by name. Import errors propagate."""
    from automat._discover import findMachines
    found = {}
    for fqpn, machine in findMachines(package):
        found[fqpn] = machine
    return sorted(found.items())


def machine_types(machines):
    """Map the type of a machine's instances to ``(fqpn, label)``: the class
    that carries a MethodicalMachine, or the type a TypeMachine makes."""
    from automat import MethodicalMachine
    from twisted.python.reflect import namedAny
    types = {}
    for fqpn, machine in machines:
        if isinstance(machine, MethodicalMachine):
            owner = namedAny(fqpn.rsplit(".", 1)[0])
            if isinstance(owner, type):
                types[owner] = (fqpn, owner.__name__)
        else:
            types[machine.__automat_type__] = (fqpn, fqpn.rsplit(".", 1)[-1])
    return types


# -- one machine --------------------------------------------------------------

class _SortedAutomaton:
    """Automat's automaton with its states and transitions in a fixed order
    (by the names the diagram shows) instead of frozenset order."""

    def __init__(self, automaton, state_name, input_name, output_name):
        self.initialState = automaton.initialState
        self._states = sorted(automaton.states(), key=state_name)
        self._transitions = sorted(
            automaton.allTransitions(),
            key=lambda t: (state_name(t[0]), input_name(t[1]),
                           state_name(t[2]), [output_name(o) for o in t[3]]))

    def states(self):
        return list(self._states)

    def allTransitions(self):
        return list(self._transitions)


@contextlib.contextmanager
def _sorted_make_digraph():
    # asDigraph() picks how each kind of machine names its states, inputs
    # and outputs, then calls automat._visualize.makeDigraph; we wrap that
    # one call so the layout code stays Automat's own
    from automat import _visualize
    original = _visualize.makeDigraph

    def make_digraph(automaton, inputAsString=repr, outputAsString=repr,
                     stateAsString=repr):
        ordered = _SortedAutomaton(automaton, stateAsString, inputAsString,
                                   outputAsString)
        return original(ordered, inputAsString=inputAsString,
                        outputAsString=outputAsString,
                        stateAsString=stateAsString)

    _visualize.makeDigraph = make_digraph
    try:
        yield
    finally:
        _visualize.makeDigraph = original


def machine_dot(machine):
    """The Graphviz source of one machine, deterministic."""
    with _sorted_make_digraph():
        return machine.asDigraph().source


# -- the wiring -----------------------------------------------------------------

def _client_scenario():
    """What ``wormhole.create()`` builds (Client API, "Wormhole Parameters"):
    the facade, the Boss and the machines the Boss wires."""
    from twisted.internet.testing import MemoryReactorClock

    from wormhole import create
    w = create("example.com/diagrams", "ws://127.0.0.1:4000/v1",
               MemoryReactorClock())
    return [w]


def _server_scenario():
    """One Mailbox server connection after `bind` (Mailbox server protocol),
    when it has made its nameplate and mailbox machines."""
    from twisted.internet.task import Clock
    from zope.interface import implementer

    from wormhole_mailbox._interfaces import ITransportGlue
    from wormhole_mailbox.server import build_mailbox

    @implementer(ITransportGlue)
    class _Glue:
        def send_json(self, message):
            pass

        def drop(self, code, reason):
            pass

        def abort(self):
            pass

    conn = build_mailbox(Clock()).connection_for(_Glue())
    conn.connected()
    conn.received(b'{"type": "bind", "appid": "example.com/diagrams", '
                  b'"side": "0123456789", "id": "0000"}')
    return [conn]


class Scene:
    """What a scenario may return instead of a plain list of roots:
    ``leaves`` are objects of another scenario's picture (a wormhole, a
    Transit) that the machines here call. They are drawn, as the holders'
    neighbours, but not walked into, so that no picture repeats another."""

    def __init__(self, roots, leaves=()):
        self.roots = list(roots)
        self.leaves = list(leaves)


def _transit_scenario():
    """The Transit of a file sender (Transit protocol, "Handshake", "API"), as
    `wormhole send FILE` makes it, on a memory reactor: it listens for our
    direct hint, the receiver dials in and sends its handshake, and that
    connection is selected (which cancels the relay and timeout timers). No
    socket."""
    from twisted.internet.address import IPv4Address
    from twisted.internet.testing import MemoryReactorClock, StringTransport

    from wormhole._transit._codec import receiver_handshake
    from wormhole.transit import TransitSender

    reactor = MemoryReactorClock()
    key = b"\x01" * 32
    transit = TransitSender(None, reactor=reactor, listen_addresses=["127.0.0.1"])
    transit.get_connection_hints()
    transit.set_transit_key(key)
    transit.connect()
    [(_, factory, _, _)] = reactor.tcpServers
    inbound = factory.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40001))
    inbound.makeConnection(StringTransport())
    inbound.dataReceived(receiver_handshake(key))
    return [transit]


def _proxy_scenario():
    """One connection through a SOCKS5 proxy (docs/proxy.md, "How it is
    built") on a memory reactor: the endpoint connects to the proxy, the
    ProxyTunnel greets it, the proxy's two answers (no authentication;
    connected) open the tunnel, and the caller's protocol is built on it.
    No socket."""
    from twisted.internet.endpoints import TCP4ClientEndpoint
    from twisted.internet.protocol import Factory, Protocol
    from twisted.internet.testing import MemoryReactorClock, StringTransport

    from wormhole._proxy._negotiate import negotiation_for
    from wormhole._proxy._tunnel import ProxyClientEndpoint
    from wormhole.proxy import parse_proxy_url

    reactor = MemoryReactorClock()
    proxy = parse_proxy_url("socks5://127.0.0.1:1080")
    ep = ProxyClientEndpoint(reactor, proxy, TCP4ClientEndpoint(reactor, "127.0.0.1", 1080),
                             "relay.example", 4001, negotiation_for)
    ep.connect(Factory.forProtocol(Protocol))
    [(_, _, factory, _, _)] = reactor.tcpClients
    wrapper = factory.buildProtocol(None)  # the endpoint's, around the tunnel
    wrapper.makeConnection(StringTransport())
    wrapper.dataReceived(b"\x05\x00")
    wrapper.dataReceived(b"\x05\x00\x00\x01\x7f\x00\x00\x01\x04\x38")
    return [wrapper._wrappedProtocol]


def _relay_scenario():
    """Two TCP clients of the Transit relay (Transit protocol, "Relay") with
    the same token, through the relay's own factory (``build_relay``,
    ``make_tcp_factory``), each after the handshake line a Transit client
    writes: the two RelayConnections are paired and their glue has started a
    Splicer. The glue splices only bare TCP transports (on Linux), so each
    client is one end of a ``socket.socketpair()`` wrapped in a
    ``tcp.Connection`` on a memory reactor: nothing is read or spliced (that
    reactor never runs; only the ``ok`` is written), and every socket is closed
    once the picture is taken."""
    import socket

    from twisted.internet import tcp
    from twisted.internet.testing import MemoryReactorClock

    from wormhole._transit._codec import relay_handshake
    from wormhole_relay.server import build_relay, make_tcp_factory

    reactor = MemoryReactorClock()
    factory = make_tcp_factory(build_relay(reactor), reactor=reactor)
    key = b"\x02" * 32
    sockets, glues = [], []
    try:
        for side in ("a" * 16, "b" * 16):
            relay_end, client_end = socket.socketpair()
            sockets += [relay_end, client_end]
            glue = factory.buildProtocol(None)
            glue.makeConnection(tcp.Connection(relay_end, glue, reactor))
            glue.dataReceived(relay_handshake(key, side))
            glues.append(glue)
        yield glues
    finally:
        factory.stopFactory()  # the pipe pool (no pipe was taken)
        for s in sockets:
            s.close()


def _cli_scenario():
    """`wormhole send FILE` and `wormhole receive` as ``cmd_send`` and
    ``cmd_receive`` build their machines (File-transfer protocol, "Sender",
    "Recipient"): a ``file_sender`` on the sending wormhole and its
    TransitSender, a ``Receiver`` on the receiving wormhole. The wormholes and
    the Transit are drawn in their own scenarios, so here they are leaves."""
    from twisted.internet.testing import MemoryReactorClock

    from wormhole import create
    from wormhole.transfer import Receiver, file_sender
    from wormhole.transit import TransitSender

    reactor = MemoryReactorClock()
    sending = create("example.com/diagrams", "ws://127.0.0.1:4000/v1", reactor)
    receiving = create("example.com/diagrams", "ws://127.0.0.1:4000/v1", reactor)
    transit = TransitSender(None, no_listen=True, reactor=reactor)
    sender = file_sender(sending.send_message, transit.add_connection_hints,
                         lambda error: None)
    their_hints = []
    receiver = Receiver(receiving.send_message, lambda text: None,
                        their_hints.extend, lambda kind, offer: None,
                        lambda error: None)
    return Scene([sender, receiver], leaves=[sending, receiving, transit])


def _dilation_scenario():
    """What ``w.dilate()`` builds (Dilation protocol) once the peer has
    answered: the Dilator the Boss holds makes the Manager, its L4 Inbound and
    Outbound, and per generation a Connector, whose listener's connection
    becomes the selected DilatedConnectionProtocol (L2/L3); one subchannel is
    open. Two Dilators (Leader and Follower, on memory reactors) trade their
    DILATE messages directly and their connection runs over ``iosim``; both are
    stopped once the picture is taken."""
    from twisted.internet.address import IPv4Address
    from twisted.internet.protocol import Factory, Protocol
    from twisted.internet.testing import MemoryReactorClock
    from twisted.test import iosim

    from wormhole._dilation._dilator import Dilator
    from wormhole._eventual import EventualQueue

    reactors = [MemoryReactorClock(), MemoryReactorClock()]
    # the larger side leads (Dilation protocol, "Leaders and Followers");
    # each one's DILATE messages go straight to the other
    peer = {}
    leader = Dilator(reactors[0], EventualQueue(reactors[0]),
                     lambda phase, plaintext: peer["follower"].received_dilate(plaintext),
                     side="f" * 16)
    follower = Dilator(reactors[1], EventualQueue(reactors[1]),
                       lambda phase, plaintext: leader.received_dilate(plaintext),
                       side="0" * 16)
    peer["follower"] = follower
    dilated = [d.dilate(listen_addresses=["127.0.0.1"]) for d in (leader, follower)]
    for d in (leader, follower):
        d.got_key(b"\x03" * 32)
    for d in (leader, follower):
        d.got_wormhole_versions({"can-dilate": ["ged"]})
    ends = [r.tcpServers[0][1].buildProtocol(IPv4Address("TCP", "127.0.0.1", 40002 + n))
            for n, r in enumerate(reactors)]
    pump = iosim.connect(ends[0], iosim.FakeTransport(ends[0], isServer=True),
                         ends[1], iosim.FakeTransport(ends[1], isServer=False))

    def run():
        for _ in range(3):
            pump.flush()
            for r in reactors:
                r.advance(0)  # the eventual-send queue

    dilated[1].listener_for("diagrams").listen(Factory.forProtocol(Protocol))
    dilated[0].connector_for("diagrams").connect(Factory.forProtocol(Protocol))
    run()
    try:
        yield [leader]
    finally:
        for d in (leader, follower):
            d.stop()
        run()


def _transfer_v2_scenario():
    """A transfer-v2 session (docs/transfer-v2.md) on a wormhole: the
    TransferSession's Session machine, one offer we make (OfferSender) and
    one the peer makes (OfferReceiver). The wormhole is drawn in its own
    scenario, so here it is a leaf; nothing is dilated."""
    from twisted.internet.testing import MemoryReactorClock

    from wormhole import create
    from wormhole.transfer_v2 import _api, _source, _versions

    reactor = MemoryReactorClock()
    w = create("example.com/diagrams", "ws://127.0.0.1:4000/v1", reactor, dilation=True)
    session = _api.TransferSession(reactor, w, "connect")
    # both sides in connect mode with every feature: the offers' context
    session._agree(_versions.negotiate("connect", _versions.app_versions("connect")))
    outgoing = _source.Outgoing(_api.M.FileOffer("f", 0, 0), [])
    sending = session._offer_out(outgoing, None, lambda n: None)
    receiving = session._offer_in()
    # the course of a receiving session (Transfer.receive, wormhole receive)
    from wormhole.session import ReceiveFlow
    flow = ReceiveFlow(reactor, None)
    flow.expect_offers(session)
    return Scene([session._machine, sending.machine, receiving.machine, flow],
                 leaves=[w, session])


SCENARIOS = [
    ("client: wormhole.create()", _client_scenario),
    ("Mailbox server: one connection", _server_scenario),
    ("Transit: one file transfer's connection", _transit_scenario),
    ("Transit relay: a pair of TCP clients, spliced", _relay_scenario),
    ("Proxy: one connection through a SOCKS5 proxy", _proxy_scenario),
    ("CLI: wormhole send FILE, wormhole receive", _cli_scenario),
    ("Dilation: one dilated wormhole with a subchannel", _dilation_scenario),
    ("transfer-v2: a session with an offer each way", _transfer_v2_scenario),
]


# a TypeMachine instance keeps its neighbours on its core (and data)
_TYPED_PARTS = ("__automat_core__", "__automat_data__")


def _bound_to(value):
    # a neighbour kept as one of its bound methods (the CLI machines keep
    # ``w.send_message`` and ``transit.add_connection_hints``; the Dilation
    # Manager its Dilator's ``_peer_status``): calling it is sending that
    # object an input, so the walk counts it as holding the object
    if isinstance(value, MethodType):
        return value.__self__
    return value


def _held(obj):
    """Every object ``obj`` refers to from an attribute, also one level into
    lists, tuples, sets and dict values, and through a TypeMachine
    instance's core and data; a bound method stands for its object."""
    try:
        attrs = vars(obj)
    except TypeError:
        return
    for key, value in attrs.items():
        if key in _TYPED_PARTS:
            yield from _held(value)
            continue
        yield _bound_to(value)
        if isinstance(value, (list, tuple, set, frozenset)):
            yield from map(_bound_to, value)
        elif isinstance(value, dict):
            yield from map(_bound_to, value.values())


def wiring_edges(roots, types, leaves=()):
    """Walk from ``roots`` through machine instances (objects whose type is a
    key of ``types``, which maps it to ``(fqpn, label)``). ``leaves`` are
    recorded where something walked holds them, but not walked from.
    Return ``(nodes, edges)``: node names reached (a machine's fqpn, or a
    root's or leaf's class name) and ``(holder, held)`` pairs of node
    names, both sorted."""
    def node(obj):
        if type(obj) in types:
            return types[type(obj)][0]
        return f"{type(obj).__module__}.{type(obj).__qualname__}"

    def one_of(obj, objs):
        return any(obj is o for o in objs)

    def interesting(obj):
        return type(obj) in types or one_of(obj, roots) or one_of(obj, leaves)

    seen = {}
    queue = list(roots)
    edges = set()
    while queue:
        obj = queue.pop(0)
        if id(obj) in seen:
            continue
        seen[id(obj)] = obj
        if one_of(obj, leaves) and not one_of(obj, roots):
            continue
        for value in _held(obj):
            if value is obj or not interesting(value):
                continue
            edges.add((node(obj), node(value)))
            queue.append(value)
    return sorted({node(o) for o in seen.values()}), sorted(edges)


def wiring_dot(machines, scenarios=SCENARIOS, say=None):
    """The Graphviz source of the wiring: one cluster per scenario, an arrow
    from each machine to every machine it holds (it sends that one inputs),
    both heads where they hold each other. Machines no scenario reaches are
    drawn apart, so that a new machine shows up as not yet wired."""
    import graphviz
    types = machine_types(machines)
    labels = {fqpn: label for fqpn, label in types.values()}
    graph = graphviz.Digraph(
        "wiring",
        graph_attr={"rankdir": "LR", "dpi": "100", "fontname": "Menlo"},
        node_attr={"fontname": "Menlo", "shape": "box"},
        edge_attr={"fontname": "Menlo"})
    reached = set()
    for n, (label, build) in enumerate(scenarios):
        with _built(build) as scene:
            if not isinstance(scene, Scene):
                scene = Scene(scene)
            nodes, edges = wiring_edges(scene.roots, types, scene.leaves)
        reached.update(nodes)

        def ident(node, n=n):
            # an object that is not a machine (a facade, a Transit) may be
            # drawn in several scenarios: one box in each cluster
            return node if node in labels else f"{n}.{node}"
        with graph.subgraph(name=f"cluster_{n}") as sub:
            sub.attr(label=label, style="rounded", color="gray")
            for node in nodes:
                _wiring_node(sub, node, labels, ident(node))
            pairs = set(edges)
            for holder, held in edges:
                if holder == held or (held, holder) not in pairs:
                    sub.edge(ident(holder), ident(held))
                elif holder < held:
                    sub.edge(ident(holder), ident(held), dir="both")
    unwired = sorted(fqpn for fqpn, _ in machines if fqpn not in reached)
    if unwired and say is not None:
        say("NOTE: no wiring scenario reaches " + ", ".join(unwired)
            + " (add one to SCENARIOS in misc/generate-diagrams.py)")
    if unwired:
        with graph.subgraph(name="cluster_unwired") as sub:
            sub.attr(label="not reached by any scenario in "
                     "misc/generate-diagrams.py", style="dashed")
            for node in unwired:
                _wiring_node(sub, node, labels)
    return graph.source


def _wiring_node(graph, node, labels, ident=None):
    if node in labels:
        # a machine: links to its own picture
        graph.node(ident or node, label=labels[node], URL=f"{node}.svg",
                   color="blue")
    else:
        # an object that is not a machine (the facade)
        graph.node(ident or node, label=node.rsplit(".", 1)[-1], style="dashed")


@contextlib.contextmanager
def _built(build):
    """The roots a scenario builds. A scenario that holds something to
    release (a socket, a running connection) is a generator: it yields its
    roots once and releases them after the walk, also when the walk fails."""
    if inspect.isgeneratorfunction(build):
        with contextlib.contextmanager(build)() as roots:
            yield roots
    else:
        yield build()


# -- output ---------------------------------------------------------------------

def generate(packages=PACKAGES, scenarios=SCENARIOS, say=None, apart=APART):
    """Return ``{file name: .dot source}`` for everything the docs show:
    each machine of ``packages``, and the wiring of those not ``apart``."""
    wired, files = [], {}
    for package in packages:
        machines = discover(package)
        files.update((f"{fqpn}.dot", machine_dot(m)) for fqpn, m in machines)
        if package not in apart:
            wired += machines
    files[f"{WIRING}.dot"] = wiring_dot(sorted(wired), scenarios, say)
    return files


def svg_stamp(dot_name, dot_source):
    """The comment an SVG carries to name the ``.dot`` source it shows."""
    digest = hashlib.sha256(dot_source.encode("utf-8")).hexdigest()
    return SVG_STAMP.format(name=dot_name[:-len(".dot")], digest=digest)


def render_svg(dot_name, dot_source):
    svg = subprocess.run(["dot", "-Tsvg"], input=dot_source.encode("utf-8"),
                         capture_output=True, check=True).stdout.decode("utf-8")
    head, sep, rest = svg.partition("\n")
    if not head.startswith("<?xml"):
        head, sep, rest = "", "", svg
    stamp = svg_stamp(dot_name, dot_source)
    return f"{head}{sep}{stamp}\n{rest}" if head else f"{stamp}\n{rest}"


def write(files, output, svg=True, say=print):
    """Write ``files`` into ``output``; remove ``.dot``/``.svg`` files of
    machines that are gone. Return False if SVGs were wanted but ``dot``
    is missing."""
    output.mkdir(parents=True, exist_ok=True)
    wanted = set(files) | {n[:-len(".dot")] + ".svg" for n in files}
    for old in sorted(output.iterdir()):
        if old.suffix in (".dot", ".svg") and old.name not in wanted:
            old.unlink()
            say(f"removed {old.relative_to(REPO) if REPO in old.parents else old}")
    for name, source in sorted(files.items()):
        (output / name).write_text(source, encoding="utf-8")
    if not svg:
        return True
    if shutil.which("dot") is None:
        say("WARNING: Graphviz 'dot' is not installed: the .svg files were NOT "
            "updated and tests/docs will fail until they are "
            "(apt-get install graphviz, then run this again)")
        return False
    for name, source in sorted(files.items()):
        svg_name = name[:-len(".dot")] + ".svg"
        (output / svg_name).write_text(render_svg(name, source), encoding="utf-8")
    return True


# -- refusals (docs/state-machines/refusals.md) ---------------------------------

REFUSALS = OUTPUT / "refusals.md"
# the reason a regenerated table gives a pair nobody has explained yet
TO_AUDIT = "**to audit**: why it cannot arrive, or the error it gets"
_REFUSALS_HEAD = """# Inputs the machines refuse

Generated by `misc/generate-diagrams.py --write-refusals`, reasons kept.
"""
_MACHINE = re.compile(r"^## `([\w.]+)`\s*$")
_ROW = re.compile(r"^\| `(\w+)` \| ([`\w, ]+) \| (.*) \|\s*$")


def _name(thing):
    method = getattr(thing, "method", None)
    return method.__name__ if method is not None else repr(thing)


def refused_pairs(packages=PACKAGES):
    """``{machine: {input: {state, ...}}}``: every (state, input) pair of
    every machine of ``packages`` that has no transition."""
    found = {}
    for package in packages:
        for fqpn, machine in discover(package):
            automaton = machine._automaton
            have = {(state, symbol) for state, symbol, _, _ in automaton.allTransitions()}
            for symbol in automaton.inputAlphabet():
                states = {_name(state) for state in automaton.states()
                          if (state, symbol) not in have}
                if states:
                    found.setdefault(fqpn, {})[_name(symbol)] = states
    return found


def parse_refusals(text):
    """The table's rows: ``[(machine, input, (state, ...), reason)]``, and
    the text before the first machine's heading."""
    rows, machine, head = [], None, []
    for line in text.splitlines():
        heading = _MACHINE.match(line)
        if heading:
            machine = heading.group(1)
            continue
        if machine is None:
            head.append(line)
            continue
        row = _ROW.match(line)
        if row:
            states = tuple(re.findall(r"`(\w+)`", row.group(2)))
            rows.append((machine, row.group(1), states, row.group(3).strip()))
    return rows, "\n".join(head).rstrip() + "\n"


def refusal_differences(rows, current):
    """``(unlisted, wrong)``: refused pairs the table lacks, and pairs it
    lists that have a transition (or machines, inputs, states that are
    gone, or a pair listed twice), each as ``(machine, input, state)``."""
    listed, wrong = set(), []
    for machine, symbol, states, _ in rows:
        for state in states:
            pair = (machine, symbol, state)
            if pair in listed or state not in current.get(machine, {}).get(symbol, ()):
                wrong.append(pair)
            listed.add(pair)
    unlisted = sorted((machine, symbol, state)
                      for machine, inputs in current.items()
                      for symbol, states in inputs.items()
                      for state in states if (machine, symbol, state) not in listed)
    return unlisted, sorted(wrong)


def refusals_table(current, old_text=""):
    """The table for ``current`` (``refused_pairs()``), each pair with
    the reason ``old_text`` gave it (``TO_AUDIT`` for a new pair); the
    states of one input that share a reason make one row."""
    rows, head = parse_refusals(old_text) if old_text else ([], _REFUSALS_HEAD)
    reasons = {(m, i, s): why for m, i, states, why in rows for s in states}
    out = [head]
    for machine in sorted(current):
        out += [f"## `{machine}`", "", "| input | refused in | why |", "| --- | --- | --- |"]
        for symbol in sorted(current[machine]):
            by_reason = {}
            for state in sorted(current[machine][symbol]):
                why = reasons.get((machine, symbol, state), TO_AUDIT)
                by_reason.setdefault(why, []).append(state)
            for why, states in by_reason.items():
                listed = ", ".join(f"`{s}`" for s in states)
                out.append(f"| `{symbol}` | {listed} | {why} |")
        out.append("")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=OUTPUT,
                        help="where to write (default: docs/state-machines)")
    parser.add_argument("--no-svg", action="store_true",
                        help="write only the .dot files")
    parser.add_argument("--refusals", action="store_true",
                        help="print the table of refused inputs (refusals.md) for the "
                             "machines as they are now, with the reasons refusals.md gives")
    parser.add_argument("--write-refusals", action="store_true",
                        help="write that table to docs/state-machines/refusals.md")
    args = parser.parse_args(argv)
    _use_this_checkout()
    if args.refusals or args.write_refusals:
        old = REFUSALS.read_text(encoding="utf-8") if REFUSALS.exists() else ""
        table = refusals_table(refused_pairs(), old)
        if args.write_refusals:
            REFUSALS.write_text(table, encoding="utf-8")
            print(f"{table.count(TO_AUDIT)} rows to audit in {REFUSALS}")
        else:
            sys.stdout.write(table)
        return 0
    files = generate(say=print)
    ok = write(files, args.output, svg=not args.no_svg)
    print(f"{len(files)} diagrams in {args.output}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
