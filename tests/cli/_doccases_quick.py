"""The cases of docs/cli.md "Exit status", and of the "Messages" rows that
need no file to move (the command line, the Mailbox server, the code,
the peers' words): support for tests/cli/test_documented_errors.py."""
import os
import re

from twisted.internet import defer, reactor

from wormhole.errors import WrongPasswordError

from ._docscenarios import PROMPT, Case, closed_port, code

# -- Exit status: one representative command per status -------------------

@defer.inlineCallbacks
def completed(t):
    """A text goes through."""
    c = code()
    send = t.send(c, "--text", "hi")
    recv = t.receive(c)
    runs = yield t.ended(sender=send, receiver=recv)
    t.assertIn(b"hi", recv.stdout)
    return runs


def no_server(t):
    """The Mailbox server is not there."""
    return t.ended(sender=t.cli("sender", "send", "--no-qr", "--text", "hi",
                                url=f"ws://127.0.0.1:{closed_port()}/v1"))


@defer.inlineCallbacks
def usage_errors(t):
    """Each command line the row lists as wrong, and click's own usage
    error (an unknown option)."""
    c = code()
    runs = {
        "unknown option": t.cli("cli", "send", "--bogus"),
        "-0 with a code": t.cli("cli", "receive", "-0", c),
        "--launch-tor with --tor-control-port": t.cli(
            "cli", "send", "--launch-tor", "--tor-control-port", "tcp:127.0.0.1:1", "--text",
            "hi"),
        "--classic with several paths": t.cli("cli", "send", "--classic", "a", "b"),
        "--classic with --transfer-v2": t.cli("cli", "send", "--classic", "--transfer-v2", "a"),
        "--tor with several paths": t.cli("cli", "send", "--tor", "a", "b"),
        "a code in several arguments": t.cli("cli", "receive", "1-purple", "sausages"),
    }
    yield t.ended(**runs)
    for name, run in runs.items():
        t.assertRegex(run.stderr.decode(), r"(?m)^Usage: wormhole .*\n(.*\n)*Error: \S",
                      f"{name}: {run.describe()}")
    return runs


@defer.inlineCallbacks
def only_text(t):
    """Our receiver refuses a file (--only-text): both sides exit 3."""
    c = code()
    src = t.folder("a.txt")
    send = t.send(c, "a.txt", cwd=src)
    recv = t.receive(c, "--only-text", cwd=t.folder())
    return (yield t.ended(sender=send, receiver=recv))


@defer.inlineCallbacks
def stopped(t):
    """Ctrl-C (SIGINT) at the receiver's question; SIGTERM to a sender
    waiting for its peer."""
    c = code()
    send = t.send(c, "a.txt", cwd=t.folder("a.txt"))
    recv = t.receive(c, cwd=t.folder())
    lone = t.send(code(), "--text", "hi")
    yield recv.wait_for(PROMPT)
    recv.transport.signalProcess("INT")
    yield lone.wait_for(rb"wormhole receive")
    lone.transport.signalProcess("TERM")
    return (yield t.ended(receiver=recv, sender=lone, other=send))


EXIT_STATUS = {
    "0": Case(completed, {"sender": [], "receiver": []}, {"sender": 0, "receiver": 0}),
    "1": Case(no_server, {"sender": []}, {"sender": 1}),
    "2": Case(usage_errors, {}, {}),  # every run: see check_status
    "3": Case(only_text, {"sender": [], "receiver": []}, {"sender": 3, "receiver": 3}),
    "130, 143": Case(stopped, {"receiver": [], "sender": []}, {"receiver": 130, "sender": 143}),
}


# -- Messages -------------------------------------------------------------

@defer.inlineCallbacks
def wrong_code(t):
    c = code()
    send = t.send(c, "--text", "hi")
    recv = t.receive(c + "-wrong")
    return (yield t.ended(sender=send, receiver=recv))


