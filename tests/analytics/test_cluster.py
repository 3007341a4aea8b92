"""The same module under ``spark-submit`` on a standalone Spark cluster
(docs/analytics.md, "On a Spark cluster"): a master and a worker started from the installed
pyspark's ``spark-class``, bound to 127.0.0.1, stopped by PID."""

import os
import signal
import subprocess
import sys
import time

import pyspark
from twisted.trial import unittest

import wormhole_analytics.submit as submit_module
from wormhole_analytics._generate import write_files

from .._processes import free_port

SPARK_BIN = os.path.join(os.path.dirname(pyspark.__file__), "bin")
LOG4J = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "log4j2-test.properties")


def wait_for(path, pattern, proc, tries=1200):
    """Until ``pattern`` shows up in the log file (polling; the process
    is ours and is killed at cleanup whatever happens)."""
    for _ in range(tries):
        with open(path, errors="replace") as f:
            text = f.read()
        if pattern in text:
            return
        if proc.poll() is not None:
            raise AssertionError(f"exited before {pattern!r}:\n{text}")
        time.sleep(0.1)
    raise AssertionError(f"no {pattern!r} in {path}")


class StandaloneCluster(unittest.TestCase):
    def _start(self, name, *args):
        log = os.path.join(self.base, f"{name}.log")
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1",
                   SPARK_NO_DAEMONIZE="1",
                   SPARK_LOG_DIR=self.base,
                   SPARK_WORKER_DIR=os.path.join(self.base, "work"))
        with open(log, "wb") as f:
            proc = subprocess.Popen(
                [os.path.join(SPARK_BIN, "spark-class"), *args],
                stdout=f, stderr=subprocess.STDOUT, env=env,
                start_new_session=True)
        self.addCleanup(self._stop, proc)
        return proc, log

    def _stop(self, proc):
        """SIGTERM then SIGKILL, by the process group of the PID we
        started (spark-class execs the JVM in that group)."""
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def test_report_on_standalone_cluster(self):
        """ingest and report run unchanged under spark-submit against a
        standalone master with one worker, and write the report."""
        self.base = os.path.abspath(self.mktemp())
        os.makedirs(self.base)
        port = free_port()
        master, mlog = self._start(
            "master", "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1", "--port", str(port),
            "--webui-port", str(free_port()))
        wait_for(mlog, "I have been elected leader", master)
        url = f"spark://127.0.0.1:{port}"
        worker, wlog = self._start(
            "worker", "org.apache.spark.deploy.worker.Worker", url,
            "--host", "127.0.0.1", "--webui-port", str(free_port()),
            "--cores", "1", "--memory", "1g")
        wait_for(wlog, "Successfully registered with master", worker)
        events = os.path.join(self.base, "events")
        write_files(events, 2000, seed=3, days=2, servers=2)
        store = os.path.join(self.base, "store")
        out = os.path.join(self.base, "out")
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1",
                   PYSPARK_PYTHON=sys.executable,
                   PYSPARK_DRIVER_PYTHON=sys.executable)
        outputs = []
        for argv in (["ingest", "--events", events, "--store", store],
                     ["report", "--store", store, "--out", out]):
            cmd = [os.path.join(SPARK_BIN, "spark-submit"),
                   "--master", url, "--deploy-mode", "client",
                   "--conf", "spark.ui.enabled=false",
                   "--conf", "spark.driver.host=127.0.0.1",
                   "--conf", "spark.driver.bindAddress=127.0.0.1",
                   "--conf", "spark.executor.memory=512m",
                   "--driver-java-options",
                   f"-Dlog4j2.configurationFile=file:{LOG4J}",
                   submit_module.__file__, *argv, "--quiet"]
            r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               check=False,
                               timeout=300)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            outputs.append(r.stdout)
        self.assertIn("events=2000 quarantined=0", outputs[0])
        # the jobs ran on the cluster, not in a local master
        with open(mlog, errors="replace") as f:
            self.assertEqual(f.read().count("Registering app "), 2)
        self.assertTrue(os.path.exists(os.path.join(out, "report.html")))
        with open(os.path.join(out, "published", "daily.csv")) as f:
            header = f.readline()
            rows = f.readlines()
        self.assertTrue(header.startswith("day,kind,server,app_id,n,"))
        total = sum(int(line.split(",")[4]) for line in rows
                    if line.split(",")[2] == "*")
        # every event but the binds is counted in one all-servers row
        binds = 0
        for name in os.listdir(events):
            with open(os.path.join(events, name)) as f:
                binds += sum('"kind":"bind"' in line for line in f)
        self.assertEqual(total, 2000 - binds)
