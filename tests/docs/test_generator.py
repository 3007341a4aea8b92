"""misc/generate-diagrams.py on small packages made by the tests: discovery,
loud import failures, deterministic output, the wiring walk, writing."""

import hashlib
import os
import sys
import textwrap
from pathlib import Path

from twisted.internet.utils import getProcessOutputAndValue
from twisted.trial import unittest

from . import generator

_DOOR = '''
from automat import MethodicalMachine


class Door:
    m = MethodicalMachine()

    @m.state(initial=True)
    def closed(self): pass

    @m.state()
    def opened(self): pass

    @m.state()
    def locked(self): pass

    @m.input()
    def push(self): pass

    @m.input()
    def lock(self): pass

    @m.input()
    def unlock(self): pass

    @m.output()
    def creak(self): pass

    @m.output()
    def click(self): pass

    closed.upon(push, enter=opened, outputs=[creak])
    opened.upon(push, enter=closed, outputs=[creak, click])
    closed.upon(lock, enter=locked, outputs=[click])
    locked.upon(unlock, enter=closed, outputs=[click])
'''

_LAMP = '''
from typing import Protocol

from automat import TypeMachineBuilder


class Lamp(Protocol):
    def switch(self) -> None: ...


class LampCore:
    def __init__(self, neighbour=None):
        self.neighbour = neighbour


builder = TypeMachineBuilder(Lamp, LampCore)
off = builder.state("off")
on = builder.state("on")
off.upon(Lamp.switch).to(on).returns(None)
on.upon(Lamp.switch).to(off).returns(None)
LampMachine = builder.build()
'''


class _FixturePackage:
    """A package on sys.path for one test, removed again afterwards."""

    counter = 0

    def make_package(self, modules):
        _FixturePackage.counter += 1
        name = f"diagramfixture{_FixturePackage.counter}_{os.getpid()}"
        root = Path(self.mktemp())
        pkg = root / name
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        for module, source in modules.items():
            # "server/door" makes the subpackage "server"
            path = pkg.joinpath(*module.split("/"))
            for parent in path.parents:
                if parent == pkg:
                    break
                parent.mkdir(exist_ok=True)
                (parent / "__init__.py").write_text("")
            path.with_suffix(".py").write_text(textwrap.dedent(source))
        sys.path.insert(0, str(root))

        def cleanup():
            sys.path.remove(str(root))
            for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                del sys.modules[mod]
        self.addCleanup(cleanup)
        return name


class Discovery(_FixturePackage, unittest.TestCase):
    def setUp(self):
        self.gen = generator.load()

    def test_finds_methodical_and_typed_machines(self):
        """Both a MethodicalMachine on a class and a TypeMachineBuilder
        result at module level are found, named as automat-visualize names
        them, sorted."""
        pkg = self.make_package({"door": _DOOR, "lamp": _LAMP})
        names = [fqpn for fqpn, _ in self.gen.discover(pkg)]
        self.assertEqual(names, [f"{pkg}.door.Door.m", f"{pkg}.lamp.LampMachine"])

    def test_finds_machines_in_subpackages(self):
        """Discovery descends into subpackages (like wormhole._dilation)."""
        pkg = self.make_package({"server/door": _DOOR})
        names = [fqpn for fqpn, _ in self.gen.discover(pkg)]
        self.assertEqual(names, [f"{pkg}.server.door.Door.m"])

    def test_a_module_that_fails_to_import_fails_the_run(self):
        """A broken module is an error, not a machine silently left out."""
        pkg = self.make_package({"door": _DOOR,
                                 "broken": "import no_such_module_for_diagrams\n"})
        self.assertRaises(ImportError, self.gen.discover, pkg)

    def test_generate_fails_on_a_broken_module(self):
        """generate() (what the command runs) lets the import error out."""
        pkg = self.make_package({"broken": "raise RuntimeError('half-written')\n"})
        self.assertRaises(RuntimeError, self.gen.generate, [pkg], [])