@defer.inlineCallbacks
def malformed_codes(t):
    """Each code the row names, as the receiver's argument, and one as the
    sender's ``--code``: refused before the command says anything (the
    sender said "Sending text message" first)."""
    runs = {f"receive {c!r}": t.cli("receiver", "receive", c)
            for c in ("7 purple", "purple-sausages", " 7-x")}
    runs["send --code bad"] = t.cli("sender", "send", "--no-qr", "--code", "bad", "--text", "hi")
    yield t.ended(**runs)
    for run in runs.values():
        # "and what a code looks like"
        t.assertIn("like 4-purple-sausages", run.stderr.decode())
        t.assertTrue(run.stderr.startswith(b"ERROR: that is not a valid wormhole code"),
                     run.stderr)
        t.assertEqual(run.stdout, b"")
    return runs


@defer.inlineCallbacks
def bad_relay_url(t):
    """Refused before the command says anything (not after "Sending text
    message"): the ERROR line is all of stderr."""
    run = t.cli("sender", "send", "--no-qr", "--text", "hi", url="http://x")
    yield run.ended
    t.assertEqual([line for line in run.stderr.decode().splitlines() if line.strip()],
                  [line for line in run.stderr.decode().splitlines() if line.startswith("ERROR")])
    return {"sender": run}


@defer.inlineCallbacks
def refuses_us(t):
    """A Mailbox server whose welcome carries an ``error``."""
    from wormhole_mailbox.testing import start_mailbox_server
    srv = yield start_mailbox_server(reactor, port=0, signal_error="closed for maintenance")
    t.addCleanup(srv.stop)
    run = t.cli("sender", "send", "--no-qr", "--text", "hi", url=srv.url)
    yield run.ended
    t.assertIn(b"closed for maintenance", run.stderr)
    return {"sender": run}


@defer.inlineCallbacks
def server_error(t):
    """A Mailbox server that lets no nameplate be claimed (its limit of
    nameplates per AppID is 0) answers the claim with an ``error``."""
    from wormhole_mailbox.testing import start_mailbox_server
    srv = yield start_mailbox_server(reactor, port=0, max_nameplates=0)
    t.addCleanup(srv.stop)
    return (yield t.ended(sender=t.send(code(), "--text", "hi", url=srv.url)))


@defer.inlineCallbacks
def declined(t):
    """The receiver's human says no (the sender reports it); the
    sender's human rejects the verifier (the receiver reports it)."""
    c1, c2 = code(), code()
    send1 = t.send(c1, "a.txt", cwd=t.folder("a.txt"))
    recv1 = t.receive(c1, cwd=t.folder(), stdin=b"n\n")
    send2 = t.send(c2, "--verify", "a.txt", cwd=t.folder("a.txt"))
    recv2 = t.receive(c2, "--accept-file", cwd=t.folder())
    yield send2.wait_for(rb"Verifier ")
    send2.write(b"n\n")
    return (yield t.ended(sender=send1, other_receiver=recv1, receiver=recv2,
                          other_sender=send2))


@defer.inlineCallbacks
def gave_up(t):
    """Our sender of two files to a receiver that speaks only classic
    gives up, saying why; our ``share`` gives up on a classic sender."""
    c1, c2 = code(), code()
    send1 = t.send(c1, "a.txt", "b.txt", cwd=t.folder("a.txt", "b.txt"))
    recv1 = t.receive(c1, "--classic", "--accept-file", cwd=t.folder())
    send2 = t.send(c2, "--classic", "a.txt", cwd=t.folder("a.txt"))
    share = t.cli("share", "share", "--hide-progress", "--code", c2, cwd=t.folder(), stdin=b"")
    return (yield t.ended(receiver=recv1, other_sender=send1, sender=send2, share=share))


@defer.inlineCallbacks
def bad_transit_helper(t):
    run = t.send(code(), "a.txt", cwd=t.folder("a.txt"), helper="bogus")
    yield run.ended
    t.assertNotIn(b"Wormhole code is", run.stdout + run.stderr)  # before a code
    return {"sender": run}


def no_such_file(t):
    return t.ended(sender=t.send(code(), "NOSUCHFILE", cwd=t.folder()))


@defer.inlineCallbacks
def unsendable(t):
    """A dangling link in the folder (classic: the whole folder is zipped
    before the code)."""
    src = t.folder()
    os.makedirs(os.path.join(src, "d"))
    os.symlink(os.path.join(src, "nowhere"), os.path.join(src, "d", "dangling"))
    return (yield t.ended(sender=t.send(code(), "--classic", "d", cwd=src)))


