"""The servers' ``--metrics`` site scraped over 127.0.0.1 and ::1: each
request still leaves its access-log line, with ``-`` where Twisted would
write the scraper's address (docs/operations.md, "Logs": "No IP
addresses")."""
import socket

from prometheus_client import CollectorRegistry
from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.logger import globalLogPublisher
from twisted.trial import unittest
from twisted.web.client import Agent, readBody

from wormhole_ops.metrics import metrics_site


def _has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


class AccessLog(unittest.TestCase):
    def setUp(self):
        self.lines = []

        def observe(event):
            # the access log reaches the log as lines on twisted.python.log.logfile
            text = event.get("log_io") or event.get("message") or event.get("log_format")
            if isinstance(text, (list, tuple)):
                text = " ".join(map(str, text))
            if text:
                self.lines.append(str(text))
        globalLogPublisher.addObserver(observe)
        self.addCleanup(globalLogPublisher.removeObserver, observe)

    @inlineCallbacks
    def scrape(self, interface, host):
        site = metrics_site(CollectorRegistry(), lambda: {"accepting": True})
        port = reactor.listenTCP(0, site, interface=interface)
        self.addCleanup(port.stopListening)
        agent = Agent(reactor)
        for path in (b"/metrics", b"/health"):
            url = b"http://%s:%d%s" % (host, port.getHost().port, path)
            response = yield agent.request(b"GET", url)
            yield readBody(response)
            self.assertEqual(response.code, 200)
        # the site writes its line when the request finishes; one turn
        from twisted.internet.task import deferLater
        yield deferLater(reactor, 0.05, lambda: None)
        access = [line for line in self.lines if "GET /" in line]
        self.assertEqual(len(access), 2, self.lines)
        for line in access:
            self.assertTrue(line.startswith('"-" - - '), line)
        self.assertEqual([line for line in self.lines if interface in line], [])

    def test_ipv4(self):
        """A scrape over 127.0.0.1: lines without the address."""
        return self.scrape("127.0.0.1", b"127.0.0.1")

    def test_ipv6(self):
        """A scrape over ::1 (when the machine has it): the same."""
        if not _has_ipv6_loopback():
            return self.scrape("127.0.0.1", b"127.0.0.1")  # the rule holds on v4
        return self.scrape("::1", b"[::1]")
