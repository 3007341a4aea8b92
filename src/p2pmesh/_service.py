"""Running a node for real: the key file (created on first run, mode
0600, never half-written under its final name), endpoint helpers and a
Twisted Service for twistd."""

import json
import os
import tempfile

from cryptography.hazmat.primitives import serialization
from twisted.application.service import Service
from twisted.internet import endpoints

from . import _keys
from ._config import LocalLimits, SubnetConfig
from ._node import Node


def load_or_create_key(path, beta=2048):
    """The private key in `path` (PEM, PKCS#8); a new one on first run,
    written to a temporary file in the same folder with mode 0600 and
    renamed into place."""
    try:
        with open(path, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), None)
    except FileNotFoundError:
        pass
    else:
        if key.key_size != beta:
            raise ValueError("%s holds a %d-bit key, the subnet wants %d"
                             % (path, key.key_size, beta))
        return key
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, mode=0o700, exist_ok=True)
    key = _keys.generate_private_key(beta)
    pem = key.private_bytes(serialization.Encoding.PEM,
                            serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".p2pmesh-key-")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        os.link(tmp, path)   # fails if another process created it meanwhile
    finally:
        os.unlink(tmp)
    return load_or_create_key(path, beta)


def parse_peer(text):
    """"host:port" → (host, port) for a bootstrap peer."""
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ValueError("a peer is host:port, got %r" % text)
    port = int(port)
    if not 0 < port < 65536:
        raise ValueError("port out of range in %r" % text)
    return host.strip("[]"), port


def display(value):
    """Peer data for a terminal: JSON with bytes as hex and every control
    character escaped (never raw peer text)."""
    def default(v):
        if isinstance(v, bytes):
            return {"hex": v.hex()}
        return repr(v)
    return json.dumps(value, default=default, ensure_ascii=True,
                      sort_keys=True)


def build_node(reactor, key, listen=None, advertise=None, bootstrap=(),
               config=None, limits=None):
    """A Node on the real reactor: `listen` a server endpoint description
    (e.g. "tcp:4000:interface=127.0.0.1"), None for a node that accepts
    no connections."""
    def client(host, port):
        return endpoints.HostnameEndpoint(reactor, host, port)
    server = (endpoints.serverFromString(reactor, listen)
              if listen else None)
    return Node(config or SubnetConfig(), key, reactor, client,
                limits=limits or LocalLimits(), listen_endpoint=server,
                advertise=advertise, bootstrap=bootstrap)


class NodeService(Service):
    """A long-lived node under twistd."""

    def __init__(self, node):
        self.node = node

    def startService(self):
        super().startService()
        self._started = self.node.start()

    def stopService(self):
        super().stopService()
        return self.node.stop()
