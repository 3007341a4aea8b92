"""wormhole._timeline._bundle: who wrote a bundle, its messages, its clock
offset from the server's, and its phases (docs/timing.md)."""
import json
import os

from twisted.trial import unittest

from wormhole._timeline import (
    PHASES,
    TimingError,
    format_duration,
    format_size,
    load_bundle,
    merge,
    phase_label,
)

from ._scripted import LATENCY, ScriptedClient, text_transfer


class _Files:
    def write(self, events, name="bundle.json"):
        d = self.mktemp()
        os.mkdir(d)
        fn = os.path.join(d, name)
        with open(fn, "w") as f:
            json.dump(events, f)
        return fn

    def load_pair(self, **kw):
        s, r = text_transfer(**kw)
        return load_bundle(self.write(s.events)), load_bundle(self.write(r.events))


class Identity(_Files, unittest.TestCase):

    def test_role_and_side_from_our_events(self):
        """Our bundles name their role (``command``) and side (``wormhole``)."""
        s, r = self.load_pair()
        self.assertEqual((s.role, s.side), ("sender", "aaaa000001"))
        self.assertEqual((r.role, r.side), ("receiver", "bbbb000002"))

    def test_reference_style_bundle(self):
        """A bundle without our identity events (the reference's): the role
        comes from its ``import`` event naming the command module, the side
        from the ``_side`` of its messages."""
        s, _ = text_transfer(identify=False)
        events = [{"name": "import", "start": 0.0, "stop": 0.001,
                   "details": {"which": "cmd_send"}}] + s.events
        c = load_bundle(self.write(events))
        self.assertEqual((c.role, c.side), ("sender", "aaaa000001"))

    def test_role_from_file_name(self):
        """Failing everything else, 'receiver' in the file name decides."""
        _, r = text_transfer(identify=False)
        c = load_bundle(self.write(r.events, "my-receiver-run.json"))
        self.assertEqual(c.role, "receiver")

    def test_merge_orders_and_names(self):
        """merge() puts the sender first and the receiver last, and names
        clients of unknown role by their position."""
        s, r = self.load_pair()
        _, anon = text_transfer(identify=False)
        a = load_bundle(self.write(anon.events, "x.json"))
        merged = merge([r, a, s])
        self.assertEqual([c.role for c in merged], ["sender", "client 2", "receiver"])


class Messages(_Files, unittest.TestCase):

    def test_server_arrival_from_ack_or_response(self):
        """Each outbound message gets the server time it arrived at: the
        ``server_rx`` of its direct response, else its ack's ``server_tx``
        (Mailbox server protocol, "WebSocket Transport": both copy the
        command's ``id``)."""
        s, _ = self.load_pair()
        out = [m for m in s.messages if m.outbound]
        self.assertTrue(out)
        for m in out:
            self.assertAlmostEqual(m.server, m.local + LATENCY)
        inbound = [m for m in s.messages if not m.outbound]
        self.assertTrue(all(m.server is not None for m in inbound))

    def test_labels(self):
        """Mailbox messages are labelled with their phase."""
        s, _ = self.load_pair()
        labels = [m.label() for m in s.messages]
        self.assertIn("add pake", labels)
        self.assertIn("message version", labels)
        self.assertIn("claim", labels)


class Offset(_Files, unittest.TestCase):

    def test_same_clock_needs_no_offset(self):
        """Bundles whose clocks already agree with the server are not moved."""
        s, r = self.load_pair()
        self.assertEqual((s.offset, r.offset), (0.0, 0.0))

    def test_skewed_clocks_are_lined_up(self):
        """A client whose clock runs 5 s ahead (or 3 s behind) is shifted
        back to the server's clock, within the network latency, and after
        the shift every message is causal."""
        s, r = self.load_pair(sender_skew=-3.0, receiver_skew=5.0)
        self.assertLessEqual(abs(s.offset - 3.0), LATENCY + 1e-9)
        self.assertLessEqual(abs(r.offset + 5.0), LATENCY + 1e-9)
        for c in (s, r):
            for m in c.messages:
                if m.outbound:
                    self.assertLessEqual(m.local + c.offset, m.server + 1e-9)
                else:
                    self.assertGreaterEqual(m.local + c.offset, m.server - 1e-9)


