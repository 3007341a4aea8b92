"""Our ``wormhole`` CLI with a timer shortened or a resource limited, run
as a script (``python _shortened_cli.py [--stall S] [--ack S]
[--fsize BYTES] [--fail-read BYTES] [--wrong-ack] [--say-sent] [--damage-zip] -- ARGS``) by tests/cli/test_documented_*.py: the rows
of docs/cli.md "Messages" whose timers are constants the command line
does not offer to change (the sender's 120 s STALL_TIMEOUT and
ACK_TIMEOUT, transfer/_mover.py), and a disk that refuses a write (a file
size limit, RLIMIT_FSIZE: Python ignores SIGXFSZ, so a write past it
fails with EFBIG as a full disk fails with ENOSPC), and two faults no
command line can cause: reads of the file being sent failing with EIO
after some bytes, and a receiver acknowledging another sha256 than the
one it computed, a directory's zipfile damaged after it was built; and a line saying when the sender handed its last byte
to the connection. Everything else is the real CLI, unchanged."""
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


SENT = "[_shortened_cli] every byte of the file was handed to the connection"


def _say_when_sent(_mover):
    """A line on stderr once the sender handed the file's last byte to
    its connection: a test then knows the sender waits for the
    receiver's confirmation."""
    send_file = _mover.send_file

    def saying(*args, **kwargs):
        d = send_file(*args, **kwargs)

        def say(digest):
            print(SENT, file=sys.stderr, flush=True)
            return digest
        return d.addCallback(say)
    _mover.send_file = saying


def _damage_zipfiles():
    """The zipfile of a directory being sent loses its end of central
    directory (zeroed, same size) once built: what the receiver gets is
    a damaged zipfile, whose bytes and hash still agree."""
    from wormhole.transfer import _outgoing
    zip_directory = _outgoing._zip_directory

    def damaged(*args, **kwargs):
        outgoing = zip_directory(*args, **kwargs)
        with open(outgoing.path, "r+b") as f:
            f.seek(-22, os.SEEK_END)
            f.write(b"\0" * 22)
        return outgoing
    _outgoing._zip_directory = damaged


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--stall", type=float)
    parser.add_argument("--ack", type=float)
    parser.add_argument("--fsize", type=int)
    parser.add_argument("--fail-read", type=int, metavar="BYTES")
    parser.add_argument("--wrong-ack", action="store_true")
    parser.add_argument("--say-sent", action="store_true")
    parser.add_argument("--damage-zip", action="store_true")
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
    if opts.damage_zip:
        _damage_zipfiles()
    if opts.say_sent:
        _say_when_sent(_mover)
    from wormhole.cli.cli import wormhole
    wormhole(args=rest, prog_name="wormhole")


if __name__ == "__main__":
    main(sys.argv[1:])
