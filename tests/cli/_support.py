"""The reference CLI beside ours (test_interop.py, and transfer-v2's CLI
tests): where it is, its argv, and what both sides are given."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NO_TRANSIT = "tcp:127.0.0.1:1"  # nothing listens there: no public relay
TEXT = "it's \"quoted\"\ttab\nline \x1b[0m ✓"


def ref_wormhole():
    venv = os.environ.get("WORMHOLE_REFERENCE_VENV", os.path.join(REPO, ".venv-ref"))
    path = os.path.join(venv, "bin", "wormhole")
    if not os.path.exists(path):
        raise AssertionError(f"the reference CLI is not at {path}: run ./dev test once "
                             "(it installs the reference into .venv-ref)")
    return path


def ref(url, *args):
    argv = [ref_wormhole(), "--relay-url", url, "--transit-helper", NO_TRANSIT]
    if args and args[0] == "send":
        # no QR code on stderr, and no listening socket for Transit
        args = ("send", "--no-qr", "--no-listen") + args[1:]
    return argv + list(args)
