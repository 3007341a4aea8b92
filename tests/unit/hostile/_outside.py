"""Support for the hostile tests of the receive folder: a folder outside
it, holding one file, that nothing the receiver does may change."""
import os

PRECIOUS = b"precious, outside the receive folder"


class Outside:
    """A folder beside the receive folder, with one file, and a snapshot of
    everything in it (names, bytes, modes) to compare with."""

    def __init__(self, testcase):
        self.path = os.path.abspath(testcase.mktemp())
        os.makedirs(self.path)
        self.victim = os.path.join(self.path, "victim")
        with open(self.victim, "wb") as f:
            f.write(PRECIOUS)
        os.chmod(self.victim, 0o600)
        self.missing = os.path.join(self.path, "created-through-a-link")
        self.before = self.snapshot()

    def snapshot(self):
        seen = {}
        for name in sorted(os.listdir(self.path)):
            p = os.path.join(self.path, name)
            st = os.lstat(p)
            with open(p, "rb") as f:
                seen[name] = (f.read(), st.st_mode)
        return seen

    def targets(self):
        """Where a planted link points: an existing file, and a name that
        does not exist yet (a write through the link would create it)."""
        return (self.victim, self.missing)
