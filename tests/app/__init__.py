"""Applications written for the reference magic-wormhole 0.24, run on
this library unchanged (docs/api.md)."""
