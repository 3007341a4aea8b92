"""What the prescribed work of a transfer costs on this machine, in CPU
seconds per GiB, with nothing of any implementation around it: the floor
under any implementation's figure (used by the benches' ``--floor``).

When a run is CPU-bound (sender and receiver share this machine's cores),
an implementation cannot beat another by more than the ratio of their CPU,
and its CPU cannot go below the floor: ``ceiling = theirs / floor``.
"""

import hashlib
import os
import queue
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
    Noise's transport (Dilation protocol, "L2 protocol":
    Noise_NNpsk0_25519_ChaChaPoly_BLAKE2s)."""
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


def blake2b_variants(mib=256):
    """CPU seconds per GiB of BLAKE2b from each implementation this machine has
    (docs/performance.md, "Session 7: per-record work, one Noise message per
    record, the pinned ceiling"). Only hashlib's ``blake2b(digest_size=32)``
    computes the text's "32-byte Blake2b": the digest size is part of BLAKE2's
    parameter block, so BLAKE2b-512 cut to 32 bytes is another hash, and
    neither OpenSSL through hashlib nor `cryptography` (64 bytes only) takes
    another size."""
    from cryptography.hazmat.primitives import hashes
    variants = {
        "hashlib_blake2b_32": lambda: hashlib.blake2b(digest_size=32),
        "openssl_blake2b512": lambda: hashlib.new("blake2b512"),
        "cryptography_blake2b_64": lambda: hashes.Hash(hashes.BLAKE2b(64)),
        "sha256_for_comparison": hashlib.sha256,
    }
    return {name: per_gib(make().update, memory_chunks(), mib * 2 ** 20)
            for name, make in variants.items()}


def receive_variants(workdir, mib=256):
    """The receiver's prescribed work per record (open, hash, write) done
    three ways, as (CPU s/GiB, wall s/GiB): as transfer-v2 receivers do it
    (a fresh plaintext per record), opened into one reused buffer
    (``decrypt_into``), and with the hashing handed to a worker thread
    (hashlib releases the GIL for large updates; only a side with a second
    core idle can gain wall time from it)."""
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
    aead, nonce = ChaCha20Poly1305(os.urandom(32)), bytes(12)
    sealed = aead.encrypt(nonce, os.urandom(RECORD - 16), None)
    count = mib * 2 ** 20 // len(sealed)
    path = os.path.join(workdir, f"floor-receive-{os.getpid()}")
    buf = bytearray(len(sealed) - 16)

    def inline(out, h):
        for _ in range(count):
            plain = aead.decrypt(nonce, sealed, None)
            h.update(plain)
            out.write(plain)

    def reused(out, h):
        for _ in range(count):
            aead.decrypt_into(nonce, sealed, None, buf)
            h.update(buf)
            out.write(buf)

    def threaded(out, h):
        q = queue.Queue(64)

        def hashing():
            while (plain := q.get()) is not None:
                h.update(plain)
        worker = threading.Thread(target=hashing)
        worker.start()
        for _ in range(count):
            plain = aead.decrypt(nonce, sealed, None)
            q.put(plain)
            out.write(plain)
        q.put(None)
        worker.join()

    result = {}
    for name, work in (("inline", inline), ("decrypt_into", reused),
                       ("hash_thread", threaded)):
        with open(path, "wb", buffering=0) as out:
            t0, w0 = time.process_time(), time.monotonic()
            work(out, hashlib.blake2b(digest_size=32))
            scale = 2 ** 30 / (count * len(buf))
            result[name] = ((time.process_time() - t0) * scale,
                            (time.monotonic() - w0) * scale)
        os.unlink(path)
    return result


# the libraries a client is built on (docs/architecture.md, "The client's
# dependencies"): any
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
