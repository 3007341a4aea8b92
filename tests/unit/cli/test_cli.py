"""The click layer: options land in the Config, aliases, argument
errors (usage errors exit 2), and how every other error becomes one
readable message and exit 1."""
import io
import json

from click.testing import CliRunner
from twisted.internet import defer
from twisted.python.failure import Failure
from twisted.trial import unittest

from wormhole import errors
from wormhole.cli import cli, cmd_receive, cmd_send
from wormhole.cli._config import Config
from wormhole.cli.public_relay import RENDEZVOUS_RELAY, TRANSIT_RELAY
from wormhole.timing import DebugTiming


class Parsing(unittest.TestCase):

    def invoke(self, args, env=None):
        self.calls = []
        result = CliRunner().invoke(
            cli.wormhole, args, env=env or {},
            obj={"dispatch": lambda command, cfg: self.calls.append((command, cfg))})
        return result

    def test_public_relay_names(self):
        """Applications import these two names (docs/cli.md, "Options")."""
        self.assertEqual(RENDEZVOUS_RELAY, "ws://relay.magic-wormhole.io:4000/v1")
        self.assertEqual(TRANSIT_RELAY, "tcp:transit.magic-wormhole.io:4001")

    def test_send_defaults(self):
        """send --text: the default appid, relay, code length 2."""
        r = self.invoke(["send", "--text", "hi"])
        self.assertEqual(r.exit_code, 0, r.output)
        [(command, cfg)] = self.calls
        self.assertIs(command, cmd_send.send)
        self.assertEqual((cfg.appid, cfg.relay_url, cfg.transit_helper),
                         ("lothar.com/wormhole/text-or-file-xfer", RENDEZVOUS_RELAY,
                          TRANSIT_RELAY))
        self.assertEqual((cfg.text, cfg.code_length, cfg.verify, cfg.code), ("hi", 2, False, None))

    def test_protocol_choice(self):
        """transfer-v2 is the default for a text, one path and several;
        --classic forces classic (one path or a text); --tor means
        classic, and what needs transfer-v2 is refused with --tor."""
        for args, classic in ((["send", "--text", "x"], False), (["send", "f"], False),
                              (["send", "f", "g"], False), (["send", "--classic", "f"], True),
                              (["send", "--tor", "f"], True), (["receive"], False),
                              (["receive", "--classic"], True), (["receive", "--tor"], True)):
            r = self.invoke(args)
            self.assertEqual(r.exit_code, 0, r.output)
            self.assertEqual(self.calls[0][1].classic, classic, args)
        for args in (["send", "--tor", "f", "g"], ["send", "--tor", "--transfer-v2", "f"],
                     ["share", "--tor"], ["send", "--classic", "f", "g"],
                     ["send", "--classic", "--transfer-v2", "f"]):
            r = self.invoke(args)
            self.assertEqual(r.exit_code, 2, (args, r.output))  # usage errors (docs/cli.md)
            self.assertIn("Usage: wormhole", r.output)
            self.assertEqual(self.calls, [], args)

    def test_top_level_options(self):
        """--appid, --relay-url, --transit-helper, --dump-timing go before
        the command."""
        r = self.invoke(["--appid", "a/b", "--relay-url", "ws://h:1/v1",
                         "--transit-helper", "tcp:h:2", "--dump-timing", "t.json",
                         "send", "--text", "x"])
        self.assertEqual(r.exit_code, 0, r.output)
        cfg = self.calls[0][1]
        self.assertEqual((cfg.appid, cfg.relay_url, cfg.transit_helper, cfg.dump_timing),
                         ("a/b", "ws://h:1/v1", "tcp:h:2", "t.json"))

    def test_env_vars(self):
        """WORMHOLE_RELAY_URL and WORMHOLE_TRANSIT_HELPER set the defaults."""
        self.invoke(["send", "--text", "x"], env={"WORMHOLE_RELAY_URL": "ws://e:1/v1",
                                                  "WORMHOLE_TRANSIT_HELPER": "tcp:e:2"})
        cfg = self.calls[0][1]
        self.assertEqual((cfg.relay_url, cfg.transit_helper), ("ws://e:1/v1", "tcp:e:2"))

    def test_send_options(self):
        """Short and long send options."""
        self.invoke(["send", "-c", "3", "-v", "--code", "5-a-b", "--hide-progress",
                     "--no-qr", "--text", "x"])
        cfg = self.calls[0][1]
        self.assertEqual((cfg.code_length, cfg.verify, cfg.code, cfg.hide_progress, cfg.qr),
                         (3, True, "5-a-b", True, False))

    def test_send_what(self):
        """A positional WHAT is kept (the command refuses files)."""
        self.invoke(["send", "some.txt"])
        self.assertEqual(self.calls[0][1].what, "some.txt")

    def test_aliases(self):
        """tx is send, rx is receive."""
        self.invoke(["tx", "--text", "x"])
        self.invoke(["rx", "4-a-b"])
        self.assertIs(self.calls[0][0], cmd_receive.receive)

    def test_receive(self):
        """receive CODE with -0/-v/-a/-t/-o options."""
        r = self.invoke(["receive", "-v", "-t", "-o", "out", "7-x-y"])
        self.assertEqual(r.exit_code, 0, r.output)
        cfg = self.calls[0][1]
        self.assertEqual((cfg.code, cfg.verify, cfg.only_text, cfg.output_file),
                         ("7-x-y", True, True, "out"))

    def test_receive_no_code(self):
        """Without CODE, the command will prompt."""
        self.invoke(["receive"])
        self.assertIsNone(self.calls[0][1].code)

    def test_share_help_lists_what_works(self):
        """``share --help`` lists no Tor option (transfer-v2 does not go
        through Tor), and every option it lists is taken by ``share``."""
        r = self.invoke(["share", "--help"])
        self.assertEqual(r.exit_code, 0, r.output)
        for absent in ("--tor", "--launch-tor", "--tor-control-port"):
            self.assertNotIn(absent, r.output)
        for args in (["-0"], ["-c", "3"], ["-v"], ["--hide-progress"], ["--no-listen"],
                     ["--code", "4-a-b"], ["--accept-file"], ["--debug-state", "B"],
                     ["--peer-timeout", "5"], ["f", "g"]):
            option = args[0]
            if option.startswith("-"):
                self.assertIn(option.split("/")[0], r.output)
            self.calls = []
            done = self.invoke(["share", *args])
            self.assertEqual(done.exit_code, 0, (args, done.output))
            self.assertEqual(len(self.calls), 1, args)
        self.assertEqual(self.invoke(["share", "--tor"]).exit_code, 2)

    def test_receive_several_codes(self):
        """A code split into several arguments is refused, a usage error
        (exit 2)."""
        r = self.invoke(["receive", "7", "purple", "sausages"])
        self.assertEqual(r.exit_code, 2)
        self.assertIn("one argument", r.output)
        self.assertEqual(self.calls, [])

    def test_zeromode_and_code(self):
        """-0 with a code is refused, a usage error (exit 2)."""
        r = self.invoke(["receive", "-0", "7-a-b"])
        self.assertEqual(r.exit_code, 2)

    def test_tor_options(self):
        """--tor, --launch-tor, --tor-control-port land in the Config (either
        of the last two implies --tor); the last two together are refused."""
        self.invoke(["send", "--tor", "--text", "x"])
        cfg = self.calls[0][1]
        self.assertEqual((cfg.tor, cfg.launch_tor, cfg.tor_control_port), (True, False, None))
        self.invoke(["receive", "--launch-tor", "4-a-b"])
        self.assertEqual((self.calls[0][1].tor, self.calls[0][1].launch_tor), (True, True))
        self.invoke(["receive", "--tor-control-port", "tcp:127.0.0.1:9051", "4-a-b"])
        self.assertEqual((self.calls[0][1].tor, self.calls[0][1].tor_control_port),
                         (True, "tcp:127.0.0.1:9051"))
        self.calls.clear()
        r = self.invoke(["send", "--launch-tor", "--tor-control-port", "tcp:h:1", "--text", "x"])
        self.assertEqual(r.exit_code, 2)
        self.assertIn("mutually exclusive", r.output)
        self.assertEqual(self.calls, [])

    def test_debug_state(self):
        """--debug-state alone means every machine; a list is checked and
        handed to debug_set_trace space-separated."""
        self.invoke(["send", "--debug-state", "--text", "x"])
        self.assertEqual(self.calls[0][1].debug_state, " ".join(cli.MACHINES))
        self.invoke(["receive", "--debug-state", "B,N,RC", "4-a-b"])
        self.assertEqual(self.calls[0][1].debug_state, "B N RC")
        r = self.invoke(["send", "--debug-state", "B,ZZ", "--text", "x"])
        self.assertEqual(r.exit_code, 2)
        self.assertIn("ZZ", r.output)

    def test_debug_state_before_the_command(self):
        """--debug-state is also accepted before the command (with a value:
        a list or "all"); the command's own option wins."""
        self.invoke(["--debug-state", "all", "send", "--text", "x"])
        self.assertEqual(self.calls[0][1].debug_state, " ".join(cli.MACHINES))
        self.invoke(["--debug-state", "B", "receive", "--debug-state", "N", "4-a-b"])
        self.assertEqual(self.calls[0][1].debug_state, "N")
        r = self.invoke(["--debug-state", "send", "--text", "x"])
        self.assertEqual(r.exit_code, 2)

    def test_version(self):
        """--version prints the program name and version."""
        r = self.invoke(["--version"])
        self.assertEqual(r.exit_code, 0)
        self.assertRegex(r.output, r"^wormhole \d+\.\d+")

    def test_help_command(self):
        """`wormhole help` shows the group's help."""
        r = self.invoke(["help"])
        self.assertIn("receive", r.output)
        self.assertIn("send", r.output)


