"""One side of the Dilation benchmark (bench/dilation_bench.py).

Uses only the public Dilation API that ours and the reference 0.24 share
(create(dilation=True), dilate(), connector_for, listener_for), so the same
file runs under either implementation's interpreter; the driver picks the
interpreter. Never imported by the project.

  recv URL SIZE NSUB RELAY|- NO_LISTEN   prints {"code": ...}, then a result
  send URL SIZE NSUB RELAY|- NO_LISTEN CODE

Result line: {"role", "t_start" (send) / "t_end" (recv), "bytes", "cpu_s"
(process CPU from the first write / first byte to the end), "proc_cpu_s"
(the process's CPU since it started), "rss_kib" (peak RSS of the process)}.
"""

import json
import os
import resource
import sys
import time

from twisted.internet import defer, protocol, task
from twisted.internet.interfaces import IPushProducer
from zope.interface import implementer

import wormhole

APPID = "example.com/bench-dilation"
CHUNK = 65536


def out(obj):
    print(json.dumps(obj), flush=True)


def sys_time():
    return os.times().system


def peak_rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def process_cpu():
    # the whole process's CPU, start-up and rendezvous included: its
    # fixed part is this less the transfer's cpu_s
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def minor_faults():
    # page faults served without I/O: each fresh buffer the allocator got
    # from the kernel costs one per 4 KiB page touched
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@implementer(IPushProducer)
class Source:
    def __init__(self, reactor, transport, total, done):
        self.reactor, self.t, self.total, self.done = reactor, transport, total, done
        self.sent, self.paused, self.call = 0, False, None
        self.block = bytes(i % 251 for i in range(CHUNK))

    def start(self):
        self.t.registerProducer(self, True)
        self.schedule()

    def schedule(self):
        if self.call is None and not self.paused and self.sent < self.total:
            self.call = self.reactor.callLater(0, self.pump)

    def pump(self):
        self.call = None
        n = 0
        while not self.paused and self.sent < self.total and n < 32:
            k = min(CHUNK, self.total - self.sent)
            self.t.write(self.block if k == CHUNK else self.block[:k])
            self.sent += k
            n += 1
        if self.sent >= self.total:
            self.t.unregisterProducer()
            self.t.loseConnection()
        else:
            self.schedule()

    def pauseProducing(self):
        self.paused = True

    def resumeProducing(self):
        self.paused = False
        self.schedule()

    def stopProducing(self):
        self.paused = True


class Closed(protocol.Protocol):
    def connectionLost(self, reason):
        self.factory.closed += 1
        if self.factory.closed == self.factory.want and not self.factory.all_closed.called:
            self.factory.all_closed.callback(None)


class Sink(protocol.Protocol):
    def dataReceived(self, data):
        f = self.factory
        now = time.time()
        if f.cpu0 is None:
            f.cpu0, f.sys0, f.flt0 = time.process_time(), sys_time(), minor_faults()
        elif now - f.last > 0.02:
            f.gaps.append((f.last, now))  # data stopped, e.g. a cut
        f.last = now
        f.bytes += len(data)

    def connectionLost(self, reason):
        f = self.factory
        f.closed += 1
        if f.closed == f.want and not f.all_closed.called:
            f.all_closed.callback(None)


@defer.inlineCallbacks
def main(reactor, role, url, size, nsub, relay, no_listen, code=None):
    size, nsub = int(size), int(nsub)
    w = wormhole.create(APPID, url, reactor, dilation=True)
    if role == "recv":
        w.allocate_code()
        out({"code": (yield w.get_code())})
    else:
        w.set_code(code)
    kw = {"no_listen": no_listen == "1"}
    if relay != "-":
        kw["transit_relay_location"] = relay
    if os.environ.get("DILATION_PEER_TIMELINE"):
        # ours only (the reference spells it on_status_update): print each
        # DilationStatus with a timestamp, to stderr
        kw["status_update"] = lambda s: print(
            f"{time.time():.3f} {role} gen={s.generation} {type(s.peer_connection).__name__}",
            file=sys.stderr, flush=True)
    dw = w.dilate(**kw)
    if role == "recv":
        f = protocol.Factory.forProtocol(Sink)
        f.bytes, f.closed, f.want, f.cpu0, f.sys0, f.flt0 = 0, 0, nsub, None, None, None
        f.last, f.gaps = 0.0, []
        f.all_closed = defer.Deferred()
        yield dw.listener_for("bench").listen(f)
        yield f.all_closed
        t_end = time.time()
        out({"role": "recv", "t_end": t_end, "bytes": f.bytes,
             "cpu_s": time.process_time() - (f.cpu0 or time.process_time()),
             "sys_s": sys_time() - (f.sys0 or sys_time()),
             "minflt": minor_faults() - (f.flt0 or minor_faults()),
             "rss_kib": peak_rss_kib(), "proc_cpu_s": process_cpu(), "gaps": f.gaps})
    else:
        f = protocol.Factory.forProtocol(Closed)
        f.closed, f.want, f.all_closed = 0, nsub, defer.Deferred()
        protos = []
        for _ in range(nsub):
            protos.append((yield dw.connector_for("bench").connect(f)))
        t_start, cpu0, sys0, flt0 = time.time(), time.process_time(), sys_time(), minor_faults()
        per = size // nsub
        for i, p in enumerate(protos):
            Source(reactor, p.transport, per + (size - per * nsub if i == 0 else 0),
                   None).start()
        # every CLOSE answered: the peer has read everything
        yield f.all_closed
        out({"role": "send", "t_start": t_start, "bytes": size,
             "cpu_s": time.process_time() - cpu0, "sys_s": sys_time() - sys0,
             "minflt": minor_faults() - flt0,
             "rss_kib": peak_rss_kib(), "proc_cpu_s": process_cpu()})
    yield w.close()


def attach_py_spy(out_path):
    """Sample this process with py-spy (wall time, native stacks excluded)
    into ``out_path`` in its raw format (bench/pyspy_summary.py reads it);
    py-spy stops when we exit."""
    import shutil
    import subprocess
    exe = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")
    subprocess.Popen([exe, "record", "--pid", str(os.getpid()), "--rate", "300",
                      *os.environ.get("DILATION_PEER_PYSPY_ARGS", "").split(),
                      "--format", "raw", "-o", out_path],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    import os
    spy = os.environ.get("DILATION_PEER_PYSPY")  # e.g. /tmp/recv.raw
    if spy and sys.argv[1] in os.environ.get("DILATION_PEER_PROFILE_ROLE", "recv"):
        attach_py_spy(spy)
    prof = os.environ.get("DILATION_PEER_PROFILE")  # e.g. /tmp/recv.prof
    if prof and sys.argv[1] in os.environ.get("DILATION_PEER_PROFILE_ROLE", "recv"):
        import cProfile
        profiler = cProfile.Profile(time.process_time)  # CPU, not wall time
        try:
            profiler.runcall(task.react, main, sys.argv[1:])
        finally:
            profiler.dump_stats(prof)
    else:
        task.react(main, sys.argv[1:])
