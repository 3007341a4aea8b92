"""Random sequences of sender messages (and then random Transit records)
fed to the whole ``wormhole receive`` command, on the recording fakes of
the wormhole and Transit and a task.Clock: whatever arrives, the command
ends with its result or one ``TransferError`` (never another exception),
writes no raw control character to the terminal, creates nothing but the
accepted file in its folder, and leaves no timer behind."""
import io
import json
import os
import re
import shutil
import tempfile

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from twisted.trial import unittest

from wormhole.cli import cmd_receive
from wormhole.cli._config import Config
from wormhole.errors import TransferError

from ..cli.fakes import FakeFactory, FakeReactor, FakeTransits

_TEXT = st.sampled_from(["a.txt", "..", "", "\x1b[2J", "x" * 300, "é\u202e", "d/e", "\x00",
                         "ok", "zipfile/deflated", "\ud800"])
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**70), st.floats(),
                    _TEXT)
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["filename", "filesize", "dirname", "mode", "zipsize",
                                     "numbytes", "numfiles", "message", "file",
                                     "directory", "hints-v1", "type", "hostname", "port"]),
                    inner, max_size=5)), max_leaves=12)
_MESSAGE = st.one_of(
    st.dictionaries(st.sampled_from(["offer", "transit", "error", "answer", "other"]),
                    _JSON, max_size=3).map(lambda d: json.dumps(d).encode()),
    st.fixed_dictionaries({"offer": st.fixed_dictionaries({"file": st.fixed_dictionaries(
        {"filename": _TEXT, "filesize": st.integers(-1, 3000)})})}).map(
            lambda d: json.dumps(d).encode()),
    st.binary(max_size=40))
_RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class ReceiveCommandFuzz(unittest.TestCase):

    @settings(max_examples=200, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(_MESSAGE, min_size=1, max_size=4),
           st.lists(st.binary(max_size=1500), max_size=3), st.booleans())
    # found by this fuzz: the sender's cancel (an empty record) and an empty
    # reason, on a connection whose close never reports, left the command
    # waiting forever
    @example(messages=[b'{"offer": {"file": {"filename": "a.txt", "filesize": 1}}}'],
             records=[b"", b""], lose=False)
    def test_any_messages_then_any_records(self, messages, records, lose):
        """Any messages, then (if a file was accepted) any records and
        possibly a lost connection or silence past the peer timeout."""
        folder = tempfile.mkdtemp(prefix="i11-msg-fuzz-")
        self.addCleanup(shutil.rmtree, folder, True)
        cwd = os.path.join(folder, "cwd")
        os.mkdir(cwd)
        factory, reactor = FakeFactory(), FakeReactor()
        transits = FakeTransits(factory.log)
        cfg = Config(relay_url="ws://example/v1", create=factory.create,
                     stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(),
                     code="4-purple-sausages", accept_file=True, transit_receiver=transits,
                     cwd=cwd, free_space=lambda path: 10**6, hide_progress=True,
                     peer_timeout=60.0)
        d = cmd_receive.receive(reactor, cfg)
        w = factory.wormholes[0]
        w.got_key()
        w.got_verifier()
        for body in messages:
            w.deliver(body)
        if transits.made:
            pipe = transits.made[0].pipe
            pipe.feed(*records)
            if lose:
                pipe.lose()
        reactor.advance(61)  # silence past the peer timeout ends any wait
        outcome = []
        d.addCallbacks(outcome.append, lambda f: outcome.append(f.trap(TransferError)))
        self.assertEqual(len(outcome), 1, "the command did not end")
        self.assertEqual(reactor.getDelayedCalls(), [])
        for stream in (cfg.stdout.getvalue(), cfg.stderr.getvalue()):
            self.assertIsNone(_RAW_CONTROL.search(stream), stream)
        made = os.listdir(cwd)
        self.assertLessEqual(len(made), 1)
        self.assertEqual(os.listdir(folder), ["cwd"])
        for name in made:
            self.assertFalse(name.startswith(".wormhole-partial-"), made)
