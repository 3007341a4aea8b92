"""Read a server process's CPU time and RSS from /proc (Linux only).

No psutil: the two numbers we need are one read each, and the bench stays
free of extra dependencies.
"""

import os

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of every thread of `pid`, in seconds (proc(5) stat)."""
    with open("/proc/{}/stat".format(pid), "rb") as f:
        data = f.read()
    # comm (field 2) may hold spaces and parentheses: split after the last ')'
    fields = data[data.rindex(b")") + 2:].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / _TICK


def rss_bytes(pid):
    """Resident set size of `pid` (VmRSS from proc(5) status)."""
    with open("/proc/{}/status".format(pid), "rb") as f:
        for line in f:
            if line.startswith(b"VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS for pid {}".format(pid))


def machine_busy_seconds():
    """CPU seconds spent busy by the whole machine, all cores (proc(5) stat).

    Busy is everything but idle and iowait. The bench subtracts the server's
    and the client's share to show how much else ran at the same time.
    """
    with open("/proc/stat", "rb") as f:
        fields = f.readline().split()
    # cpu user nice system idle iowait irq softirq steal ...
    vals = [int(x) for x in fields[1:9]]
    busy = vals[0] + vals[1] + vals[2] + vals[5] + vals[6] + vals[7]
    return busy / _TICK


def open_fds(pid):
    return len(os.listdir("/proc/{}/fd".format(pid)))
