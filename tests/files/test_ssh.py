"""``wormhole ssh invite`` / ``accept`` end to end, ours with ours and
with the reference 0.24 both ways, on our Mailbox server. Every process
gets a temporary HOME: the real ~/.ssh is never read or written."""
import base64
import os
import struct

from twisted.internet import defer
from twisted.trial import unittest

from . import _support as s


def key_line(comment="tester@example"):
    kind = b"ssh-ed25519"
    blob = struct.pack(">I", len(kind)) + kind + struct.pack(">I", 32) + os.urandom(32)
    return f"ssh-ed25519 {base64.b64encode(blob).decode()} {comment}"


class SSH(unittest.TestCase):
    timeout = 90

    @defer.inlineCallbacks
    def setUp(self):
        self.servers = yield s.Servers.start(self)

    def home(self, with_ssh_dir=True, key=None):
        home = os.path.abspath(self.mktemp())
        os.makedirs(os.path.join(home, ".ssh") if with_ssh_dir else home)
        if key is not None:
            with open(os.path.join(home, ".ssh", "id_ed25519.pub"), "w") as f:
                f.write(key + "\n")
        return home

    @defer.inlineCallbacks
    def exchange(self, inviter, accepter, invite_home_has_ssh=True):
        key = key_line()
        inviter_home = self.home(with_ssh_dir=invite_home_has_ssh)
        accepter_home = self.home(key=key)
        argv = s.ARGV[inviter](self.servers, "ssh", "invite")
        inv = s.spawn(self, argv, f"{inviter} inviter",
                      env=dict(s._env(inviter), HOME=inviter_home))
        m = yield inv.wait_for(rb"wormhole ssh accept (\S+)")
        code = m.group(1).decode()
        argv = s.ARGV[accepter](self.servers, "ssh", "accept", "--yes", code)
        acc = s.spawn(self, argv, f"{accepter} accepter",
                      env=dict(s._env(accepter), HOME=accepter_home))
        yield s.wait_both(inv, acc)
        s.assert_ok(self, inv, acc)
        with open(os.path.join(inviter_home, ".ssh", "authorized_keys")) as f:
            self.assertEqual(f.read(), key + "\n")
        self.assertIn(b"Sending public key type='ssh-ed25519' keyid='tester@example'",
                      acc.stdout)
        return inv, acc, inviter_home

    @defer.inlineCallbacks
    def test_ours_with_ours(self):
        """Our accept sends the only ~/.ssh/*.pub; our invite creates
        ~/.ssh (0700) and authorized_keys (0600) and appends the line."""
        inv, acc, home = yield self.exchange("ours", "ours", invite_home_has_ssh=False)
        self.assertEqual(os.stat(os.path.join(home, ".ssh")).st_mode & 0o777, 0o700)
        self.assertEqual(os.stat(os.path.join(home, ".ssh", "authorized_keys")).st_mode
                         & 0o777, 0o600)
        self.assertIn(b"Appended key type='ssh-ed25519' id='tester@example'", inv.stderr)

    def test_reference_accept_to_our_invite(self):
        """The reference's key reaches our authorized_keys."""
        return self.exchange("ours", "ref")

    def test_our_accept_to_reference_invite(self):
        """Our key reaches the reference's authorized_keys."""
        return self.exchange("ref", "ours")

    @defer.inlineCallbacks
    def test_appends_to_existing(self):
        """An existing authorized_keys keeps its lines (a missing final
        newline is added before ours)."""
        home = self.home()
        path = os.path.join(home, ".ssh", "authorized_keys")
        with open(path, "w") as f:
            f.write("ssh-ed25519 AAAAold old@example")
        key = key_line("new@example")
        inv = s.spawn(self, s.our_argv(self.servers, "ssh", "invite"), "inviter",
                      env=dict(s.OUR_ENV, HOME=home))
        code = (yield inv.wait_for(rb"wormhole ssh accept (\S+)")).group(1).decode()
        keyfile = os.path.join(self.home(), "k.pub")
        with open(keyfile, "w") as f:
            f.write(key + "\n")
        acc = s.spawn(self, s.our_argv(self.servers, "ssh", "accept", "-F", keyfile, "-y",
                                       code), "accepter",
                      env=dict(s.OUR_ENV, HOME=self.home()))
        yield s.wait_both(inv, acc)
        s.assert_ok(self, inv, acc)
        with open(path) as f:
            self.assertEqual(f.read(), "ssh-ed25519 AAAAold old@example\n" + key + "\n")
