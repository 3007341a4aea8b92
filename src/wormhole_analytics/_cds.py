"""A class-data-sharing archive for the driver JVM of the command-line jobs.

Starting the driver JVM (loading and verifying Spark's few thousand
classes from its jars) was the largest fixed cost left in ``ingest``: about
1.5 of its CPU seconds, at any input size. Java's dynamic class-data
sharing (JDK 13+, ``-XX:ArchiveClassesAtExit`` / ``-XX:SharedArchiveFile``)
maps those classes, already parsed and verified, from a file written once.

The first run of a job (``ingest`` or ``report``) writes its archive when
its JVM exits (once: about 10 s more wall time, the CLI waits for it, and
a 120 MB file); later runs use it (measured: 1.2-1.6
CPU s and 1.4 s wall less per run at 1M events). One archive per job and
per (java, pyspark, JVM options, extra jars), named by a hash of them, in
``$WORMHOLE_ANALYTICS_CACHE`` (default ``$XDG_CACHE_HOME/wormhole-analytics``
or ``~/.cache/wormhole-analytics``). An archive the JVM cannot use (a Java
updated in place) only costs a warning: sharing is off for that run.
``--conf spark.wormhole.classArchive=false`` turns it off. Under
``spark-submit`` the driver JVM is already running: nothing to do.
"""

import hashlib
import os
import shutil

from ._session import JAVA_OPTS, end_gateway

CONF_KEY = "spark.wormhole.classArchive"

# settings that change the driver's classpath or its JVM
_KEYED = (JAVA_OPTS, "spark.jars", "spark.jars.packages",
          "spark.driver.extraClassPath")


def cache_dir(environ=os.environ):
    d = environ.get("WORMHOLE_ANALYTICS_CACHE")
    if d:
        return d
    base = environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "wormhole-analytics")


def _java(environ):
    home = environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which(
        "java", path=environ.get("PATH"))
    if not java:
        return None
    java = os.path.realpath(java)
    st = os.stat(java)
    return f"{java}:{st.st_size}:{st.st_mtime_ns}"


def _pyspark():
    import pyspark
    return f"{os.path.dirname(pyspark.__file__)}:{pyspark.__version__}"


def archive_path(job, conf, environ=os.environ, java=None, pyspark=None):
    """Where ``job``'s archive for this JVM and these settings lives, or
    None when there is no Java to key it by."""
    java = java if java is not None else _java(environ)
    if not java:
        return None
    pyspark = pyspark if pyspark is not None else _pyspark()
    key = "\n".join([job, java, pyspark]
                    + [f"{k}={conf.get(k, '')}" for k in _KEYED])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return os.path.join(cache_dir(environ), f"{job}-{digest}.jsa")


class Archive:
    """What the CLI does: ``conf`` (its settings, updated in place) gets
    the JVM option that uses or writes the archive; ``finish(proc)``,
    after the job, lets the JVM exit so a new archive is written whole,
    then publishes it under its name (the JVM writes to a temporary name,
    so a concurrent run never maps a half-written file)."""

    def __init__(self, job, conf, environ=os.environ, **keys):
        self.path = self._writing = None
        if conf.get(CONF_KEY, "true").lower() in ("false", "off", "0"):
            return
        path = archive_path(job, conf, environ, **keys)
        if path is None:
            return
        self.path = path
        opts = conf.get(JAVA_OPTS, "")
        if os.path.exists(path):
            flag = f"-XX:SharedArchiveFile={path}"
        else:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
            except OSError:  # no writable cache: run without
                self.path = None
                return
            self._writing = f"{path}.{os.getpid()}.tmp"
            # the dump lists every class it leaves out (Spark's old
            # bytecode, generated accessors) as a warning: not news
            flag = (f"-XX:ArchiveClassesAtExit={self._writing} "
                    "-Xlog:cds*=off")
        conf[JAVA_OPTS] = f"{opts} {flag}".strip()

    @property
    def writing(self):
        return self._writing is not None

    def finish(self, proc, timeout=120):
        """``proc``: the driver JVM's process (a ``Popen``), its session
        stopped. Close its stdin (the gateway exits on EOF), wait for the
        archive to be written, and give it its name."""
        if not self.writing or proc is None:
            return
        if not end_gateway(proc, timeout):
            return  # a JVM that will not exit: leave it be
        if os.path.exists(self._writing):
            os.replace(self._writing, self.path)
