"""The hostile transfer-v2 suites run again on ``--json`` (docs/cli.md
"JSON lines"): the command runs the library's ``Transfer`` or ``Share``,
so each attack must end it as without ``--json`` (the one ``ERROR:``
line, the status, nothing outside the folder touched), and stdout must
hold JSON lines of the documented schema only, with one ``error`` line
saying the same as the ERROR line (the peer's text as it came: JSON
escapes it, so it is compared escaped as the terminal shows it)."""
from wormhole.session import escape_text

from ..cli._json_schema import lines_of


class JSONVictim:
    """Mixed in before a ``V2PeerCase`` suite: its victim runs with ``--json``."""

    def pair(self, command, peer_mode, *args, **kw):
        return super().pair(command + "-json", peer_mode, *args, **kw)

    def assert_error(self, victim, words, status=1):
        line = super().assert_error(victim, words, status)
        errors = [e for e in lines_of(victim.run) if e["type"] == "error"]
        self.assertEqual(len(errors), 1, victim.describe())
        self.assertIn(words, escape_text(errors[0]["message"]), victim.describe())
        return line
