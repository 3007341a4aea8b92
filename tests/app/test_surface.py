"""Our public surface against the reference 0.24's (docs/api.md, "Surface differences").

tests/app/surface_probe.py runs once with our venv's python and once with
the reference venv's; every name the reference exposes (its public modules
and the internals applications reach for) must exist here with a
compatible call signature, unless docs/api.md's "Surface differences"
section lists it with its reason. Our extra names are not differences.

Compatible means: the reference's parameters, in its order and of its
kinds, come first (same names); anything we add has a default. A kind
(class, function, exception, ...) must match.
"""

import json
import os
import subprocess
import sys

from twisted.trial import unittest

from tests._apidoc import documented, is_documented, stale
from tests._processes import REPO_ROOT, child_env, reference_bin

PROBE = os.path.join(REPO_ROOT, "tests", "app", "surface_probe.py")


def probe(python):
    out = subprocess.run([python, PROBE], capture_output=True, text=True, env=child_env(),
                         cwd=REPO_ROOT, timeout=120)
    if out.returncode != 0:
        raise AssertionError(f"{python} {PROBE} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def compatible_params(theirs, ours):
    """None if ``ours`` accepts every call ``theirs`` accepts, else why not."""
    if theirs is None or ours is None:
        return None if theirs == ours else "signature not introspectable on one side"
    for i, (name, kind, has_default) in enumerate(theirs):
        if i >= len(ours):
            return f"parameter {name!r} is missing"
        oname, okind, odefault = ours[i]
        if (oname, okind) != (name, kind):
            return f"parameter {i} is {oname!r} ({okind}), the reference has {name!r} ({kind})"
        if has_default and not odefault:
            return f"parameter {name!r} has no default here"
    extra = [p for p in ours[len(theirs):]
             if not p[2] and p[1] not in ("VAR_POSITIONAL", "VAR_KEYWORD")]
    if extra:
        return f"required parameters the reference lacks: {[p[0] for p in extra]}"
    return None


def differences(reference, ours):
    found = {}
    for key, theirs in sorted(reference.items()):
        mine = ours.get(key)
        if mine is None or mine.get("kind") == "missing":
            found[key] = "missing"
        elif theirs.get("kind") != mine.get("kind"):
            found[key] = f"a {mine.get('kind')} here, a {theirs.get('kind')} in the reference"
        elif "params" in theirs:
            why = compatible_params(theirs["params"], mine.get("params"))
            if why:
                found[key] = why
    return found


class Surface(unittest.TestCase):
    timeout = 240

    def test_reference_surface_is_ours(self):
        """Every reference name is here with a compatible signature, or
        docs/api.md says why not; every documented difference is real."""
        reference = probe(reference_bin("python"))
        ours = probe(sys.executable)
        self.assertGreater(len(reference), 150)  # the probe saw the reference's API
        found = differences(reference, ours)
        patterns = documented("Surface differences", "wormhole.")
        undocumented = {k: v for k, v in found.items() if not is_documented(k, patterns)}
        self.assertEqual(undocumented, {}, "new differences from the reference 0.24: fix "
                         "them, or list them in docs/api.md 'Surface differences' with "
                         "the reason")
        self.assertEqual(stale(found, patterns), [],
                         "docs/api.md lists differences that are gone")

    def test_comparison_catches_differences(self):
        """The comparison itself: a missing name, another kind, a renamed
        or reordered parameter, a lost default and a new required
        parameter are all differences; extra defaulted ones are not."""
        ref = {"m.f": {"kind": "function", "params": [["a", "POSITIONAL_OR_KEYWORD", False],
                                                      ["b", "POSITIONAL_OR_KEYWORD", True]]},
               "m.C": {"kind": "class", "params": []}, "m.E": {"kind": "exception"}}
        same = dict(ref)
        self.assertEqual(differences(ref, same), {})
        extra = dict(ref, **{"m.f": {"kind": "function", "params": [
            ["a", "POSITIONAL_OR_KEYWORD", False], ["b", "POSITIONAL_OR_KEYWORD", True],
            ["c", "KEYWORD_ONLY", True]]}})
        self.assertEqual(differences(ref, extra), {})
        for params in ([["b", "POSITIONAL_OR_KEYWORD", True],
                        ["a", "POSITIONAL_OR_KEYWORD", False]],
                       [["a", "POSITIONAL_OR_KEYWORD", False],
                        ["b", "POSITIONAL_OR_KEYWORD", False]],
                       [["a", "POSITIONAL_OR_KEYWORD", False]],
                       [["a", "POSITIONAL_OR_KEYWORD", False], ["b", "POSITIONAL_OR_KEYWORD", True],
                        ["c", "POSITIONAL_OR_KEYWORD", False]]):
            changed = dict(ref, **{"m.f": {"kind": "function", "params": params}})
            self.assertEqual(list(differences(ref, changed)), ["m.f"], params)
        self.assertEqual(list(differences(ref, {"m.f": ref["m.f"], "m.C": ref["m.C"]})), ["m.E"])
        self.assertEqual(list(differences(ref, dict(ref, **{"m.C": {"kind": "function",
                                                                    "params": []}}))), ["m.C"])
        self.assertTrue(is_documented("m.T.x", ["m.T.*"]))
        self.assertFalse(is_documented("m.Tx", ["m.T.*"]))