class Phases(_Files, unittest.TestCase):

    def spans(self, c):
        return {name: (start, end) for name, start, end in c.phases}

    def assertSpan(self, span, start, duration):
        self.assertAlmostEqual(span[0], start, places=6)
        self.assertAlmostEqual(span[1] - span[0], duration, places=6)

    def test_sender_phases(self):
        """The sender's phases, from its events and messages: connect
        (created -> welcome), allocate/claim (allocate -> claimed), PAKE
        (pake sent -> key computed, including the wait for the peer),
        version (sent -> peer's decrypted), transfer (offer -> answer),
        close (close -> closed)."""
        s, _ = self.load_pair()
        self.assertEqual([p[0] for p in s.phases],
                         ["connect", "allocate/claim", "PAKE", "version", "transfer",
                          "close"])
        sp = self.spans(s)
        self.assertSpan(sp["connect"], 0.001, 0.010)
        self.assertSpan(sp["allocate/claim"], 0.013, 0.005)
        self.assertSpan(sp["PAKE"], 0.020, 2.003)
        self.assertSpan(sp["version"], 2.023, 0.004)
        self.assertSpan(sp["transfer"], 2.028, 0.005)
        self.assertSpan(sp["close"], 2.035, 0.002)

    def test_receiver_phases(self):
        """The receiver claims (no allocate); its transfer runs from the
        offer's arrival to its answer."""
        _, r = self.load_pair()
        sp = self.spans(r)
        self.assertSpan(sp["connect"], 2.001, 0.010)
        self.assertSpan(sp["allocate/claim"], 2.013, 0.002)
        self.assertSpan(sp["PAKE"], 2.019, 0.003)
        self.assertSpan(sp["version"], 2.023, 0.003)
        self.assertSpan(sp["transfer"], 2.030, 0.001)
        self.assertSpan(sp["close"], 2.032, 0.002)

    def test_fallbacks_without_milestones(self):
        """Without pake2/got-version events (an older bundle), the peer's
        pake and version messages end those phases."""
        s, _ = text_transfer()
        events = [ev for ev in s.events if ev["name"] not in ("pake2", "got version")]
        sp = self.spans(load_bundle(self.write(events)))
        self.assertSpan(sp["PAKE"], 0.020, 2.001)    # peer's pake at 2.021
        self.assertSpan(sp["version"], 2.023, 0.002)  # peer's version at 2.025

    def test_recorded_transit_and_transfer(self):
        """``transit connect`` and ``transfer`` events recorded by Transit
        and the CLI are phases in their own right (file mode: the transfer
        is the data, not the offer and answer)."""
        s, _ = text_transfer()
        events = s.events + [
            {"name": "transit connect", "start": 2.029, "stop": 2.031, "details": {}},
            {"name": "transfer", "start": 2.031, "stop": 2.034, "details": {}},
            {"name": "transit connect", "start": 3.0, "stop": None, "details": {}}]
        c = load_bundle(self.write(events))
        self.assertEqual([p[0] for p in c.phases],
                         ["connect", "allocate/claim", "PAKE", "version",
                          "transit connect", "transfer", "close"])
        sp = self.spans(c)
        self.assertSpan(sp["transit connect"], 2.029, 0.002)
        self.assertSpan(sp["transfer"], 2.031, 0.003)
        self.assertIsNone(c.transfer_bytes)

    def test_transfer_size_and_rate(self):
        """A transfer event with ``bytes`` (the CLI's) gives the phase label
        the payload's size and rate."""
        s, _ = text_transfer()
        events = s.events + [{"name": "transfer", "start": 2.031, "stop": 2.531,
                              "details": {"bytes": 50_000_000}}]
        c = load_bundle(self.write(events))
        self.assertEqual(c.transfer_bytes, 50_000_000)
        self.assertEqual(phase_label(c, "transfer", 2.031, 2.531),
                         "transfer 500.0 ms, 50.0 MB at 100.0 MB/s")
        self.assertEqual(phase_label(c, "close", 2.0, 2.5), "close 500.0 ms")

    def test_file_mode_without_transfer_event(self):
        """With a Transit connection but no ``transfer`` record, the data
        flows from the connection until the wormhole is closed
        (File-transfer protocol, "Transit"): that is the transfer, not the
        offer and answer before it."""
        s, _ = text_transfer()
        events = s.events + [
            {"name": "transit connect", "start": 2.029, "stop": 2.031, "details": {}}]
        sp = self.spans(load_bundle(self.write(events)))
        self.assertSpan(sp["transfer"], 2.031, 0.004)  # tx close at 2.035

    def test_missing_phases_are_left_out(self):
        """A client that never got a welcome has no connect phase (and no
        phase with a missing end)."""
        c = ScriptedClient("sender", "cc")
        c.event("wormhole", 0.0, side="cc")
        c.tx(0.1, "bind")
        fn = self.write(c.events)
        self.assertEqual(load_bundle(fn).phases, [])

    def test_phase_names(self):
        """The phases the tool knows, in protocol order."""
        self.assertEqual(PHASES, ("connect", "allocate/claim", "PAKE", "version",
                                  "transit connect", "dilation connect", "transfer",
                                  "close"))