class Errors(unittest.TestCase):

    def setUp(self):
        self.cfg = Config(relay_url="ws://h:1/v1", stdout=io.StringIO(), stderr=io.StringIO())

    def run_failing(self, exc):
        d = cli._main(None, lambda reactor, cfg: defer.fail(exc), self.cfg)
        f = self.failureResultOf(d, SystemExit)
        self.assertEqual(f.value.code, 1)
        return self.cfg.stderr.getvalue()

    def test_each_error_is_one_readable_message(self):
        """Every error users meet prints an ERROR line on stderr, no
        traceback, exit 1."""
        cases = [
            (errors.WelcomeError("go away"), "go away"),
            (errors.ServerConnectionError("ws://h:1/v1", "Connection refused"),
             "cannot connect to the mailbox server at ws://h:1/v1: Connection refused"),
            (errors.ServerError("bad"), "bad"),
            (errors.LonelyError(), "never showed up"),
            (errors.WrongPasswordError(), str(errors.WrongPasswordError())),
            (errors.KeyFormatError("no hyphen"), "no hyphen"),
            (errors.RelayURLError("must start with ws://"), "ws://h:1/v1"),
            (errors.TransferError("remote said no"), "remote said no"),
        ]
        for exc, expected in cases:
            self.cfg.stderr = io.StringIO()
            out = self.run_failing(exc)
            self.assertTrue(out.startswith("ERROR: "), out)
            self.assertIn(expected, out)
            self.assertNotIn("Traceback", out)
        self.assertEqual(self.cfg.stdout.getvalue(), "")

    def test_declined_exits_3(self):
        """A transfer declined by a human (either side) or refused by our
        receiver's rules before the transfer exits 3, one ERROR line, no
        traceback; other failures (a zipfile refused after it came) exit 1."""
        from wormhole._landing import Refused
        from wormhole.transfer import Declined, DeclinedOffer, peer_gave_up
        for exc, status in [(Declined("the receiver declined: transfer rejected"), 3),
                            (DeclinedOffer("refusing to overwrite existing 'x'"), 3),
                            (Refused("zip entry '../x' climbs out"), 1),
                            (peer_gave_up("sender", "transfer rejected"), 3),
                            (peer_gave_up("receiver", "disk on fire"), 1),
                            (errors.TransferError("the receiver closed the connection"), 1)]:
            self.cfg.stderr = io.StringIO()
            d = cli._main(None, lambda reactor, cfg, exc=exc: defer.fail(exc), self.cfg)
            f = self.failureResultOf(d, SystemExit)
            self.assertEqual(f.value.code, status, exc)
            out = self.cfg.stderr.getvalue()
            self.assertEqual(out, f"ERROR: {exc}\n")

    def test_transit_error_is_one_line(self):
        """No Transit connection: one ERROR line that says the other side
        may have gone away and names the relay tried."""
        from wormhole.transit import TransitError
        self.cfg.transit_helper = "tcp:relay.example:4001"
        out = self.run_failing(TransitError("no connection worked"))
        self.assertEqual(out.count("\n"), 1, out)
        self.assertIn("(no connection worked): it may have gone away", out)
        self.assertIn("tcp:relay.example:4001", out)

    def test_connection_reason_failure(self):
        """A Failure as the connection reason is shown by its message."""
        exc = errors.ServerConnectionError("ws://h:1/v1",
                                           Failure(ConnectionRefusedError("refused!")))
        self.assertIn("refused!", self.run_failing(exc))

    def test_bug_shows_traceback(self):
        """An unexpected exception (a bug) keeps its traceback, exit 1."""
        out = self.run_failing(ZeroDivisionError("oops"))
        self.assertIn("Traceback", out)
        self.assertIn("ERROR: oops", out)

    def test_dump_timing(self):
        """--dump-timing writes the timing JSON after the command, also
        when it failed."""
        fn = self.mktemp()
        self.cfg.dump_timing = fn
        self.cfg.timing = DebugTiming()
        self.cfg.timing.add("something")
        self.run_failing(errors.LonelyError())
        with open(fn) as f:
            self.assertEqual(json.load(f)[0]["name"], "something")
        self.assertIn(f"Timing data written to {fn}", self.cfg.stderr.getvalue())

    def test_success(self):
        """A command that succeeds gives no message."""
        d = cli._main(None, lambda reactor, cfg: defer.succeed(None), self.cfg)
        self.successResultOf(d)
        self.assertEqual(self.cfg.stderr.getvalue(), "")