class MachineDot(_FixturePackage, unittest.TestCase):
    def setUp(self):
        self.gen = generator.load()

    def test_states_and_transitions_in_name_order(self):
        """States come sorted by name and transitions by (from, input, to,
        outputs), numbered in that order, whatever Automat's set order."""
        pkg = self.make_package({"door": _DOOR})
        [(_, machine)] = self.gen.discover(pkg)
        source = self.gen.machine_dot(machine)
        states = [line.split()[0] for line in source.splitlines()
                  if "shape=ellipse" in line]
        self.assertEqual(states, ["closed", "locked", "opened"])
        flows = [line.strip() for line in source.splitlines()
                 if "-> t" in line]
        self.assertEqual(flows, [
            "closed -> t0:tableport:w [arrowhead=none]",  # lock
            "closed -> t1:tableport:w [arrowhead=none]",  # push
            "locked -> t2:tableport:w [arrowhead=none]",
            "opened -> t3:tableport:w [arrowhead=none]",
        ])
        self.assertIn("creak</font></td><td color=\"pink\"><font "
                      "point-size=\"9\">click", source)

    def test_uses_automat_layout_and_names(self):
        """The source is Automat's makeDigraph output (bold initial state,
        HTML-table transition labels) with the machine's own names."""
        pkg = self.make_package({"lamp": _LAMP})
        [(_, machine)] = self.gen.discover(pkg)
        source = self.gen.machine_dot(machine)
        self.assertIn('off [color=blue fontame="Menlo-Bold" shape=ellipse '
                      'style=bold]', source)
        self.assertIn('<font face="menlo-italic">switch</font>', source)

    def test_no_addresses_in_output(self):
        """Nothing in a .dot depends on memory addresses."""
        pkg = self.make_package({"door": _DOOR, "lamp": _LAMP})
        for _, machine in self.gen.discover(pkg):
            self.assertNotIn("0x", self.gen.machine_dot(machine))

    def test_automat_is_left_as_it_was(self):
        """The sorting hook is removed again after each diagram."""
        from automat import _visualize
        before = _visualize.makeDigraph
        pkg = self.make_package({"door": _DOOR})
        [(_, machine)] = self.gen.discover(pkg)
        self.gen.machine_dot(machine)
        self.assertIs(_visualize.makeDigraph, before)


