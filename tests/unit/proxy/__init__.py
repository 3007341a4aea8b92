"""Unit tests of the proxy support (docs/proxy.md): no network, no process."""