class DescribeError(unittest.TestCase):

    def test_transit_error(self):
        """A Transit failure is one readable message naming the relay."""
        from wormhole.cli._config import Config
        from wormhole.cli.cli import describe_error
        from wormhole.transit import TransitError
        message = describe_error(TransitError("all attempts failed"),
                                 Config(transit_helper="tcp:relay.example:4001"))
        self.assertIn("all attempts failed", message)
        self.assertIn("tcp:relay.example:4001", message)
        self.assertTrue(message.startswith("ERROR: "))


class SSHParsing(unittest.TestCase):
    invoke = Parsing.invoke

    def test_invite(self):
        """ssh invite -c N -u USER reaches cmd_ssh.invite."""
        from wormhole.cli import cmd_ssh
        r = self.invoke(["ssh", "invite", "-c", "3", "-u", "alice"])
        self.assertEqual(r.exit_code, 0, r.output)
        [(command, cfg)] = self.calls
        self.assertIs(command, cmd_ssh.invite)
        self.assertEqual((cfg.code_length, cfg.ssh_user), (3, "alice"))

    def test_accept(self):
        """ssh accept -F FILE -y CODE reaches cmd_ssh.accept."""
        from wormhole.cli import cmd_ssh
        path = self.mktemp()
        with open(path, "w") as f:
            f.write("k")
        r = self.invoke(["ssh", "accept", "-F", path, "-y", "4-a-b"])
        self.assertEqual(r.exit_code, 0, r.output)
        [(command, cfg)] = self.calls
        self.assertIs(command, cmd_ssh.accept)
        self.assertEqual((cfg.key_file, cfg.yes, cfg.code), (path, True, "4-a-b"))

    def test_accept_needs_code(self):
        """ssh accept without CODE is a usage error."""
        r = self.invoke(["ssh", "accept"])
        self.assertNotEqual(r.exit_code, 0)
        self.assertEqual(self.calls, [])


class ReceiveYes(unittest.TestCase):
    invoke = Parsing.invoke

    def test_yes_is_accept_file(self):
        """receive --yes is --accept-file (the reference only has the latter)."""
        r = self.invoke(["receive", "--yes", "4-a-b"])
        self.assertEqual(r.exit_code, 0, r.output)
        self.assertTrue(self.calls[0][1].accept_file)
        r = self.invoke(["receive", "4-a-b"])
        self.assertFalse(self.calls[0][1].accept_file)
