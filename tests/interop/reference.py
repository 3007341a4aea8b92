"""Where the reference implementation lives and how to run its tools
(and ours) as subprocesses.

The reference (magic-wormhole 0.24, mailbox server 0.8, transit relay 0.5)
is a peer we test against, never a library we import: it lives in its own
venv (``$WORMHOLE_REFERENCE_VENV``, default ``<repo>/.venv-ref``).
"""
import json
import os
import sys

from .._processes import REF_VENV_ENV, REPO_ROOT, reference_bin  # noqa: F401 -- re-exported

REF_PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "ref_peer.py")
# the appid of the file-transfer tool (Mailbox server protocol, "Application IDs")
CLI_APPID = "lothar.com/wormhole/text-or-file-xfer"
# a port nothing listens on: the CLIs must never reach the public transit
# relay, and text mode has no business connecting to any relay at all
NO_TRANSIT = "tcp:127.0.0.1:1"

def reference_venv():
    """The reference venv's root, or raise AssertionError telling what to do.

    A missing reference is a failure, never a skip: a skipped interop suite
    would hide exactly the regressions it exists to catch.
    """
    for tool in ("python", "wormhole", "twistd"):
        path = reference_bin(tool)
    return os.path.dirname(os.path.dirname(path))


# the reference's tools, found (and checked) the same way by every package
ref_bin = reference_bin


def ref_cli_argv(relay_url, *args, transit=NO_TRANSIT):
    """argv for the reference `wormhole` CLI against ``relay_url`` (and the
    Transit relay endpoint ``transit``)."""
    return [ref_bin("wormhole"), "--relay-url", relay_url,
            "--transit-helper", transit] + list(args)


def our_cli_argv(relay_url, *args):
    """argv for our `wormhole` CLI, run by the python running the tests:
    ``python -m wormhole.cli`` when the package has a ``__main__``, else
    the console script installed next to that python."""
    import wormhole  # ours: this runs in our test process
    cli_dir = os.path.join(os.path.dirname(wormhole.__file__), "cli")
    if os.path.exists(os.path.join(cli_dir, "__main__.py")):
        prog = [sys.executable, "-m", "wormhole.cli"]
    else:
        prog = [os.path.join(os.path.dirname(sys.executable), "wormhole")]
    return prog + ["--relay-url", relay_url,
                   "--transit-helper", NO_TRANSIT] + list(args)


def our_classic_cli_argv(relay_url, command, *args):
    """``our_cli_argv`` for ``send``/``receive`` with --classic: what the
    classic protocol does between two of ours (by default they would use
    transfer-v2, docs/transfer-v2.md "The CLI")."""
    return our_cli_argv(relay_url, command, "--classic", *args)


def ref_peer_argv(script):
    """argv for tests/interop/ref_peer.py under the reference python."""
    return [ref_bin("python"), REF_PEER, json.dumps(script)]


def cli_text_stdout(text):
    """What `wormhole receive` prints on stdout for a received text.

    Settled against the reference 0.24 (docs/interop.md, "Received text on
    the terminal"): each non-printable character (str.isprintable() false,
    e.g. newline, tab, ESC, U+2028) and the backslash itself is written as
    its Python escape, so a peer cannot drive the receiver's terminal; the
    text is followed by one newline.
    """
    return ("".join(repr(c)[1:-1] for c in text) + "\n").encode("utf-8")
