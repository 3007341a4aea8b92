"""``wormhole send -`` and ``wormhole receive --stdout`` end to end
(docs/cli.md "Streams"): the real commands between real pipes, each
process's standard input or output one end of an ``os.pipe()`` whose
other end is another child (``head``, ``sha256sum``, a slow reader), so
that the commands see exactly what a shell pipeline gives them. Our
Mailbox server in-process on 127.0.0.1 (the reference case: our servers
and both peers in a loopback-only network namespace, as tests/files
does); every child stopped by its PID in cleanup. Memory is read from
/proc (VmHWM: the peak since the process started, so a sample misses
nothing that came before it; VmRSS: the resident size now)."""
import os
import re
import shlex
import sys

from twisted.internet import defer, protocol, reactor, task
from twisted.trial import unittest

from wormhole.cli.ui.wording import received_text
from wormhole.session import escape_text
from wormhole_mailbox.testing import start_mailbox_server

from ..cli._process import our_cli, our_source
from ..cli._pty import spawn_in_pty
from ..cli._support import NO_TRANSIT, ref
from ..files import _support as files

GIB = 1 << 30
RSS_LIMIT = 100 * 1000 * 1000  # "peak RSS < 100 MB", each side
# the bound on the end of both commands once the reader stopped (a bound
# on the wait, not a measurement)
STOPS_WITHIN = 5.0
ENV = {"WORMHOLE_TRANSIT_ADDRESSES": "127.0.0.1"}
# ours with the feature turned off (docs/cli.md "Streams")
WITHOUT = {"WORMHOLE_TRANSFER_V2_WITHOUT": "stream"}
# what points a child at another Python than ours, removed from its
# environment (as tests/cli/_process.py does)
_NOT_INHERITED = ("WORMHOLE_RELAY_URL", "WORMHOLE_TRANSIT_HELPER", "PYTHONPATH",
                  "PYTHONHOME", "VIRTUAL_ENV")


