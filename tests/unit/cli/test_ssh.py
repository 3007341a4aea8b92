"""``wormhole ssh`` logic (wormhole.cli.cmd_ssh) against the recording
fake wormhole: key parsing, what goes on the wire, refusals. HOME is a
temporary directory: the real ~/.ssh is never touched."""
import base64
import io
import json
import os

from twisted.internet import defer
from twisted.trial import unittest

from wormhole.cli import cmd_ssh
from wormhole.cli._config import Config
from wormhole.errors import TransferError

from ...cli.fakes import FakeFactory, FakeReactor

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDUbZdMDkBjQEQ3Ot8b+hzr6d1ABP2M0CYNHCSYxeVSs me@host"


def j(d):
    return json.dumps(d).encode("utf-8")


class ParseKey(unittest.TestCase):

    def test_good(self):
        """A key line gives its type and comment; surrounding whitespace goes."""
        self.assertEqual(cmd_ssh.parse_key(KEY + "\n"), ("ssh-ed25519", "me@host", KEY))
        ecdsa = base64.b64encode(b"\x00\x00\x00\x13ecdsa-sha2-nistp256" + b"\x01" * 8)
        self.assertEqual(cmd_ssh.parse_key("ecdsa-sha2-nistp256 " + ecdsa.decode())[:2],
                         ("ecdsa-sha2-nistp256", ""))

    def test_bad(self):
        """Options, several lines, garbage and non-strings are refused."""
        for bad in ('command="rm -rf ~" ' + KEY, KEY + "\n" + KEY, "hello", "",
                    "ssh-ed25519", "ssh-ed25519 not base64!", 7,
                    # the blob names another key type
                    KEY.replace("ssh-ed25519 ", "ssh-rsa ")):
            self.assertRaises(cmd_ssh.PubkeyError, cmd_ssh.parse_key, bad)


class _Base(unittest.TestCase):

    def setUp(self):
        self.home = os.path.abspath(self.mktemp())
        os.makedirs(self.home)
        old = os.environ.get("HOME")
        os.environ["HOME"] = self.home
        self.addCleanup(os.environ.__setitem__, "HOME", old) if old is not None else \
            self.addCleanup(os.environ.pop, "HOME", None)
        self.factory = FakeFactory()
        self.reactor = FakeReactor()
        self.answers = []
        self.cfg = Config(relay_url="ws://example/v1", create=self.factory.create,
                          stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(),
                          read_line=self.read_line)

    def read_line(self, reactor, prompt):
        self.cfg.stdout.write(prompt)
        return defer.succeed(self.answers.pop(0))

    def sent(self):
        return [json.loads(e[1]) for e in self.factory.log if e[0] == "w.send_message"]


