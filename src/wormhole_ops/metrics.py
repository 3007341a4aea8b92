# -*- test-case-name: tests.ops.test_metrics -*-
"""The ``--metrics`` site of both servers: ``/metrics`` for Prometheus and
``/health`` for load balancers and service managers.

The page is rendered on the reactor thread with ``prometheus_client``'s
``generate_latest``: the servers' collectors read live state (connections,
nameplates, pairs) that only the reactor thread may touch, so
``prometheus_client.twisted.MetricsResource`` (which renders on a thread
pool) is not used. Each server has its own ``CollectorRegistry``, never the
process-wide default: two servers in one process (tests, ``twistd`` with
both plugins) must not mix their counts.
"""

import json

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import GaugeMetricFamily
from twisted.application import strports
from twisted.web.http import combinedLogFormatter
from twisted.web.resource import Resource
from twisted.web.server import Site


class _MetricsPage(Resource):
    isLeaf = True

    def __init__(self, registry):
        super().__init__()
        self._registry = registry

    def render_GET(self, request):
        request.setHeader(b"content-type", CONTENT_TYPE_LATEST.encode())
        return generate_latest(self._registry)


class _HealthPage(Resource):
    """200 when the server accepts work, else 503; the body says why, as
    JSON (``{"accepting": true, ...}``)."""

    isLeaf = True

    def __init__(self, health):
        super().__init__()
        self._health = health

    def render_GET(self, request):
        report = self._health()
        request.setResponseCode(200 if report["accepting"] else 503)
        request.setHeader(b"content-type", b"application/json")
        return json.dumps(report).encode() + b"\n"


class _Root(Resource):
    def render_GET(self, request):
        request.setHeader(b"content-type", b"text/plain")
        return b"/metrics: Prometheus metrics\n/health: accepting work?\n"


def _access_line(timestamp, request):
    """Twisted's combined access-log line with ``-`` where the scraper's
    address would be: the servers log no client address
    (docs/operations.md "No IP addresses"); the address is escaped, so
    the first ``" - - `` ends it."""
    line = combinedLogFormatter(timestamp, request)
    return '"-"' + line[line.index('" - - ') + 1:]


def metrics_site(registry, health):
    """A ``Site`` with ``/metrics`` (``registry``) and ``/health``
    (``health()`` returns a dict with at least ``accepting``)."""
    root = _Root()
    root.putChild(b"metrics", _MetricsPage(registry))
    root.putChild(b"health", _HealthPage(health))
    return Site(root, logFormatter=_access_line)


def metrics_service(description, registry, health):
    """A service listening on the strports ``description`` (``--metrics``)
    with the metrics site."""
    site = metrics_site(registry, health)
    site.noisy = False
    return strports.service(description, site)


class LiveGauges:
    """A collector whose gauges are read from the server when scraped:
    ``gauges`` is a list of (name, help, labels, read) where ``read()``
    returns a number (no labels) or {label value tuple: number}."""

    def __init__(self, gauges):
        self._gauges = gauges

    def collect(self):
        """Read every gauge now (prometheus_client calls this on a scrape)."""
        for name, text, labels, read in self._gauges:
            family = GaugeMetricFamily(name, text, labels=labels or None)
            value = read()
            if labels:
                for key, v in value.items():
                    family.add_metric(list(key), v)
            else:
                family.add_metric([], value)
            yield family
