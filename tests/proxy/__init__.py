"""Integration tests of the proxy support (docs/proxy.md, "Tests"): real
proxies from Debian's packages in network namespaces; needs root."""
