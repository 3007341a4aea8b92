"""Applications written for the reference magic-wormhole 0.24, run on
this library unchanged (issue 12, docs/api.md)."""
