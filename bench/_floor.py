"""What the prescribed work of a transfer costs on this machine, in CPU
seconds per GiB, with nothing of any implementation around it: the floor
under any implementation's figure (used by the benches' ``--floor``).

When a run is CPU-bound (sender and receiver share this machine's cores),
an implementation cannot beat another by more than the ratio of their CPU,
and its CPU cannot go below the floor: ``ceiling = theirs / floor``.
"""

import os
import socket
import threading
import time

RECORD = 65535  # the largest transfer-v2 data payload; Dilation DATA records carry it


def per_gib(fn, chunks, total):
    """CPU seconds per GiB of ``fn(chunk)`` over ``total`` bytes taken from
    the iterator ``chunks``."""
    t0 = time.process_time()
    done = 0
    for chunk in chunks:
        fn(chunk)
        done += len(chunk)
        if done >= total:
            break
    return (time.process_time() - t0) * 2 ** 30 / done


def file_chunks(path):
    """RECORD-sized reads of ``path``, from its start again at its end."""
    with open(path, "rb", buffering=0) as f:
        while True:
            chunk = f.read(RECORD)
            if chunk:
                yield chunk
            else:
                f.seek(0)


def memory_chunks():
    block = os.urandom(RECORD)
    while True:
        yield block


def chacha20poly1305():
    """seal(plain) and open_() (of one sealed record) with the AEAD of
    Noise's transport (spec 000: Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s)."""
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
    aead, nonce = ChaCha20Poly1305(os.urandom(32)), bytes(12)
    sealed = aead.encrypt(nonce, os.urandom(RECORD), None)
    return (lambda plain: aead.encrypt(nonce, plain, None),
            lambda: aead.decrypt(nonce, sealed, None))


def secretbox():
    """The classic protocol's record AEAD (XSalsa20-Poly1305), likewise."""
    from nacl.secret import SecretBox
    box, nonce = SecretBox(os.urandom(32)), bytes(24)
    sealed = box.encrypt(os.urandom(RECORD), nonce).ciphertext
    return (lambda plain: box.encrypt(plain, nonce),
            lambda: box.decrypt(sealed, nonce))


def loopback_tcp_per_gib(mib=512):
    """CPU seconds per GiB that loopback TCP costs both ends together."""
    server = socket.create_server(("127.0.0.1", 0))
    a = socket.create_connection(server.getsockname())
    b, _ = server.accept()
    block, total = bytes(1 << 20), mib * 2 ** 20

    def drain():
        left = total
        while left:
            left -= len(b.recv(1 << 20))
    t = threading.Thread(target=drain)
    t0 = time.process_time()
    t.start()
    for _ in range(mib):
        a.sendall(block)
    t.join()
    spent = time.process_time() - t0
    for sock in (a, b, server):
        sock.close()
    return spent * 1024 / mib


# the libraries the design prescribes for a client (DESIGN.md): any
# wormhole CLI built on them imports at least these before its first byte
PRESCRIBED_IMPORTS = """
import twisted.internet.reactor, twisted.internet.endpoints
import autobahn.twisted.websocket, spake2, nacl.secret, noise.connection
import msgpack, automat, attr, zope.interface, click
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
"""


def import_cpu(python, rounds=3):
    """The least CPU seconds one process of ``python`` spends starting and
    importing the prescribed libraries (best of ``rounds``)."""
    import subprocess
    code = PRESCRIBED_IMPORTS + (
        "import resource\n"
        "r = resource.getrusage(resource.RUSAGE_SELF)\n"
        "print(r.ru_utime + r.ru_stime)\n")
    return min(float(subprocess.run([python, "-c", code], capture_output=True, text=True,
                                    check=True).stdout) for _ in range(rounds))
