"""Unit tests: no network, no process, seconds (docs/testing.md, "The
project's tests"). `./dev test tests.unit` runs them alone; `./dev test`
runs them with tests/unit_blocker/ refusing network and processes."""
