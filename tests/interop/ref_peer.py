"""A scripted wormhole peer, run by the REFERENCE venv's python.

This file is never imported by our test process: the interop harness runs
it as ``$WORMHOLE_REFERENCE_VENV/bin/python ref_peer.py SCRIPT_JSON`` so that
the other end of a library-level test is the reference implementation
(magic-wormhole 0.24), driven only through its documented Deferred-mode API
(Client API: create, set_code/allocate_code, get_code,
get_verifier, get_versions, send_message, get_message, close).

SCRIPT_JSON is one JSON object:

    {"relay_url": "ws://127.0.0.1:PORT/v1",
     "appid": "example.com/interop",
     "code": "7-purple-sausage"       (or "allocate": 2 for allocate_code),
     "versions": {...}                (optional app_versions to offer),
     "create_kwargs": {...}           (optional, e.g. {"dilation": true}),
     "steps": [[op, arg], ...]}

ops: ["send", "<text>"] sends the UTF-8 bytes of the text,
     ["send_json", obj] sends the UTF-8 JSON encoding of obj (what the
         file-transfer app does, File-transfer protocol),
     ["recv", n] waits for n messages,
     ["verifier", null], ["versions", null], ["code", null],
     ["dilate", null] (calls w.dilate(); needs create_kwargs dilation),
     ["sleep", seconds] (keeps the peer alive for an observer).

Every result is one JSON line on stdout (flushed at once), so the harness
can follow the exchange while it runs:

    {"event": "code", "code": ...}
    {"event": "verifier", "hex": ...}
    {"event": "versions", "versions": {...}}
    {"event": "message", "text": ..., "hex": ...}
    {"event": "sent", "index": i}
    {"event": "error", "op": ..., "type": ClassName, "message": ...}
    {"event": "closed", "result": ...} or
    {"event": "close_error", "type": ClassName, "message": ...}

The script always ends with close(), also after an error, so the peer's
mood reaches the server (Mailbox server protocol, "Mailboxes": moods).
"""
import json
import sys

from twisted.internet import defer, task


def emit(**event):
    sys.stdout.write(json.dumps(event, sort_keys=True) + "\n")
    sys.stdout.flush()


def describe(failure):
    return {"type": type(failure.value).__name__,
            "message": str(failure.value)}


@defer.inlineCallbacks
def run(reactor, script):
    import wormhole  # the reference package: this runs in its venv only

    kwargs = dict(script.get("create_kwargs", {}))
    if script.get("versions") is not None:
        kwargs["versions"] = script["versions"]
    w = wormhole.create(script["appid"], script["relay_url"], reactor,
                        **kwargs)
    if "code" in script:
        w.set_code(script["code"])
    else:
        w.allocate_code(script.get("allocate", 2))
    sent = 0
    try:
        for op, arg in script["steps"]:
            if op == "code":
                code = yield w.get_code()
                emit(event="code", code=code)
            elif op == "verifier":
                verifier = yield w.get_verifier()
                emit(event="verifier", hex=verifier.hex())
            elif op == "versions":
                versions = yield w.get_versions()
                emit(event="versions", versions=versions)
            elif op == "send":
                w.send_message(arg.encode("utf-8"))
                emit(event="sent", index=sent)
                sent += 1
            elif op == "send_json":
                w.send_message(json.dumps(arg).encode("utf-8"))
                emit(event="sent", index=sent)
                sent += 1
            elif op == "recv":
                for _ in range(arg):
                    body = yield w.get_message()
                    try:
                        text = body.decode("utf-8")
                    except UnicodeDecodeError:
                        text = None
                    emit(event="message", text=text, hex=body.hex())
            elif op == "dilate":
                # the Dilation API (Client API, "Dilation"): only observed, never used
                dilated = w.dilate()
                emit(event="dilated", type=type(dilated).__name__)
            elif op == "sleep":
                yield task.deferLater(reactor, arg, lambda: None)
                emit(event="slept")
            else:
                raise ValueError("unknown op %r" % (op,))
    except Exception:
        emit(event="error", op=op, **describe(_failure()))
    try:
        result = yield w.close()
        emit(event="closed", result=repr(result))
    except Exception:
        emit(event="close_error", **describe(_failure()))


def _failure():
    from twisted.python.failure import Failure
    return Failure()


def main(reactor, script_json):
    return run(reactor, json.loads(script_json))


if __name__ == "__main__":
    task.react(main, sys.argv[1:])
