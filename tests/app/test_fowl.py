"""fowl 26.8.0's own test suite (shipped in its wheel as ``fowl.test``)
runs on this library and our Mailbox server plugin (issue 12 acceptance):
every fowl test that passes on the reference 0.24 in this environment
(the suite run first on the reference venv, in the same test) passes here.

Measured here (docs/api.md): 17 passed and 1 skipped on both (test_iperf3
needs the iperf3 program).
"""

import os
import re
import subprocess

from twisted.internet import defer
from twisted.trial import unittest

from tests._processes import REPO_ROOT
from tests.files._support import Namespace, spawn

from ._fowl import fowl_env, our_python, reference_python, require_fowl

# the reference's baseline here; a smaller one means the environment
# broke fowl's suite, which must not make this test pass vacuously
MIN_REFERENCE_PASSED = 17


def outcomes(output):
    """{test id: outcome} from pytest's ``-rA`` summary."""
    found = {}
    for outcome, rest in re.findall(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (.*)$",
                                    output, re.M):
        m = re.search(r"fowl/test/(\S+)", rest)
        if m:
            # a skip names file:line: drop the line number
            found[re.sub(r":\d+:$", "", m.group(1))] = outcome
    return found


def failure_reports(output, tests):
    """pytest's report of each of ``tests`` (``file::name``) in ``output``,
    so that a failure here shows why fowl's test failed."""
    reports = []
    for test in tests:
        name = test.split("::")[-1]
        m = re.search(rf"^_+ {re.escape(name)} _+$", output, re.M)
        reports.append(output[m.start():m.start() + 6000] if m else f"{test}: no report")
    return "\n".join(reports)


class FowlSuite(unittest.TestCase):
    timeout = 800  # up to two runs of the suite on each library

    @defer.inlineCallbacks
    def run_suite(self, python):
        """fowl's suite with ``python`` (ours or the reference's venv), in
        a loopback-only namespace of its own (fowl's server takes the fixed
        port 4000) and a fresh directory (its server's relay.sqlite)."""
        require_fowl(python)
        ns = Namespace.create(self)
        cwd = self.mktemp()
        os.makedirs(cwd)
        run = spawn(self, [python, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                           "--pyargs", "fowl.test"],
                    f"fowl tests ({python})", ns=ns, env=fowl_env(python), cwd=cwd)
        yield run.ended
        return run.stdout.decode("utf-8", "replace")

    @defer.inlineCallbacks
    def passed(self, python, needed):
        """The fowl tests that pass with ``python``, and the last run's
        output. fowl's tests wait on fixed timeouts (its test_happy_path
        failed once on the reference itself on a loaded machine), so a run
        that misses one of ``needed`` is repeated once, on either library
        alike; a test counts when it passed in a run."""
        passed, out = set(), ""
        for _attempt in range(2):
            out = yield self.run_suite(python)
            passed |= {t for t, o in outcomes(out).items() if o == "PASSED"}
            if needed(passed):
                break
        return passed, out

    @defer.inlineCallbacks
    def test_fowl_suite_passes_on_our_library(self):
        """Every fowl test that passes on the reference passes with
        ``import wormhole`` being this library and the Mailbox server being
        our ``wormhole-mailbox`` twistd plugin."""
        ref_passed, reference = yield self.passed(
            reference_python(), lambda p: len(p) >= MIN_REFERENCE_PASSED)
        self.assertGreaterEqual(len(ref_passed), MIN_REFERENCE_PASSED, reference[-4000:])
        ours, out = yield self.passed(our_python(), lambda p: ref_passed <= p)
        failing_here = sorted(ref_passed - ours)
        self.assertEqual(failing_here, [], failure_reports(out, failing_here))

    def test_fowl_imports_this_library(self):
        """The fowl under test runs on our ``wormhole`` package (installed
        with --no-deps), not on a copy of the reference."""
        python = our_python()
        require_fowl(python)
        out = subprocess.run([python, "-c", "import fowl.api, wormhole; print(wormhole.__file__)"],
                             capture_output=True, text=True, check=True)
        self.assertEqual(os.path.dirname(out.stdout.strip()),
                         os.path.join(REPO_ROOT, "src", "wormhole"))

    def test_outcomes_parser(self):
        """The -rA summary parser keys outcomes by the test's path in fowl."""
        text = ("PASSED ../../x/site-packages/fowl/test/test_cli.py::test_happy_path\n"
                "FAILED ../x/fowl/test/test_forward.py::test_forward[True-64] - boom\n"
                "SKIPPED [1] ../x/fowl/test/test_iperf3.py:69: no iperf3 found\n")
        self.assertEqual(outcomes(text), {
            "test_cli.py::test_happy_path": "PASSED",
            "test_forward.py::test_forward[True-64]": "FAILED",
            "test_iperf3.py": "SKIPPED"})