class Errors(_Files, unittest.TestCase):

    def test_not_json(self):
        """A file that is not JSON: the error names it."""
        fn = self.mktemp()
        with open(fn, "w") as f:
            f.write("{nope")
        e = self.assertRaises(TimingError, load_bundle, fn)
        self.assertIn(fn, str(e))

    def test_not_a_bundle(self):
        """JSON that is not a list of events: the error says what was expected."""
        fn = self.write({"name": "x"})
        e = self.assertRaises(TimingError, load_bundle, fn)
        self.assertIn("list of events", str(e))

    def test_bad_events(self):
        """Events without a name or a finite start, with a stop that is not
        a time, or details that are not an object: the error names the
        event."""
        for events, why in (
                ([{"start": 1.0}], "event 0 is not an object with a name"),
                ([{"name": "a", "start": 1.0}, {"name": "b", "start": "x"}],
                 "event 1 (b) has no start time"),
                ([{"name": "a", "start": float("nan")}], "event 0 (a) has no start time"),
                ([{"name": "a", "start": True}], "event 0 (a) has no start time"),
                ([{"name": "a", "start": 1.0, "stop": "later"}],
                 "event 0 (a) has a stop that is not a time"),
                ([{"name": "a", "start": 1.0, "details": [1]}],
                 "event 0 (a) has details that are not an object")):
            e = self.assertRaises(TimingError, load_bundle, self.write(events))
            self.assertIn(why, str(e))

    def test_odd_server_stamps_ignored(self):
        """A server stamp that is not a finite number is no stamp."""
        c = ScriptedClient("sender", "cc")
        c.event("ws_send", 1.0, _side="cc", type="claim", id="0001")
        c.event("ws_receive", 1.1, _side="cc",
                message={"type": "ack", "id": "0001", "server_tx": float("nan")})
        c.event("ws_receive", 1.2, _side="cc",
                message={"type": "claimed", "server_tx": "soon"})
        t = load_bundle(self.write(c.events))
        self.assertEqual([m.server for m in t.messages], [None, None, None])
        self.assertEqual(t.offset, 0.0)

    def test_missing_file(self):
        """A missing file: the error names it."""
        e = self.assertRaises(TimingError, load_bundle, "/nonexistent/t.json")
        self.assertIn("/nonexistent/t.json", str(e))


class Durations(unittest.TestCase):

    def test_format(self):
        """Milliseconds below a second, seconds above."""
        self.assertEqual(format_duration(0.0123), "12.3 ms")
        self.assertEqual(format_duration(0.0), "0.0 ms")
        self.assertEqual(format_duration(2.5), "2.50 s")

    def test_sizes(self):
        """Decimal units, as the CLI prints sizes."""
        self.assertEqual(format_size(999), "999 B")
        self.assertEqual(format_size(1500), "1.5 kB")
        self.assertEqual(format_size(20_000_000), "20.0 MB")
        self.assertEqual(format_size(3e12), "3000.0 GB")