class Wiring(_FixturePackage, unittest.TestCase):
    def setUp(self):
        self.gen = generator.load()

    def test_walk_follows_machines_only(self):
        """From a root, the walk follows attributes (also inside lists and
        dicts) to machine instances, records holder->held pairs, and does
        not walk through objects that are not machines."""
        A, B, C, Other, Root = (type(n, (), {}) for n in ("A", "B", "C", "Other", "Root"))
        types = {A: ("x.A.m", "A"), B: ("x.B.m", "B"), C: ("x.C.m", "C")}
        a, b, c, hidden, root = A(), B(), C(), C(), Root()
        root.boss = a
        a.parts = [b, c]
        b.back = {"a": a}
        c.helper = Other()
        c.helper.machine = hidden  # behind a non-machine: not followed
        nodes, edges = self.gen.wiring_edges([root], types)
        name = f"{Root.__module__}.{Root.__qualname__}"
        self.assertEqual(nodes, sorted([name, "x.A.m", "x.B.m", "x.C.m"]))
        self.assertEqual(edges, sorted([(name, "x.A.m"), ("x.A.m", "x.B.m"),
                                        ("x.A.m", "x.C.m"), ("x.B.m", "x.A.m")]))

    def test_typed_machine_neighbours_come_from_its_core(self):
        """A TypeMachine instance holds its neighbours on its core; the
        walk attributes them to the machine."""
        pkg = self.make_package({"door": _DOOR, "lamp": _LAMP})
        machines = self.gen.discover(pkg)
        types = self.gen.machine_types(machines)
        mod = sys.modules[f"{pkg}.lamp"]
        door = sys.modules[f"{pkg}.door"].Door()
        lamp = mod.LampMachine(mod.LampCore(door))
        nodes, edges = self.gen.wiring_edges([lamp], types)
        self.assertEqual(nodes, [f"{pkg}.door.Door.m", f"{pkg}.lamp.LampMachine"])
        self.assertEqual(edges, [(f"{pkg}.lamp.LampMachine", f"{pkg}.door.Door.m")])

    def test_unreached_machines_are_drawn_apart(self):
        """A machine no scenario reaches is in the 'not reached' cluster
        and the command says so; an instance holding another of its own
        kind gets one plain edge."""
        pkg = self.make_package({"door": _DOOR, "lamp": _LAMP})
        machines = self.gen.discover(pkg)
        door_cls = sys.modules[f"{pkg}.door"].Door

        def scenario():
            d1, d2 = door_cls(), door_cls()
            d1.peer, d2.peer = d2, d1
            return [d1]
        said = []
        source = self.gen.wiring_dot(machines, [("doors", scenario)], said.append)
        self.assertEqual(len(said), 1)
        self.assertIn(f"no wiring scenario reaches {pkg}.lamp.LampMachine ", said[0])
        self.assertIn(f'"{pkg}.door.Door.m" -> "{pkg}.door.Door.m"', source)
        unwired = source[source.index("cluster_unwired"):]
        self.assertIn(f'"{pkg}.lamp.LampMachine" [label=LampMachine '
                      f'URL="{pkg}.lamp.LampMachine.svg"', unwired)
        self.assertNotIn("Door", unwired)

    def test_mutual_holders_get_one_two_headed_edge(self):
        """Two machines that hold each other are joined by one edge with
        arrow heads at both ends; a one-way reference stays one-way."""
        pkg = self.make_package({"door": _DOOR, "gate": _DOOR, "hatch": _DOOR})
        machines = self.gen.discover(pkg)
        door, gate, hatch = (sys.modules[f"{pkg}.{m}"].Door()
                             for m in ("door", "gate", "hatch"))
        door.peer, gate.peer = gate, door
        gate.below = hatch
        source = self.gen.wiring_dot(machines, [("doors", lambda: [door])])
        edges = [line.strip() for line in source.splitlines() if "->" in line]
        self.assertEqual(edges, [
            f'"{pkg}.door.Door.m" -> "{pkg}.gate.Door.m" [dir=both]',
            f'"{pkg}.gate.Door.m" -> "{pkg}.hatch.Door.m"',
        ])
        self.assertNotIn("cluster_unwired", source)


    def test_a_bound_method_stands_for_its_object(self):
        """A machine that keeps a neighbour's bound method (the CLI
        machines keep ``w.send_message``) holds that neighbour, also in a
        list; a plain function or a builtin method leads nowhere."""
        A, B, C = (type(n, (), {"poke": lambda self: None}) for n in ("A", "B", "C"))
        types = {A: ("x.A.m", "A"), B: ("x.B.m", "B"), C: ("x.C.m", "C")}
        a, b, c = A(), B(), C()
        a.send, a.callbacks, a.extend = b.poke, [c.poke], [].extend
        a.done = lambda: None
        nodes, edges = self.gen.wiring_edges([a], types)
        self.assertEqual(nodes, ["x.A.m", "x.B.m", "x.C.m"])
        self.assertEqual(edges, [("x.A.m", "x.B.m"), ("x.A.m", "x.C.m")])

    def test_leaves_are_drawn_but_not_walked(self):
        """A scenario's leaves appear where a walked object holds them,
        but what they hold does not; an object that is not a machine gets
        one box per cluster, so two scenarios never share it."""
        pkg = self.make_package({"door": _DOOR, "gate": _DOOR})
        machines = self.gen.discover(pkg)
        Door = sys.modules[f"{pkg}.door"].Door
        Gate = sys.modules[f"{pkg}.gate"].Door
        Facade = type("Facade", (), {})

        def first():
            facade = Facade()
            facade.gate = Gate()
            return [facade]

        def second():
            facade, door = Facade(), Door()
            facade.gate = Gate()
            door.facade = facade
            return self.gen.Scene([door], leaves=[facade])
        source = self.gen.wiring_dot(machines, [("one", first), ("two", second)])
        facade = f"{Facade.__module__}.{Facade.__qualname__}"
        edges = [line.strip() for line in source.splitlines() if "->" in line]
        self.assertEqual(edges, [
            f'"0.{facade}" -> "{pkg}.gate.Door.m"',
            f'"{pkg}.door.Door.m" -> "1.{facade}"',
        ])
        self.assertIn(f'"1.{facade}" [label=Facade style=dashed]', source)
        self.assertNotIn("cluster_unwired", source)

    def test_a_generator_scenario_is_released_after_the_walk(self):
        """A scenario written as a generator yields its roots and runs its
        cleanup once the walk is done, also when the walk fails."""
        pkg = self.make_package({"door": _DOOR})
        machines = self.gen.discover(pkg)
        Door = sys.modules[f"{pkg}.door"].Door
        events = []

        def scenario():
            events.append("built")
            try:
                yield [Door()]
            finally:
                events.append("released")
        self.gen.wiring_dot(machines, [("doors", scenario)])
        self.assertEqual(events, ["built", "released"])

        def broken_walk(roots, types, leaves=()):
            events.append("walked")
            raise RuntimeError("walk failed")
        self.patch(self.gen, "wiring_edges", broken_walk)
        self.assertRaises(RuntimeError, self.gen.wiring_dot, machines,
                          [("doors", scenario)])
        self.assertEqual(events[2:], ["built", "walked", "released"])


