"""Our ``wormhole`` CLI with a timer shortened or a resource limited, run
as a script (``python _shortened_cli.py [--stall S] [--ack S]
[--fsize BYTES] [--fail-read BYTES] [--wrong-ack] -- ARGS``) by tests/cli/test_documented_*.py: the rows
of docs/cli.md "Messages" whose timers are constants the command line
does not offer to change (the sender's 120 s STALL_TIMEOUT and
ACK_TIMEOUT, transfer/_mover.py), and a disk that refuses a write (a file
size limit, RLIMIT_FSIZE: Python ignores SIGXFSZ, so a write past it
fails with EFBIG as a full disk fails with ENOSPC), and two faults no
command line can cause: reads of the file being sent failing with EIO
after some bytes, and a receiver acknowledging another sha256 than the
one it computed. Everything else is the real CLI, unchanged."""
import argparse
import errno
import os
import resource
import sys


class _FailingReads:
    """A file whose reads fail (EIO, as a failing disk's do) once
    ``limit`` bytes were read."""

    def __init__(self, f, limit):
        self._f = f
        self._left = limit

    def read(self, n=-1):
        if self._left <= 0:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        data = self._f.read(min(n, self._left) if n >= 0 else self._left)
        self._left -= len(data)
        return data

    def __getattr__(self, name):
        return getattr(self._f, name)


def _fail_reads_after(_mover, limit):
    send_file = _mover.send_file

    def failing(pipe, fileobj, *args, **kwargs):
        return send_file(pipe, _FailingReads(fileobj, limit), *args, **kwargs)
    _mover.send_file = failing


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--stall", type=float)
    parser.add_argument("--ack", type=float)
    parser.add_argument("--fsize", type=int)
    parser.add_argument("--fail-read", type=int, metavar="BYTES")
    parser.add_argument("--wrong-ack", action="store_true")
    opts, rest = parser.parse_known_args(argv)
    if rest[:1] == ["--"]:
        rest = rest[1:]
    from wormhole.transfer import _mover
    if opts.stall is not None:
        _mover.STALL_TIMEOUT = opts.stall
    if opts.ack is not None:
        _mover.ACK_TIMEOUT = opts.ack
    if opts.fsize is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (opts.fsize, opts.fsize))
    if opts.fail_read is not None:
        _fail_reads_after(_mover, opts.fail_read)
    if opts.wrong_ack:
        send_ack = _mover.send_ack
        _mover.send_ack = lambda pipe, digest: send_ack(pipe, "0" * len(digest))
    from wormhole.cli.cli import wormhole
    wormhole(args=rest, prog_name="wormhole")


if __name__ == "__main__":
    main(sys.argv[1:])
