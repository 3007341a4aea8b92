"""One SparkSession for the whole test process (a lazy module-level
singleton), with the fast and quiet settings of shared/SPARK.md."""

import os
import warnings

_session = None
HERE = os.path.dirname(os.path.abspath(__file__))


def spark():
    global _session
    if _session is None:
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
        warnings.filterwarnings("ignore", category=FutureWarning,
                                module="pyspark")
        from wormhole_analytics._session import get_session
        log4j = os.path.join(HERE, "log4j2-test.properties")
        _session = get_session("local[2]", app_name="wormhole-tests", conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.memory": "1g",
            "spark.driver.extraJavaOptions":
                "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 "
                f"-Dlog4j2.configurationFile=file:{log4j}",
        }, progress=False)
        _session.sparkContext.setLogLevel("ERROR")
    return _session


class QuietProgress:
    """A Progress that records its lines instead of printing them."""

    def __init__(self):
        self.lines = []

    def say(self, text):
        self.lines.append(text)
