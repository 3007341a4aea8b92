"""docs/api.md's lists of known differences from the reference 0.24, read
by the tests that compare us with it (tests/app/test_surface.py for names
and signatures, tests/client/test_behaviour_vs_reference.py for
behaviour), so a difference cannot be accepted without being documented
and an entry cannot outlive its difference."""

import os
import re

from tests._processes import REPO_ROOT

DOC = os.path.join(REPO_ROOT, "docs", "api.md")


def documented(section, prefix):
    """The keys (or ``prefix.*`` patterns) listed in docs/api.md's
    ``## <section>``: the backticked names starting with ``prefix``
    before the colon that begins each bullet's reason."""
    with open(DOC) as f:
        text = f.read()
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    keys = []
    for bullet in re.split(r"\n- ", body)[1:]:
        head = bullet.split("`:", 1)[0] + "`"
        keys.extend(k for k in re.findall(r"`([^`]+)`", head) if k.startswith(prefix))
    return keys


def is_documented(key, patterns):
    for p in patterns:
        if p == key or (p.endswith(".*") and key.startswith(p[:-1])):
            return True
    return False


def stale(found, patterns):
    """The documented patterns that match no difference found."""
    return [p for p in patterns if not any(is_documented(k, [p]) for k in found)]
