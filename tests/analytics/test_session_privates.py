"""wormhole_analytics._session.stop_for_exit replaces the shutdown of
PySpark's accumulator server, a private part of PySpark (the
``SparkContext._accumulatorServer`` attribute, its ``server_shutdown``
flag). Where PySpark no longer has them, stop_for_exit falls back on a
plain ``spark.stop()`` (correct, up to a second slower); these tests read
the installed PySpark's source, without starting a JVM, so that a PySpark
upgrade that drops them fails here, by name, instead of going unseen."""

import inspect

from twisted.trial import unittest


class PySparkPrivates(unittest.TestCase):
    def test_the_context_keeps_its_accumulator_server(self):
        """SparkContext stores the server as _accumulatorServer and stops
        it through its shutdown()."""
        from pyspark import context

        source = inspect.getsource(context.SparkContext)
        self.assertIn("self._accumulatorServer = ", source)
        self.assertIn("self._accumulatorServer.shutdown()", source)

    def test_the_server_polls_server_shutdown(self):
        """The server's handler stops when server_shutdown is set, the flag
        stop_for_exit sets instead of waiting for the handler."""
        from pyspark import accumulators

        self.assertIs(accumulators.AccumulatorTCPServer.server_shutdown, False)
        self.assertIn("while not self.server.server_shutdown",
                      inspect.getsource(accumulators.UpdateRequestHandler))
