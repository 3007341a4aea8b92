"""Our ``wormhole`` CLI run as a script by tests/cli/test_documented_*.py
(``python _shortened_cli.py [OPTIONS] -- ARGS``) for the rows of
docs/cli.md "Messages" no command line reaches in reasonable time:

- ``--stall S``, ``--ack S``: the sender's 120 s timers (STALL_TIMEOUT,
  ACK_TIMEOUT in transfer/_mover.py), constants no option changes;
- ``--fsize BYTES``: a disk that refuses a write (RLIMIT_FSIZE: Python
  ignores SIGXFSZ, so a write past it fails with EFBIG as a full disk
  fails with ENOSPC);
- faults no command line can cause: ``--fail-read BYTES`` (reads of the
  file being sent fail with EIO after that many bytes), ``--wrong-ack``
  (the receiver acknowledges another sha256 than the one it computed),
  ``--damage-zip`` (a directory's zipfile damaged once built);
- ``--say-sent``: a line (SENT) on stderr once the sender handed the
  file's last byte to its connection, so a test knows it now waits for
  the confirmation.

Everything else is the real CLI, unchanged."""
import argparse
import errno
import os
import resource
import sys

SENT = "[_shortened_cli] every byte of the file was handed to the connection"


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


def _say_sent(result):
    print(SENT, file=sys.stderr, flush=True)
    return result


def _stream_with(_mover, fail_after=None, say_sent=False):
    """The sender's file streamer (``_mover._FileStreamer``, which the
    code sending a file makes) reading through _FailingReads, and saying
    SENT once it handed the file's last byte to the connection."""
    class Streamer(_mover._FileStreamer):
        def __init__(self, fileobj, *args, **kwargs):
            if fail_after is not None:
                fileobj = _FailingReads(fileobj, fail_after)
            super().__init__(fileobj, *args, **kwargs)

        def start(self):
            d = super().start()
            if say_sent:
                d.addCallback(_say_sent)
            return d
    _mover._FileStreamer = Streamer


def _damage_zipfiles():
    """The zipfile of a directory being sent loses its end of central
    directory (zeroed, same size) once built: the receiver gets a damaged
    zipfile whose bytes and hash still agree."""
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
    if opts.fail_read is not None or opts.say_sent:
        _stream_with(_mover, opts.fail_read, opts.say_sent)
    if opts.wrong_ack:
        send_ack = _mover.send_ack
        _mover.send_ack = lambda pipe, digest: send_ack(pipe, "0" * len(digest))
    if opts.damage_zip:
        _damage_zipfiles()
    from wormhole.cli.cli import wormhole
    wormhole(args=rest, prog_name="wormhole")


if __name__ == "__main__":
    main(sys.argv[1:])
