"""HTTP CONNECT and SOCKS5 proxies for the Mailbox connection, Transit and
Dilation; the public surface is ``wormhole.proxy`` (docs/proxy.md)."""