def status_of(path, field):
    """A field of /proc/PID/status in bytes (VmHWM, VmRSS), or None once
    the process is gone."""
    try:
        with open(path, "rb") as f:
            for line in f:
                if line.startswith(field + b":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class Memory:
    """Samples a process's memory every ``every`` seconds until it ends:
    ``peak`` (VmHWM) and the (seconds, VmRSS) series ``rss``."""

    def __init__(self, pid, every=0.25):
        self._path = f"/proc/{pid}/status"
        self.peak = 0
        self.rss = []
        self._started = reactor.seconds()
        self._loop = task.LoopingCall(self.sample)
        self._loop.start(every)

    def sample(self):
        peak = status_of(self._path, b"VmHWM")
        rss = status_of(self._path, b"VmRSS")
        if peak is None or rss is None:
            return
        self.peak = max(self.peak, peak)
        self.rss.append((reactor.seconds() - self._started, rss))

    def stop(self):
        if self._loop.running:
            self._loop.stop()


class Child(protocol.ProcessProtocol):
    """A child process: what it writes on the descriptors kept for the
    test ("r"), its exit status (128 + N when killed by signal N, as a
    shell says), and a wait for a line on its stderr."""

    def __init__(self, name):
        self.name = name
        self.out = {1: b"", 2: b""}
        self.status = None
        self.ended = defer.Deferred()
        self._gone = defer.Deferred()  # the cleanup's own wait
        self._waiting = []

    def childDataReceived(self, fd, data):
        self.out[fd] = self.out.get(fd, b"") + data
        for regex, d in list(self._waiting):
            m = re.search(regex, self.out[2])
            if m:
                self._waiting.remove((regex, d))
                d.callback(m)

    def wait_for(self, regex):
        m = re.search(regex, self.out[2])
        if m:
            return defer.succeed(m)
        d = defer.Deferred()
        self._waiting.append((regex, d))
        return d

    def processEnded(self, reason):
        code, sig = reason.value.exitCode, reason.value.signal
        self.status = 128 + sig if code is None and sig is not None else code
        self.ended.callback(self.status)
        self._gone.callback(None)

    def stop(self):
        """Killed if still running; fires once it is gone (a child left
        running would leave the reactor unclean)."""
        self.signal("KILL")
        return self._gone

    def signal(self, name):
        if self.status is None:
            self.transport.signalProcess(name)

    @property
    def stderr(self):
        return self.out[2]

    def describe(self):
        return (f"{self.name}: status {self.status}\n"
                f"stderr: {self.stderr.decode(errors='replace')[-3000:]}")


def spawn(testcase, argv, name, stdin="w", stdout="r", env=None, ns=None, cwd=None):
    """``argv`` as a child; ``stdin``/``stdout`` a descriptor of ours
    (a pipe's end, given to it), or "w"/"r" (kept by the test); stderr is
    kept. Our CLI gets the ``src`` this test imported (``our_source``),
    also inside a namespace. Killed in cleanup if still running."""
    child = Child(name)
    full_env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    full_env.update(our_source(argv))
    full_env.update(env or {})
    if ns is not None:
        argv = ns.argv(argv)
    reactor.spawnProcess(child, argv[0], argv, env=full_env, path=cwd,
                         childFDs={0: stdin, 1: stdout, 2: "r"})
    testcase.addCleanup(child.stop)
    return child


def pipe(testcase):
    """(read end, write end) of a pipe between two children: ours are
    closed once both have it (``handed``), or in cleanup."""
    r, w = os.pipe()
    ends = [r, w]

    def close():
        while ends:
            os.close(ends.pop())
    testcase.addCleanup(close)
    return r, w, close


class _Streams(unittest.TestCase):
    timeout = 120

    @defer.inlineCallbacks
    def setUp(self):
        srv = yield start_mailbox_server(reactor, port=0)
        self.addCleanup(srv.stop)
        self.url = srv.url
        self.code = f"{os.getpid() % 900 + 10}-stream-test"

    def ours(self, *args):
        return our_cli("--relay-url", self.url, "--transit-helper", NO_TRANSIT, *args)

    def sender(self, stdin, *args, env=None):
        return spawn(self, self.ours("send", "--hide-progress", "--no-qr", "--code",
                                     self.code, *args, "-"),
                     "wormhole send -", stdin=stdin, env=dict(ENV, **(env or {})))

    def receiver(self, stdout, *args, env=None):
        return spawn(self, self.ours("receive", "--hide-progress", *args, self.code),
                     "wormhole receive", stdout=stdout, env=dict(ENV, **(env or {})))

    def urandom(self, nbytes, hashed=None):
        """A child writing ``nbytes`` from /dev/urandom into a new pipe
        (its read end is returned, for the sender); with ``hashed``, a
        FIFO there gets a copy for sha256sum, whose Child is returned too."""
        r, w, close = pipe(self)
        if hashed is None:
            spawn(self, ["/usr/bin/head", "-c", str(nbytes), "/dev/urandom"], "head",
                  stdout=w)
            return r, close, None
        os.mkfifo(hashed)
        digest = spawn(self, ["/usr/bin/sha256sum", hashed], "sha256sum of the input")
        spawn(self, ["/bin/sh", "-c", f'head -c {nbytes} /dev/urandom | tee "$0"', hashed],
              "head | tee", stdout=w)
        return r, close, digest

    @defer.inlineCallbacks
    def both_end(self, send, receive, statuses, handed=lambda: None):
        """Once ``send`` said its code, ``receive()`` starts the receiver
        (our pipe ends then ``handed``); both end with ``statuses``
        (sender's, receiver's). Fires with the receiver."""
        yield send.wait_for(rb"Wormhole code is")
        recv = receive()
        handed()
        yield defer.gatherResults([send.ended, recv.ended])
        self.assertEqual((send.status, recv.status), statuses,
                         send.describe() + "\n" + recv.describe())
        return recv

    def one_error_line(self, run):
        lines = [line for line in run.stderr.decode().splitlines() if line.startswith("ERROR")]
        self.assertEqual(len(lines), 1, run.describe())
        return lines[0]


class Pipes(_Streams):
    @defer.inlineCallbacks
    def test_gigabyte(self):
        """1 GiB from /dev/urandom through ``send -`` and ``receive
        --stdout``, hashed on both ends: identical, both exit 0, peak RSS
        under 100 MB on each side."""
        into_sender, handed, source = self.urandom(GIB, hashed=os.path.abspath(self.mktemp()))
        out_r, out_w, handed_out = pipe(self)
        send = self.sender(into_sender)
        yield send.wait_for(rb"Wormhole code is")
        recv = self.receiver(out_w, "--stdout")
        result = spawn(self, ["/usr/bin/sha256sum"], "sha256sum of the output", stdin=out_r)
        handed()
        handed_out()
        memory = {run.name: Memory(run.transport.pid) for run in (send, recv)}
        try:
            yield defer.gatherResults([send.ended, recv.ended, result.ended, source.ended])
        finally:
            for m in memory.values():
                m.stop()
        self.assertEqual((send.status, recv.status), (0, 0),
                         send.describe() + "\n" + recv.describe())
        self.assertEqual(result.out[1].split()[0], source.out[1].split()[0])
        self.assertIn(f"Stream received: {GIB} bytes".encode(), recv.stderr)
        self.assertIn(f"Stream sent: {GIB} bytes".encode(), send.stderr)
        for name, m in memory.items():
            self.assertGreater(m.peak, 0, name)
            self.assertLess(m.peak, RSS_LIMIT, f"{name}: peak RSS {m.peak}")

    @defer.inlineCallbacks
    def test_slow_reader_keeps_the_sender_flat(self):
        """A reader of 1 MB/s behind ``receive --stdout``, an input that
        never runs dry: the sender reads only what the reader takes, its
        RSS stays flat. 12 s of it: a sender that read ahead without a
        bound would take /dev/urandom's hundreds of MB/s and pass 100 MB
        within a second, so a dozen seconds shows a bound, while the
        buffers on the way (the pipes, Twisted's, Dilation's window)
        fill in the first few. Then the reader goes away: both end."""
        into_sender, handed, _ = self.urandom(GIB)
        out_r, out_w, handed_out = pipe(self)
        send = self.sender(into_sender)
        yield send.wait_for(rb"Wormhole code is")
        recv = self.receiver(out_w, "--stdout")
        reader = spawn(self, [sys.executable, "-c", SLOW_READER], "a reader of 1 MB/s",
                       stdin=out_r)
        handed()
        handed_out()
        memory = Memory(send.transport.pid, every=0.5)
        yield recv.wait_for(rb"Receiving \(")
        yield task.deferLater(reactor, 12, lambda: None)
        memory.stop()
        reader.signal("KILL")
        yield defer.gatherResults([send.ended, recv.ended]).addTimeout(STOPS_WITHIN, reactor)
        settled = [rss for t, rss in memory.rss if t >= 4]
        self.assertGreater(len(settled), 10)
        self.assertLess(memory.peak, RSS_LIMIT)
        # flat: what it holds after the first seconds grows by less than
        # the reader took meanwhile (~8 MB)
        self.assertLess(max(settled) - settled[0], 4 * 1000 * 1000, memory.rss)
        self.assertEqual((recv.status, send.status), (0, 3),
                         send.describe() + "\n" + recv.describe())

    @defer.inlineCallbacks
    def test_reader_stops_early(self):
        """``receive --stdout | head -c 10``: head has its 10 bytes, both
        commands end within 5 s of it with the documented statuses (the
        receiver 0, the sender 3) and words."""
        into_sender, handed, _ = self.urandom(GIB)
        out_r, out_w, handed_out = pipe(self)
        send = self.sender(into_sender)
        yield send.wait_for(rb"Wormhole code is")
        recv = self.receiver(out_w, "--stdout")
        head = spawn(self, ["/usr/bin/head", "-c", "10"], "head -c 10", stdin=out_r)
        handed()
        handed_out()
        yield head.ended
        self.assertEqual(len(head.out[1]), 10)
        yield defer.gatherResults([send.ended, recv.ended]).addTimeout(STOPS_WITHIN, reactor)
        self.assertEqual((recv.status, send.status), (0, 3),
                         send.describe() + "\n" + recv.describe())
        self.assertRegex(self.one_error_line(send),
                         r"^ERROR: the receiver stopped reading the stream after \d+ bytes "
                         r"\(.*\) were sent \(its output was closed\)$")
        self.assertRegex(recv.stderr.decode(), r"Standard output was closed after \d+ bytes: "
                                               "the stream was stopped and the sender told")
        self.assertNotIn(b"ERROR", recv.stderr)

    @defer.inlineCallbacks
    def _cut(self, signal):
        """A sender stopped by ``signal`` once bytes flow: the receiver's
        one line, its status, and what reached its output."""
        into_sender, handed, _ = self.urandom(GIB)
        out_r, out_w, handed_out = pipe(self)
        send = self.sender(into_sender)
        yield send.wait_for(rb"Wormhole code is")
        recv = self.receiver(out_w, "--stdout", "--peer-timeout", "2")
        counter = spawn(self, ["/usr/bin/wc", "-c"], "wc -c", stdin=out_r)
        handed()
        handed_out()
        yield recv.wait_for(rb"Receiving \(")
        yield task.deferLater(reactor, 0.5, lambda: None)
        send.signal(signal)
        yield defer.gatherResults([send.ended, recv.ended, counter.ended])
        self.assertEqual(recv.status, 1, recv.describe())
        line = self.one_error_line(recv)
        written = int(re.search(r"the stream was cut after (\d+) bytes", line).group(1))
        self.assertIn("were written to standard output", line)
        self.assertIn("a stream cannot be resumed", line)
        self.assertEqual(int(counter.out[1]), written)
        self.assertLess(written, GIB)
        self.assertNotIn(b"Stream received", recv.stderr)
        return send, line

    @defer.inlineCallbacks
    def test_sender_killed(self):
        """The sender killed mid-stream (SIGKILL): the receiver gives up
        after --peer-timeout, exits 1 with one line saying how many bytes
        it wrote and that the stream cannot be resumed; never complete."""
        send, line = yield self._cut("KILL")
        self.assertEqual(send.status, 128 + 9)

    @defer.inlineCallbacks
    def test_sender_stopped(self):
        """The sender stopped on purpose (SIGTERM, as Ctrl-C): the receiver
        hears it at once and says so with the bytes written."""
        send, line = yield self._cut("TERM")
        self.assertEqual(send.status, 128 + 15)
        self.assertIn("(the sender cancelled the transfer (SIGTERM))", line)

    @defer.inlineCallbacks
    def test_input_fails(self):
        """The sender's standard input cannot be read (a file opened for
        writing only: EBADF at the first read): the sender says so (exit
        1), the receiver exits 1 with one line giving the sender's reason,
        the bytes written and that the stream cannot be resumed."""
        fd = os.open(self.mktemp(), os.O_WRONLY | os.O_CREAT)
        self.addCleanup(os.close, fd)
        send = self.sender(fd)
        recv = yield self.both_end(send, lambda: self.receiver("r", "--stdout"), (1, 1))
        self.assertRegex(self.one_error_line(send),
                         r"^ERROR: the stream's input failed after 0 bytes: reading standard "
                         r"input failed: .*Bad file descriptor$")
        line = self.one_error_line(recv)
        self.assertIn("the stream was cut after 0 bytes", line)
        self.assertIn("(the sender stopped the stream: the stream's input failed after 0 "
                      "bytes: reading standard input failed", line)
        self.assertTrue(line.endswith(": a stream cannot be resumed"), line)

    @defer.inlineCallbacks
    def test_without_stdout(self):
        """A stream to ``receive`` without --stdout: refused, said on both
        sides, exit 3; nothing on the receiver's stdout."""
        into_sender, handed, _ = self.urandom(1000)
        send = self.sender(into_sender)
        recv = yield self.both_end(send, lambda: self.receiver("r", "--accept-file"), (3, 3),
                                   handed)
        self.assertEqual(self.one_error_line(recv), "ERROR: the sender offers a stream: "
                                                    "receive it with --stdout (or -o -)")
        self.assertEqual(self.one_error_line(send),
                         "ERROR: the receiver declined: transfer rejected")
        self.assertEqual(recv.out[1], b"")


# reads 16 KiB every 16 ms: about 1 MB/s
SLOW_READER = """\
import os, time
while os.read(0, 16384):
    time.sleep(0.016)
"""


class WithoutTheFeature(_Streams):
    @defer.inlineCallbacks
    def test_ours_without_the_feature(self):
        """Ours with the feature turned off (WORMHOLE_TRANSFER_V2_WITHOUT,
        docs/cli.md "Streams") as the receiver: the sender refuses before
        reading anything, naming what the receiver lacks, and tells it."""
        into_sender, handed, _ = self.urandom(1000)
        send = self.sender(into_sender)
        recv = yield self.both_end(send, lambda: self.receiver("r", "--stdout", env=WITHOUT),
                                   (1, 1), handed)
        self.assertEqual(self.one_error_line(send),
                         'ERROR: the receiver\'s transfer-v2 lacks the "stream" feature: it '
                         "cannot take a stream of unknown length (nothing was sent)")
        self.assertEqual(self.one_error_line(recv),
                         'ERROR: the sender gave up: a stream needs the transfer-v2 "stream" '
                         "feature, which this receiver lacks (nothing was sent)")
        self.assertEqual(recv.out[1], b"")

    @defer.inlineCallbacks
    def test_reference(self):
        """The reference 0.24 as the receiver (classic only), in a
        loopback-only namespace with our servers and our sender: refused
        before anything is read, the reference told why in the mailbox."""
        ns = files.Namespace.create(self)
        servers = yield files.Servers.start(self, ns=ns)
        into_sender, handed, _ = self.urandom(1000)
        send = spawn(self, our_cli("--relay-url", servers.url, "--transit-helper",
                                   servers.transit, "send", "--hide-progress", "--no-qr",
                                   "--code", self.code, "-"),
                     "wormhole send -", stdin=into_sender, env=ENV, ns=ns)
        recv = yield self.both_end(send, lambda: spawn(
            self, ref(servers.url, "receive", "--accept-file", self.code),
            "reference receive", stdin="w", ns=ns), (1, 1), handed)
        self.assertEqual(self.one_error_line(send),
                         "ERROR: the receiver speaks only the classic protocol, which needs a "
                         "size before the first byte: it cannot take a stream (nothing was "
                         "sent)")
        self.assertIn(b"TransferError: the sender offers a stream (wormhole send -), which the "
                      b"classic protocol cannot carry", recv.stderr)


    @defer.inlineCallbacks
    def test_reference_file_to_stdout(self):
        """The reference 0.24 sends a file to ``receive --stdout``: the
        classic offer is refused (exit 3), said why, nothing written."""
        ns = files.Namespace.create(self)
        servers = yield files.Servers.start(self, ns=ns)
        src = self.mktemp()
        os.makedirs(src)
        with open(os.path.join(src, "f.txt"), "wb") as f:
            f.write(b"a file")
        send = spawn(self, files.ref_argv(servers, "send", "--code", self.code, "f.txt"),
                     "reference send", ns=ns, cwd=src)
        out = os.path.abspath(self.mktemp())
        os.makedirs(out)
        recv = yield self.both_end(send, lambda: spawn(
            self, our_cli("--relay-url", servers.url, "--transit-helper", servers.transit,
                          "receive", "--stdout", self.code),
            "wormhole receive --stdout", env=ENV, ns=ns, cwd=out), (1, 3))
        self.assertIn(b"--stdout (-o -) takes a stream (wormhole send -): refusing the file "
                      b"the classic protocol offers", recv.stderr)
        self.assertEqual((recv.out[1], os.listdir(out)), (b"", []))

class TextStreams(_Streams):
    """``send --text -``: a text longer than the mailbox carries goes as a
    text stream and is shown as a text; a peer that cannot take one gets a
    refusal; a short one goes in the mailbox whatever the peer."""

    def text_sender(self, stdin, *args):
        return spawn(self, self.ours("send", "--hide-progress", "--no-qr", "--code", self.code,
                                     *args, "--text", "-"),
                     "wormhole send --text -", stdin=stdin, env=ENV)

    def text_file(self, nchars):
        """A text of ``nchars`` characters (some that escape_text escapes,
        both quotes, non-ASCII), as a descriptor to read it from."""
        path = self.mktemp()
        text = ("héllo 'x' \"y\" \x1b[31m tab\there\n" * (nchars // 30 + 1))[:nchars]
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        fd = os.open(path, os.O_RDONLY)
        self.addCleanup(os.close, fd)
        return text, fd

    @defer.inlineCallbacks
    def test_long_text_as_a_stream(self):
        """400,000 characters (over 256 KiB): a stream; the receiver, with
        no option, shows it as a text, escaped character by character,
        then a newline; both exit 0."""
        text, fd = self.text_file(400_000)
        send = self.text_sender(fd)
        recv = yield self.both_end(send, lambda: self.receiver("r"), (0, 0))
        self.assertIn(b"as a stream", send.stderr)
        self.assertIn(b"text message sent", send.stderr)
        self.assertEqual(recv.out[1].decode("utf-8"), escape_text(text) + "\n")

    @defer.inlineCallbacks
    def test_long_text_to_a_peer_without_the_feature(self):
        """Ours without the feature: refused on both sides, nothing shown."""
        _, fd = self.text_file(300_000)
        send = self.text_sender(fd)
        recv = yield self.both_end(send, lambda: self.receiver("r", env=WITHOUT), (1, 1))
        self.assertEqual(self.one_error_line(send),
                         "ERROR: the text is longer than 262144 bytes, more than the mailbox "
                         "carries, and the receiver's transfer-v2 lacks the \"stream\" feature "
                         "(nothing was sent)")
        self.assertIn("it needs the transfer-v2 \"stream\" feature, which this receiver lacks",
                      self.one_error_line(recv))
        self.assertEqual(recv.out[1], b"")

    @defer.inlineCallbacks
    def test_short_text_in_the_mailbox(self):
        """A short ``--text -`` goes in the mailbox as classic's text offer,
        to a peer without the feature too: shown as before."""
        text, fd = self.text_file(1000)
        send = self.text_sender(fd)
        recv = yield self.both_end(send, lambda: self.receiver("r", env=WITHOUT), (0, 0))
        self.assertEqual(recv.out[1].decode("utf-8"), received_text(text) + "\n")
        self.assertNotIn(b"transfer-v2", recv.stderr)

    @defer.inlineCallbacks
    def test_long_text_to_the_reference(self):
        """The reference 0.24 (classic only), in a loopback-only namespace:
        a long text is refused on our side, and the reference is told why."""
        ns = files.Namespace.create(self)
        servers = yield files.Servers.start(self, ns=ns)
        _, fd = self.text_file(300_000)
        send = spawn(self, our_cli("--relay-url", servers.url, "--transit-helper",
                                   servers.transit, "send", "--hide-progress", "--no-qr",
                                   "--code", self.code, "--text", "-"),
                     "wormhole send --text -", stdin=fd, env=ENV, ns=ns)
        recv = yield self.both_end(send, lambda: spawn(
            self, ref(servers.url, "receive", self.code), "reference receive", stdin="w",
            ns=ns), (1, 1))
        self.assertEqual(self.one_error_line(send),
                         "ERROR: the text is longer than 262144 bytes, more than the mailbox "
                         "carries, and the receiver speaks only the classic protocol, which "
                         "has no other way for a text (nothing was sent)")
        self.assertIn(b"the sender's text is longer than 262144 bytes", recv.stderr)
        self.assertEqual(recv.out[1], b"")


# writes 1 MB, then waits for a line on its stdin (the terminal: the
# test types it once the sender's bar is drawn), then 1 MB more: the stream
# lasts until the bar was seen, however fast or slow the machine is
FEEDER = """\
import os, sys
os.write(1, b"x" * 1000000)
sys.stdin.readline()
os.write(1, b"x" * 1000000)
"""


class Progress(_Streams):
    @defer.inlineCallbacks
    def test_bytes_and_rate_on_a_terminal_only(self):
        """The sender's stderr is a terminal: its bar shows the bytes and
        the rate, no total, no percentage. The receiver's stderr is a
        pipe: no bar at all (no carriage return), only the lines."""
        sh = (f"{shlex.quote(sys.executable)} -c {shlex.quote(FEEDER)} | exec "
              + shlex.join(self.ours("send", "--no-qr", "--code", self.code, "-")))
        send = spawn_in_pty(self, ["/bin/sh", "-c", sh], "wormhole send - in a terminal",
                            env=dict(ENV, **our_source(our_cli())), columns=100)
        ended = self.both_end(send, lambda: self.receiver("r", "--stdout"), (0, 0))
        yield send.wait_for(rb"stream: ")
        send.write(b"\n")  # the go-ahead (an empty line: its echo adds no text)
        recv = yield ended
        self.assertEqual(recv.out[1], b"x" * 2_000_000)
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", send.stdout.decode("utf-8", "replace"))
        drawn = [seg for line in text.split("\n") for seg in line.split("\r")
                 if seg.startswith("stream: ")]
        self.assertTrue(drawn, send.describe())
        for seg in drawn:
            self.assertRegex(seg, r"^stream: [\d.]+[kMG]?B [\d.?]+[kMG]?B/s \[\d\d:\d\d\]\s*$")
        self.assertNotIn(b"\r", recv.stderr)
        self.assertNotIn(b"receive: ", recv.stderr)
        self.assertIn(b"Stream received: 2000000 bytes", recv.stderr)
