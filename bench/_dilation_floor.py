"""The floor under the Dilation bench's figures, measured in its own run
(docs/performance.md, "Dilation"): what one subchannel's bytes cannot
cost less than on this machine, whatever implementation moves them.

- the cipher alone: ChaCha20-Poly1305 over exactly the Noise transport
  messages the bench's records become (a 64 KiB write is one DATA record,
  9 bytes of header plus the payload, cut into messages of at most 65519
  bytes: Dilation protocol, "L2 Message Framing"), with counter nonces;
- a bare socket of the same bytes: loopback TCP, ``sendall`` from one
  buffer and ``recv_into`` one buffer, each side its own process
  (loopback's receive processing runs in the sender's system time);
- the least fixed part of a process: an interpreter that imports the
  libraries every Dilation implementation needs (``_floor.import_cpu``).
"""

import os
import socket
import time

NOISE_MAX_PLAINTEXT = 65519
DATA_HEADER = 9    # tag, subchannel id, seqnum
NOISE_OVERHEAD = 16  # Poly1305 tag per message
LENGTH_PREFIX = 4  # per frame
WRITE = 65536      # the bench's write: one DATA record each


def record_pieces(payload=WRITE):
    """The plaintext lengths of the Noise messages of one DATA record."""
    total = DATA_HEADER + payload
    return [min(NOISE_MAX_PLAINTEXT, total - i) for i in range(0, total, NOISE_MAX_PLAINTEXT)]


def wire_bytes(payload=WRITE):
    """What one DATA record of ``payload`` bytes puts on the wire."""
    pieces = record_pieces(payload)
    return LENGTH_PREFIX + sum(pieces) + NOISE_OVERHEAD * len(pieces)


def cipher_per_gib(mib=256, payload=WRITE):
    """(seal, open): CPU seconds per GiB of payload spent by
    ChaCha20-Poly1305 alone on the records' Noise messages."""
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
    aead = ChaCha20Poly1305(os.urandom(32))
    plains = [os.urandom(n) for n in record_pieces(payload)]
    records = mib * 2 ** 20 // payload
    nonces = [bytes(4) + n.to_bytes(8, "little") for n in range(records * len(plains))]
    seal = aead.encrypt
    t0 = time.process_time()
    i = 0
    for _ in range(records):
        for p in plains:
            seal(nonces[i], p, None)
            i += 1
    t_seal = time.process_time() - t0
    # open what was sealed with the same nonces: a set of real messages,
    # opened in turn until as many records as sealed
    sample = [(nonces[i], seal(nonces[i], plains[i % len(plains)], None))
              for i in range(64 * len(plains))]
    open_ = aead.decrypt
    t0 = time.process_time()
    for r in range(records):
        base = (r % 64) * len(plains)
        for k in range(len(plains)):
            nonce, c = sample[base + k]
            open_(nonce, c, None)
    t_open = time.process_time() - t0
    scale = 2 ** 30 / (records * payload)
    return t_seal * scale, t_open * scale


def socket_per_gib(mib=256, payload=WRITE, block=1 << 18):
    """(send, read): CPU seconds per GiB of payload that loopback TCP costs
    each side to move the records' wire bytes (``block`` at a time, the
    size of the transports' reads and writes). The reader is a forked
    process, as the bench's receiver is: two threads of one process
    contend for its GIL and slowed the sender by up to 3x."""
    server = socket.create_server(("127.0.0.1", 0))
    a = socket.create_connection(server.getsockname())
    b, _ = server.accept()
    total = mib * 2 ** 20 * wire_bytes(payload) // payload
    r_fd, w_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the reader
        try:
            a.close()
            buf = bytearray(block)
            left, t0 = total, time.process_time()
            while left:
                n = b.recv_into(buf)
                if not n:
                    break
                left -= n
            os.write(w_fd, repr(time.process_time() - t0).encode())
        finally:
            os._exit(0)
    b.close()
    os.close(w_fd)
    data = bytes(block)
    t0 = time.process_time()
    sent = 0
    while sent < total:
        n = min(block, total - sent)
        a.sendall(data if n == block else data[:n])
        sent += n
    send_cpu = time.process_time() - t0
    read_cpu = float(os.read(r_fd, 64))
    os.close(r_fd)
    os.waitpid(pid, 0)
    a.close()
    server.close()
    scale = 2 ** 30 / (mib * 2 ** 20)
    return send_cpu * scale, read_cpu * scale
