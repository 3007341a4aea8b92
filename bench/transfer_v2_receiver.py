"""The transfer-v2 receiver's own CPU, in one process, without network,
Dilation or the CLI (docs/performance.md, "The default path against the
reference"): an OfferReceiver with the real sink (resumable, as two of our CLIs
use it) is fed the records a sender makes, from memory, and the CPU of feeding
them is timed (``time.process_time``, the best of ``--rounds``). What it
measures is the receiving machine, the record parsing, the sink and its writers
(BLAKE2b and the file writes included); the best of several rounds in one
process moves less with other sessions' load than a pair of CLIs does, so small
changes show.

  .venv/bin/python bench/transfer_v2_receiver.py [--src NAME=PATH ...]
        [--files 2000] [--file-kib 100] [--mib 256] [--rounds 5]
        [--workdir /dev/shm]

Each implementation (``ours``: this tree; ``--src NAME=PATH``: the
sources in PATH, e.g. `git archive BASE src` unpacked, PATH its src/)
runs in its own child process, and the children take turns, round by
round. One line per implementation and scenario:

  receiver impl=ours scenario=dir records=8001 cpu_s=... us_per_file=...
  receiver impl=ours scenario=file records=4097 cpu_s=... s_per_gib=...

``dir`` is a folder of ``--files`` files of ``--file-kib`` KiB (data
records as our sender cuts them: its DATA_CHUNK when the tree has one,
else 65535 bytes), ``file`` one file of ``--mib`` MiB.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
sys.path.insert(0, HERE)
from transfer_v2_bench import src_folders  # noqa: E402

CHILD = r"""
import json, os, shutil, sys, time
from zope.interface import implementer
from wormhole.transfer_v2 import _messages as M, _sink
from wormhole.transfer_v2._interfaces import IOfferChannel, IOfferReceiverDelegate
from wormhole.transfer_v2._receiving import OfferReceiver, Received
try:
    from wormhole.transfer_v2._source import DATA_CHUNK
except ImportError:
    DATA_CHUNK = M.MAX_DATA_PAYLOAD
args = json.loads(sys.argv[1])


@implementer(IOfferChannel)
class Channel:
    def write(self, record):
        pass

    def close(self):
        pass


@implementer(IOfferReceiverDelegate)
class Side:
    def __init__(self):
        self.offer = self.result = None

    def ask(self, offer):
        self.offer = offer

    def finished(self, result):
        self.result = result

    def accepted(self): pass
    def progress(self, nbytes): pass
    def file_started(self, path, size, offset): pass
    def resumed(self, nbytes): pass


def records_of(scenario):
    block = os.urandom(1 << 20)
    if scenario == "dir":
        sizes = [args["file_kib"] * 1024] * args["files"]
        paths = [[f"part{i % 20:02d}", f"file{i:05d}.bin"] for i in range(len(sizes))]
        offer = M.DirectoryOffer("tree", sum(sizes), paths)
    else:
        sizes = [args["mib"] << 20]
        paths = [["big.bin"]]
        offer = M.FileOffer("big.bin", 1700000000, sizes[0])
    out = [M.encode_record(offer)]
    for i, (size, path) in enumerate(zip(sizes, paths)):
        if scenario == "dir":
            out.append(M.encode_record(M.FileOffer(path[-1], 1700000000, size)))
        h = M.new_hash()
        sent = 0
        while sent < size:
            n = min(DATA_CHUNK, size - sent)
            start = (i * 4099 + sent) % (len(block) - n)
            chunk = block[start:start + n]
            h.update(chunk)
            out.append(b"\x05" + chunk)
            sent += n
        out.append(M.encode_record(M.FileAcknowledge(size, h.digest())))
    return out


def one_round(records, dest):
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    r, side = OfferReceiver(), Side()
    r.wire(Channel(), side)
    t0 = time.process_time()
    r.got_record(records[0])
    r.accept(_sink.sink_for(side.offer, dest, resumable=True))
    for record in records[1:]:
        r.got_record(record)
    r.lost()  # the sender closes
    spent = time.process_time() - t0
    assert isinstance(side.result, Received), side.result
    shutil.rmtree(dest)
    return spent


records = records_of(args["scenario"])
dest = os.path.join(args["workdir"], f"xferv2recv-{os.getpid()}")
print(json.dumps({"records": len(records), "cpu_s": one_round(records, dest)}))
"""


def run_child(src, scenario, args):
    env = dict(os.environ, PYTHONPATH=src)
    spec = json.dumps({"scenario": scenario, "files": args.files, "file_kib": args.file_kib,
                       "mib": args.mib, "workdir": args.workdir})
    out = subprocess.run([sys.executable, "-c", CHILD, spec], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", action="append", default=[], metavar="NAME=PATH")
    for name, default in (("--files", 2000), ("--file-kib", 100), ("--mib", 256),
                          ("--rounds", 5)):
        ap.add_argument(name, type=int, default=default)
    ap.add_argument("--scenarios", default="dir,file")
    ap.add_argument("--workdir", default="/dev/shm")
    args = ap.parse_args()
    impls = {"ours": SRC, **src_folders(ap, args.src)}
    best = {}
    for _ in range(args.rounds):
        for scenario in args.scenarios.split(","):
            for name, src in impls.items():
                r = run_child(src, scenario, args)
                key = (name, scenario)
                if key not in best or r["cpu_s"] < best[key]["cpu_s"]:
                    best[key] = r
    for (name, scenario), r in sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if scenario == "dir":
            per = f"us_per_file={r['cpu_s'] / args.files * 1e6:.1f}"
        else:
            per = f"s_per_gib={r['cpu_s'] * 1024 / args.mib:.3f}"
        print(f"receiver impl={name} scenario={scenario} records={r['records']} "
              f"cpu_s={r['cpu_s']:.3f} {per} (best of {args.rounds})", flush=True)


if __name__ == "__main__":
    main()
