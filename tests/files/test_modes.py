"""A directory's file modes survive a classic transfer
(docs/security.md, "Modes (`wormhole._landing.landed_mode`)"): a tree of
0755, 0644, 0600 and 0700 files arrives with the same modes ours -> ours,
ours -> reference 0.24 and reference 0.24 -> ours (the zipfile's external
attributes carry them; the receiver keeps the permission bits, never more
than its umask allows: 022 here, which takes nothing from these modes).
Set-uid, set-gid and sticky never arrive: our zipfile does not carry them
to the reference (whose receiver would apply them), our receiver drops
them from the reference's. Relay only (``--no-listen``), through our relay
on 127.0.0.1."""
import os

from twisted.internet import defer
from twisted.trial import unittest

from . import _support as s
from ._modes import MODES, SPECIAL, make_moded_tree, modes_of


class Modes(unittest.TestCase):
    timeout = 180

    def setUp(self):
        # the receivers (our children) inherit it
        old = os.umask(0o022)
        self.addCleanup(os.umask, old)

    @defer.inlineCallbacks
    def run_tree(self, sender, receiver, modes=MODES):
        servers = yield s.Servers.start(self, relay="ours")
        src = os.path.abspath(self.mktemp())
        tree = make_moded_tree(os.path.join(src, "moded"), modes)
        self.assertEqual(modes_of(tree), modes)
        send, recv, out = yield s.transfer(self, servers, sender, receiver, tree,
                                           no_listen=True)
        s.assert_ok(self, send, recv)
        # ours takes away what the umask (022) forbids; the reference
        # applies an entry's mode as it is
        allowed = 0o755 if receiver == "ours" else 0o777
        self.assertEqual(modes_of(os.path.join(out, "moded")),
                         {rel: mode & allowed for rel, mode in modes.items()})

    def test_ours_to_ours(self):
        """Our sender, our receiver (--classic): every mode kept."""
        return self.run_tree("ours", "ours")

    def test_ours_to_reference(self):
        """Our zipfile carries the modes the reference restores."""
        return self.run_tree("ours", "ref")

    def test_reference_to_ours(self):
        """The reference's zipfile's modes are kept by our receiver."""
        return self.run_tree("ref", "ours")

    def test_special_bits_ours_to_reference(self):
        """The reference's receiver applies an entry's mode as it is: our
        zipfile carries no set-uid, set-gid or sticky for it to apply."""
        return self.run_tree("ours", "ref", SPECIAL)

    def test_special_bits_reference_to_ours(self):
        """The reference's zipfile carries them: our receiver drops them."""
        return self.run_tree("ref", "ours", SPECIAL)