class Writing(unittest.TestCase):
    def setUp(self):
        self.gen = generator.load()
        self.out = Path(self.mktemp())

    def test_write_replaces_leftovers_and_keeps_other_files(self):
        """Old .dot/.svg files of vanished machines are removed; README.md
        and the current files are kept or written."""
        self.out.mkdir()
        (self.out / "gone.m.dot").write_text("old")
        (self.out / "gone.m.svg").write_text("old")
        (self.out / "README.md").write_text("index")
        self.gen.write({"a.m.dot": "digraph {}\n"}, self.out, svg=False,
                       say=lambda *a: None)
        self.assertEqual(sorted(p.name for p in self.out.iterdir()),
                         ["README.md", "a.m.dot"])
        self.assertEqual((self.out / "a.m.dot").read_text(), "digraph {}\n")

    def test_without_dot_the_run_says_so_and_fails(self):
        """No Graphviz `dot`: the .dot files are written, the SVGs are not,
        a warning is printed and the command's exit status says so."""
        self.patch(self.gen.shutil, "which", lambda name: None)
        said = []
        ok = self.gen.write({"a.m.dot": "digraph {}\n"}, self.out,
                            say=said.append)
        self.assertFalse(ok)
        self.assertTrue((self.out / "a.m.dot").exists())
        self.assertFalse((self.out / "a.m.svg").exists())
        self.assertIn("not installed", said[0])

    def test_svg_carries_the_digest_of_its_dot(self):
        """The rendered SVG gets a comment naming the .dot and its SHA-256,
        right after the XML declaration."""
        class Done:
            stdout = b'<?xml version="1.0"?>\n<svg></svg>\n'
        self.patch(self.gen.subprocess, "run", lambda *a, **kw: Done())
        svg = self.gen.render_svg("a.m.dot", "digraph {}\n")
        digest = hashlib.sha256(b"digraph {}\n").hexdigest()
        self.assertEqual(svg.splitlines(), [
            '<?xml version="1.0"?>',
            f"<!-- generated from a.m.dot sha256:{digest} -->",
            "<svg></svg>"])
        self.assertNotEqual(self.gen.svg_stamp("a.m.dot", "digraph {}\n"),
                            self.gen.svg_stamp("a.m.dot", "digraph { }\n"))


class TwoRuns(unittest.TestCase):
    def test_two_runs_write_identical_files(self):
        """The command run twice, in processes with different hash seeds,
        writes byte-identical .dot files, equal to what the tests compare
        against."""
        gen = generator.load()
        outs = [Path(self.mktemp()).resolve() for _ in range(2)]
        script = str(generator.SCRIPT)

        def run(out, seed):
            env = dict(os.environ, PYTHONHASHSEED=str(seed))
            return getProcessOutputAndValue(
                sys.executable, [script, "--output", str(out), "--no-svg"],
                env=env, path=str(generator.REPO))

        def check(results):
            for (_stdout, stderr, code) in results:
                self.assertEqual(code, 0, stderr.decode())
            first = {p.name: p.read_bytes() for p in outs[0].iterdir()}
            second = {p.name: p.read_bytes() for p in outs[1].iterdir()}
            self.assertEqual(first, second)
            gen._use_this_checkout()
            now = {n: s.encode("utf-8") for n, s in gen.generate().items()}
            self.assertEqual(first, now)

        d = run(outs[0], 1)
        d.addCallback(lambda r1: run(outs[1], 2).addCallback(lambda r2: [r1, r2]))
        d.addCallback(check)
        return d
