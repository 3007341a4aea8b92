"""Benchmark of the analytics jobs (docs/performance.md, "Analytics"): for 1M,
10M and 30M generated events, wall time, CPU seconds and peak RSS (the whole
process tree: Python driver + JVM) of

- ``straight``: a straightforward PySpark job over the raw JSON lines
  (bench/_analytics_straight.py),
- ``ingest``: ``python -m wormhole_analytics ingest`` (JSON lines to the
  Parquet store and its per-day summaries; its parsing runs in Spark's
  Python workers with pyarrow),
- ``report``: ``python -m wormhole_analytics report`` over the store,
- ``duckdb``: the same daily aggregates in DuckDB over the JSON files,

side by side in one run. One line per figure on stdout:

    analytics events=10000000 job=report wall_s=... cpu_s=... peak_rss_mb=... \
        events_per_s=... load1=...

    python bench/analytics_bench.py --sizes 1M,10M [--work /tmp/anbench]
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from analytics_gen import generate  # noqa: E402  bench/ is no package: found once HERE is on sys.path

_TICK = os.sysconf("SC_CLK_TCK")
PY = sys.executable


def _tree(root):
    """PIDs of root and all its descendants, from /proc."""
    children = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        ppid = int(data[data.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(p))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _sample(pid):
    """(cpu seconds, rss bytes) of one process, or None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        fields = data[data.rindex(b")") + 2:].split()
        cpu = (int(fields[11]) + int(fields[12])) / _TICK
        rss = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        return cpu, rss
    except (OSError, ValueError, IndexError):
        return None


def measure(cmd, env=None):
    """Run ``cmd``; wall seconds, CPU seconds and peak RSS of its process
    tree (sampled every 0.1 s; CPU is the last value seen per PID)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    cpu_seen, peak = {}, 0
    while proc.poll() is None:
        total = 0
        for pid in _tree(proc.pid):
            s = _sample(pid)
            if s:
                cpu_seen[pid] = s[0]
                total += s[1]
        peak = max(peak, total)
        time.sleep(0.1)
    wall = time.monotonic() - t0
    out, err = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"{cmd} failed:\n{err.decode()[-3000:]}")
    return wall, sum(cpu_seen.values()), peak, out.decode()


DUCKDB_SQL = """
COPY (
  SELECT strftime(to_timestamp(started), '%Y-%m-%d') AS day, kind, server,
         app_id, count(*) AS n,
         {moods},
         quantile_cont(waiting_time, [0.5, 0.9, 0.99]) AS wait,
         quantile_cont(total_time, [0.5, 0.9, 0.99]) AS total,
         sum(bytes) AS bytes
  FROM read_json('{glob}', format='newline_delimited', columns={{
      v: 'BIGINT', server: 'VARCHAR', kind: 'VARCHAR', app_id: 'VARCHAR',
      started: 'DOUBLE', waiting_time: 'DOUBLE', total_time: 'DOUBLE',
      result: 'VARCHAR', bytes: 'BIGINT',
      clients: 'STRUCT(side VARCHAR, impl VARCHAR, version VARCHAR)[]'}})
  WHERE kind <> 'bind'
  GROUP BY ALL
) TO '{out}' (FORMAT parquet, PARTITION_BY (day), OVERWRITE_OR_IGNORE)
"""

MOODS = ["happy", "lonely", "scary", "errory", "pruney", "crowded", "quiet",
         "impatient", "redundant", "jilted", "empty"]


def _duckdb_script(glob, out):
    moods = ", ".join(f"count(*) FILTER (WHERE result = '{m}') AS {m}"
                      for m in MOODS)
    sql = DUCKDB_SQL.format(moods=moods, glob=glob, out=out)
    return ("import duckdb; c = duckdb.connect(); "
            "c.execute(\"SET threads=2\"); "
            f"c.execute({sql!r})")


def run(size, work, jobs, driver_mem):
    events = os.path.join(work, f"events-{size}")
    if not os.path.isdir(events):
        generate(events, size)
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", DRIVER_MEM=driver_mem)
    spark_conf = ["--master", "local[2]", "--quiet",
                  "--conf", f"spark.driver.memory={driver_mem}",
                  "--conf", "spark.ui.showConsoleProgress=false"]
    store = os.path.join(work, f"store-{size}")
    for job in jobs:
        if job == "straight":
            out = os.path.join(work, f"straight-{size}")
            cmd = [PY, os.path.join(HERE, "_analytics_straight.py"), out,
                   events]
        elif job == "ingest":
            shutil.rmtree(store, ignore_errors=True)
            cmd = [PY, "-m", "wormhole_analytics", "ingest", "--events",
                   events, "--store", store, "--include-open"] + spark_conf
        elif job == "report":
            cmd = [PY, "-m", "wormhole_analytics", "report", "--store",
                   store, "--out", os.path.join(work, f"report-{size}")] \
                + spark_conf
        elif job == "duckdb":
            out = os.path.join(work, f"duckdb-{size}")
            shutil.rmtree(out, ignore_errors=True)
            cmd = [PY, "-c", _duckdb_script(
                os.path.join(events, "*.jsonl"), out)]
        else:
            raise SystemExit(f"unknown job {job}")
        wall, cpu, peak, _ = measure(cmd, env)
        # the machine is shared: the 1-minute load average at the end of
        # each job says how much to trust its wall time
        print(f"analytics events={size} job={job} wall_s={wall:.1f} "
              f"cpu_s={cpu:.1f} peak_rss_mb={peak / 2 ** 20:.0f} "
              f"events_per_s={size / wall:.0f} "
              f"load1={os.getloadavg()[0]:.1f}", flush=True)


def _size(text):
    text = text.upper()
    mult = {"K": 10 ** 3, "M": 10 ** 6}.get(text[-1], 1)
    return int(float(text.rstrip("KM")) * mult)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1M,10M,30M")
    p.add_argument("--jobs", default="straight,ingest,report,duckdb")
    p.add_argument("--work", default="/tmp/analytics-bench")
    p.add_argument("--driver-memory", default="2g")
    a = p.parse_args()
    for size in a.sizes.split(","):
        run(_size(size), a.work, a.jobs.split(","), a.driver_memory)
