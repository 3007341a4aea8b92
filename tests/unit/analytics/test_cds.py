"""The driver JVM's class-data-sharing archive (wormhole_analytics._cds):
which JVM option the CLI adds, where the archive lives, and how a new one
is published. No JVM here: the process is a fake."""

import os
import subprocess

from twisted.trial import unittest

from wormhole_analytics import _cds

JAVA = "/usr/lib/jvm/x/bin/java:100:1"
PYSPARK = "/site/pyspark:4.0.0"


class FakeProc:
    """A driver JVM that writes ``writes`` when it exits."""

    def __init__(self, writes=None, hangs=False):
        self.writes, self.hangs = writes, hangs
        self.stdin = FakeStdin()
        self.waited = False

    def wait(self, timeout=None):
        self.waited = True
        if self.hangs:
            raise subprocess.TimeoutExpired("java", timeout)
        if self.writes:
            with open(self.writes, "wb") as f:
                f.write(b"archive")
        return 0


class FakeStdin:
    closed = False

    def close(self):
        self.closed = True


class ArchiveTests(unittest.TestCase):
    def setUp(self):
        self.cache = os.path.abspath(self.mktemp())
        self.env = {"WORMHOLE_ANALYTICS_CACHE": self.cache}

    def archive(self, conf, job="ingest"):
        return _cds.Archive(job, conf, self.env, java=JAVA, pyspark=PYSPARK)

    def test_path_keyed_by_job_java_and_options(self):
        """One archive per job, Java, PySpark and JVM options/extra jars,
        in the cache folder the environment names."""
        conf = {_cds.JAVA_OPTS: "-XX:+UseSerialGC"}

        def path(**kw):
            args = dict(job="ingest", conf=conf, environ=self.env,
                        java=JAVA, pyspark=PYSPARK)
            args.update(kw)
            return _cds.archive_path(**args)
        p = path()
        self.assertEqual(os.path.dirname(p), self.cache)
        self.assertTrue(p.endswith(".jsa"))
        self.assertEqual(p, path())
        others = [path(job="report"), path(java=JAVA + "2"),
                  path(pyspark="/site/pyspark:4.0.1"),
                  path(conf={_cds.JAVA_OPTS: ""}),
                  path(conf=dict(conf, **{"spark.jars": "a.jar"}))]
        self.assertEqual(len(set(others + [p])), 6)

    def test_cache_dir_defaults(self):
        """Without WORMHOLE_ANALYTICS_CACHE: $XDG_CACHE_HOME, else
        ~/.cache, each with a wormhole-analytics folder."""
        self.assertEqual(_cds.cache_dir({"XDG_CACHE_HOME": "/c"}),
                         "/c/wormhole-analytics")
        self.assertEqual(_cds.cache_dir({}), os.path.join(
            os.path.expanduser("~"), ".cache", "wormhole-analytics"))

    def test_first_run_writes_then_publishes(self):
        """No archive yet: the JVM is told to write one at exit, under a
        temporary name, kept after the given options; ``finish`` closes
        the JVM's stdin, waits for it and gives the file its name."""
        conf = {_cds.JAVA_OPTS: "-XX:+UseSerialGC"}
        a = self.archive(conf)
        self.assertTrue(a.writing)
        opts = conf[_cds.JAVA_OPTS].split()
        self.assertEqual(opts[0], "-XX:+UseSerialGC")
        dump = [o for o in opts if o.startswith("-XX:ArchiveClassesAtExit=")]
        self.assertEqual(len(dump), 1)
        tmp = dump[0].split("=", 1)[1]
        self.assertNotEqual(tmp, a.path)
        self.assertTrue(os.path.isdir(self.cache))
        proc = FakeProc(writes=tmp)
        a.finish(proc)
        self.assertTrue(proc.stdin.closed)
        self.assertTrue(os.path.exists(a.path))
        self.assertFalse(os.path.exists(tmp))

    def test_later_run_uses_it(self):
        """An archive in place: the JVM maps it, nothing is written and
        ``finish`` does not wait for the JVM."""
        first = self.archive({})
        os.makedirs(self.cache, exist_ok=True)
        with open(first.path, "wb") as f:
            f.write(b"archive")
        conf = {}
        a = self.archive(conf)
        self.assertFalse(a.writing)
        self.assertEqual(conf[_cds.JAVA_OPTS],
                         f"-XX:SharedArchiveFile={a.path}")
        proc = FakeProc()
        a.finish(proc)
        self.assertFalse(proc.waited)

    def test_switched_off(self):
        """spark.wormhole.classArchive=false: the options are left as they
        are."""
        conf = {_cds.CONF_KEY: "false", _cds.JAVA_OPTS: "-Xss4m"}
        a = self.archive(conf)
        self.assertEqual(conf[_cds.JAVA_OPTS], "-Xss4m")
        self.assertFalse(a.writing)
        self.assertFalse(os.path.exists(self.cache))

    def test_no_java_found(self):
        """No Java to key the archive by: nothing added."""
        conf = {}
        a = _cds.Archive("ingest", conf, {"PATH": "/nonexistent",
                                          **self.env}, pyspark=PYSPARK)
        self.assertEqual(conf, {})
        self.assertIsNone(a.path)

    def test_jvm_that_does_not_exit(self):
        """A JVM that outlives the wait: no archive is published (a half
        written one must never get the name), and no error."""
        a = self.archive({})
        a.finish(FakeProc(hangs=True))
        self.assertFalse(os.path.exists(a.path))



class CLITests(unittest.TestCase):
    def setUp(self):
        self.env = {"WORMHOLE_ANALYTICS_CACHE": os.path.abspath(
            self.mktemp())}
        self.patch(_cds, "cache_dir", lambda environ=None: self.env[
            "WORMHOLE_ANALYTICS_CACHE"])
        # PySpark's identity, not PySpark: the unit tests run without it
        self.patch(_cds, "_pyspark", lambda: PYSPARK)

    def test_archive_when_no_jvm_yet(self):
        """A command that starts the driver JVM gets the archive option."""
        from wormhole_analytics import _cli
        self.patch(_cli, "_gateway_process", lambda: None)
        conf = {}
        a = _cli._archive("ingest", conf)
        if a.path is None:  # no java on this machine: nothing to add
            self.assertEqual(conf, {})
        else:
            self.assertIn("-XX:", conf[_cds.JAVA_OPTS])

    def test_no_archive_for_a_running_jvm(self):
        """In a process whose driver JVM is already up (a session made
        before), no archive: no option added, and the shared JVM is
        never told to exit."""
        from wormhole_analytics import _cli
        self.patch(_cli, "_gateway_process", lambda: FakeProc())
        conf = {}
        self.assertIsNone(_cli._archive("ingest", conf))
        self.assertEqual(conf, {})
