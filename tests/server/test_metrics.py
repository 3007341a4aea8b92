"""`twistd wormhole-mailbox --metrics`: scraped with prometheus_client's own
parser after real `wormhole` transfers and refused messages, the counters
equal what those imply; /health answers."""

import json

from prometheus_client.parser import text_string_to_metric_families
from twisted.internet import defer, reactor
from twisted.web.client import Agent, readBody

from .._processes import free_port
from ..interop.harness import (
    InteropTestCase,
    mailbox_moods,
    our_classic_cli_argv,
    our_cli_argv,
    ref_cli_argv,
)
from ._client import connect


@defer.inlineCallbacks
def fetch(url):
    """(status, body) of a GET."""
    response = yield Agent(reactor).request(b"GET", url.encode())
    body = yield readBody(response)
    return response.code, body


def samples(text):
    """{(name, frozenset(labels.items())): value} of every sample."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples}


class Metrics(InteropTestCase):
    @defer.inlineCallbacks
    def test_after_transfers(self):
        """Two text transfers (the reference's CLI to ours, ours to ours
        with --classic: transfer-v2's Dilation would add its messages),
        one over-deep and one over-large message: the scrape counts 5
        connections, 2 happy nameplates and mailboxes, 12 mailbox messages
        (PAKE, version and one application message from each side of each
        transfer), one refusal per limit; nothing is left open and /health
        says the server accepts work."""
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = yield self.start_our_twistd_server(
            ["--metrics", f"tcp:{port}:interface=127.0.0.1",
             "--max-message-size", "10000"])
        yield self.exchange_text(server.url, ref_cli_argv, our_cli_argv,
                                 "one", code="4-purple-sausages")
        yield self.exchange_text(server.url, our_classic_cli_argv, our_classic_cli_argv,
                                 "two", code="5-purple-sausages")
        yield self.wait_for_moods(
            server, lambda rows: len(mailbox_moods(rows)) >= 2)
        raw = yield connect(reactor, server.url)
        yield raw.next("welcome")
        raw.send_raw(b"[" * 100 + b"]" * 100)
        yield raw.next("error")
        raw.send(type="ping", ping="x" * 20000)
        yield raw.next("error")
        yield raw.close()

        code, text = yield fetch(base + "/metrics")
        self.assertEqual(code, 200)
        got = samples(text.decode())

        def value(name, **labels):
            return got.get((name, frozenset(labels.items())))

        p = "wormhole_mailbox_"
        self.assertEqual(value(p + "connections_total"), 5)
        for kind in ("nameplate", "mailbox"):
            self.assertEqual(
                value(p + "sessions_total", kind=kind, result="happy"), 2)
        self.assertEqual(value(p + "messages_total"), 12)
        self.assertEqual(value(p + "refused_messages_total",
                               limit="max_json_depth"), 1)
        self.assertEqual(value(p + "refused_messages_total",
                               limit="max_message_size"), 1)
        self.assertEqual(value(p + "errors_total", kind="bad_message"), 2)
        self.assertEqual(value(p + "open_connections"), 0)
        for kind in ("nameplate", "mailbox"):
            for state in ("waiting", "paired"):
                self.assertEqual(value(p + "channels", kind=kind,
                                       state=state), 0)
        self.assertEqual(value(p + "database_failing"), 0)

        code, body = yield fetch(base + "/health")
        self.assertEqual(code, 200)
        self.assertEqual(json.loads(body), {
            "accepting": True, "database": "ok", "connections": 0})