@defer.inlineCallbacks
def no_ssh_key(t):
    home = t.folder()
    run = t.cli("ssh", "ssh", "accept", code(), cwd=home, env={"HOME": home})
    return (yield t.ended(ssh=run))


@defer.inlineCallbacks
def usage_lines(t):
    """The row's three kinds of command line."""
    runs = {"several CODE arguments": t.cli("cli", "receive", "1-purple", "2-sausages"),
            "--tor with several paths": t.cli("cli", "send", "--tor", "a", "b"),
            "options that exclude each other": t.cli("cli", "send", "--classic",
                                                     "--transfer-v2", "a")}
    return (yield t.ended(**runs))


QUICK_MESSAGES = {
    "wrong code on either side": Case(
        wrong_code,
        # the row describes the text instead of quoting it: the library's
        {"sender": [re.escape(f"ERROR: {WrongPasswordError()}")],
         "receiver": [re.escape(f"ERROR: {WrongPasswordError()}")]},
        unchecked={0: "a class name, whose text the runs check"}),
    "malformed code (`7 purple`, `purple-sausages`, ` 7-x`)": Case(
        malformed_codes, {**{f"receive {c!r}": [0] for c in ("7 purple", "purple-sausages",
                                                             " 7-x")},
                          "send --code bad": [0]}),
    "malformed `--relay-url`": Case(bad_relay_url, {"sender": [0]}),
    "no server at the URL": Case(no_server, {"sender": [0]}),
    "the server refuses us (welcome `error`)": Case(refuses_us, {"sender": [0]}),
    "the server reports an error": Case(server_error, {"sender": [0]}),
    "the peer declined (`transfer rejected`, verifier rejected)": Case(
        declined, {"receiver": [0], "sender": [1]}),
    "the peer sent another `error`": Case(gave_up, {"receiver": [0], "sender": [1]}),
    "malformed `--transit-helper`": Case(bad_transit_helper, {"sender": [0]}),
    "`wormhole send NOSUCHFILE`": Case(no_such_file, {"sender": [0]}),
    "something in a directory that cannot be sent": Case(unsendable, {"sender": [0]}),
    "`ssh accept` without a key": Case(no_ssh_key, {"ssh": [0]}),
    "several CODE arguments, `--tor` with several paths, options that exclude each other":
        Case(usage_lines, {name: [0, 1] for name in ("several CODE arguments",
                                                     "--tor with several paths",
                                                     "options that exclude each other")}),
}

# rows no run of our CLI produces, each with why: counted as covered by
# the check that every row has a case
# rows no command line reaches, each with why (none today: the row for the
# library's LonelyError went, since the CLI closes a wormhole before its
# key only when stopped, which exits 130/143 with no ERROR line)
NOT_RUN = {
    # --lan needs a local network with multicast: namespaces of its own
    "`--lan`: nobody announces the nameplate":
        "tests/lan/test_lan.py, test_killed_sender_misleads_nobody",
    "`--lan`: two servers announce it": "tests/lan/test_lan.py, "
                                        "test_forged_announcement_is_refused",
    "`--lan` without the extra": "tests/test_install.py, test_lan_names_the_extra_it_needs",
    # streams need a pipe on each side and, for the classic case, the
    # reference in a namespace: their own module
    "streams: the receiver cannot take a stream (the classic protocol, or transfer-v2 "
    "without the `stream` feature)":
        "tests/streams/test_stream_cli.py, WithoutTheFeature",
    "streams: the reader of `receive --stdout` stops early (a closed pipe)":
        "tests/streams/test_stream_cli.py, test_reader_stops_early",
    "streams: the stream does not end whole (the sender killed, stopped, its input failing)":
        "tests/streams/test_stream_cli.py, test_sender_killed, test_sender_stopped, "
        "test_input_fails",
    "streams: `send --text -` of more than 256 KiB to a receiver that cannot take a stream":
        "tests/streams/test_stream_cli.py, TextStreams",
    "streams: a stream offered to `receive` without `--stdout`":
        "tests/streams/test_stream_cli.py, test_without_stdout",
}
