"""What the stateful searches over the machines share (docs/testing.md,
"Searching the machines"): the example counts, with a longer profile
for a manual run, and a watch on the log for errors nobody handled."""

import os

from hypothesis import HealthCheck, settings
from twisted.logger import globalLogPublisher

# WORMHOLE_SEARCH=long: many more examples and longer runs, for a search
# by hand (minutes); unset, the counts CI can afford (seconds per search)
PROFILE_VARIABLE = "WORMHOLE_SEARCH"
LONG_FACTOR = 20


def search_settings(examples, steps):
    """Settings for one RuleBasedStateMachine: ``examples`` runs of at
    most ``steps`` rules each in CI, twenty times as many runs (and twice
    the steps) when WORMHOLE_SEARCH=long. Seeds are printed on failure
    (``print_blob``) so a failing run can be replayed."""
    if os.environ.get(PROFILE_VARIABLE) == "long":
        examples, steps = examples * LONG_FACTOR, steps * 2
    return settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                    database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.filter_too_much])


class LogWatch:
    """The failures logged (``log.failure``, ``log.err``, an unhandled
    error in a Deferred) while it watches: each one is an error that
    reached the log instead of being handled."""

    def __init__(self):
        self.errors = []
        globalLogPublisher.addObserver(self._event)

    def _event(self, event):
        if event.get("log_failure") is not None or event.get("isError"):
            self.errors.append(event)

    def describe(self):
        out = []
        for event in self.errors:
            failure = event.get("log_failure")
            text = event.get("log_format") or event.get("message") or ""
            out.append(f"{text!r}: {failure.getTraceback() if failure else ''}")
        return "\n".join(out)

    def stop(self):
        globalLogPublisher.removeObserver(self._event)