class Invite(_Base):

    def start(self):
        d = cmd_ssh.invite(self.reactor, self.cfg)
        self.w = self.factory.wormholes[0]
        self.w.got_key()
        self.w.got_verifier()
        return d

    def keys_file(self):
        return os.path.join(self.home, ".ssh", "authorized_keys")

    def test_appid_and_append(self):
        """The ssh appid; the key offered is acknowledged and appended."""
        d = self.start()
        self.assertEqual(self.factory.create_kwargs[0]["appid"], cmd_ssh.SSH_APPID)
        self.assertIn("wormhole ssh accept 4-purple-sausages", self.cfg.stderr.getvalue())
        self.w.deliver(j({"offer": {"message": KEY + "\n"}}))
        self.successResultOf(d)
        self.assertEqual(self.sent(), [{"answer": {"message_ack": "ok"}}])
        with open(self.keys_file()) as f:
            self.assertEqual(f.read(), KEY + "\n")

    def test_refuses_options(self):
        """A key line carrying authorized_keys options is refused with an
        error to the peer, never acknowledged, nothing written."""
        d = self.start()
        self.w.deliver(j({"offer": {"message": 'command="sh" ' + KEY}}))
        self.failureResultOf(d, cmd_ssh.PubkeyError)
        self.assertEqual(self.sent(), [{"error": cmd_ssh.NOT_A_KEY}])
        self.assertFalse(os.path.exists(self.keys_file()))

    def test_refuses_file_offer(self):
        """A file offered instead of a key is declined."""
        d = self.start()
        self.w.deliver(j({"offer": {"file": {"filename": "x", "filesize": 1}}}))
        self.failureResultOf(d, TransferError)
        self.assertEqual(self.sent(), [{"error": "transfer rejected"}])
        self.assertFalse(os.path.exists(self.keys_file()))

    def test_user(self):
        """--user picks that user's home directory."""
        self.assertEqual(cmd_ssh.authorized_keys_path("root"),
                         os.path.join(os.path.expanduser("~root"), ".ssh", "authorized_keys"))
        self.assertRaises(cmd_ssh.PubkeyError, cmd_ssh.authorized_keys_path,
                          "no-such-user-here")

    def test_unwritable_checked_first(self):
        """An authorized_keys we could not write fails before any wormhole."""
        self.patch(os, "access", lambda path, mode: False)
        f = self.failureResultOf(cmd_ssh.invite(self.reactor, self.cfg), cmd_ssh.PubkeyError)
        self.assertIn("cannot write", str(f.value))
        self.assertEqual(self.factory.wormholes, [])


class Accept(_Base):

    def key(self, name, line=KEY):
        os.makedirs(os.path.join(self.home, ".ssh"), exist_ok=True)
        with open(os.path.join(self.home, ".ssh", name), "w") as f:
            f.write(line + "\n")

    def start(self, **kw):
        self.cfg.code = "4-purple-sausages"
        for k, v in kw.items():
            setattr(self.cfg, k, v)
        return cmd_ssh.accept(self.reactor, self.cfg)

    def test_sends_the_only_key(self):
        """With --yes the only ~/.ssh/*.pub goes as a text offer."""
        self.key("id_ed25519.pub")
        d = self.start(yes=True)
        w = self.factory.wormholes[0]
        self.assertEqual(self.sent(), [{"offer": {"message": KEY + "\n"}}])
        w.deliver(j({"answer": {"message_ack": "ok"}}))
        self.successResultOf(d)
        self.assertEqual(self.cfg.stdout.getvalue(),
                         "Sending public key type='ssh-ed25519' keyid='me@host'\n")

    def test_asks_first(self):
        """Without --yes it asks; anything but yes sends nothing."""
        self.key("id_ed25519.pub")
        self.answers.append("n")
        d = self.start()
        self.failureResultOf(d, TransferError)
        self.assertIn("Really send public key 'me@host' ? [y/N]: ", self.cfg.stdout.getvalue())
        self.assertEqual(self.factory.wormholes, [])

    def test_several_keys(self):
        """Several keys: the human picks one by number."""
        self.key("a.pub", KEY.replace("me@host", "a@host"))
        self.key("b.pub", KEY.replace("me@host", "b@host"))
        self.answers.append("1")
        self.start(yes=True)
        self.assertIn("  0: a.pub\n  1: b.pub\n", self.cfg.stdout.getvalue())
        self.assertIn("b@host", self.sent()[0]["offer"]["message"])

    def test_no_key(self):
        """No key at all: a readable error, no wormhole."""
        f = self.failureResultOf(self.start(yes=True), cmd_ssh.PubkeyError)
        self.assertIn("No public keys", str(f.value))
        self.assertEqual(self.factory.wormholes, [])

    def test_not_a_key(self):
        """A --key-file that is not a public key is not sent."""
        path = os.path.join(self.home, "secret")
        with open(path, "w") as f:
            f.write("-----BEGIN OPENSSH PRIVATE KEY-----\n")
        self.failureResultOf(self.start(yes=True, key_file=path), cmd_ssh.PubkeyError)
        self.assertEqual(self.factory.wormholes, [])
