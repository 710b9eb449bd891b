"""The history of a chaos run: one JSON object per line.

Each line is an operation in the shape Jepsen's histories have once
converted to JSON: "type" (invoke, ok, fail, info), "f", "value",
"process", "time" (nanoseconds of CLOCK_MONOTONIC, one clock for every
process of the machine) and "index" (its place in the merged history).
"key" names the lease and the row an operation is about.  Every process
writes a file of its own as it goes (flushed line by line, so a SIGKILL
loses nothing that was written); merge() joins them in time order and
numbers the lines.
"""

import json
import os
import time


def now_ns():
    return time.monotonic_ns()


class Recorder:
    """Appends operations of one process to its own file."""

    def __init__(self, path):
        self.f = open(path, "a", buffering=1)

    def record(self, type_, f, process, key=None, value=None, t=None):
        op = {"type": type_, "f": f, "process": process,
              "time": now_ns() if t is None else t}
        if key is not None:
            op["key"] = key
        op["value"] = value if value is not None else {}
        self.f.write(json.dumps(op, sort_keys=True) + "\n")
        return op

    def close(self):
        self.f.close()


def read_lines(path):
    ops = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                ops.append(json.loads(line))
            except ValueError:
                # The last line of a process killed while writing it.
                pass
    return ops


def merge(paths, out):
    """Merge the per-process files into one history, ordered by time."""
    ops = []
    for p in paths:
        ops.extend(read_lines(p))
    ops.sort(key=lambda o: o["time"])
    with open(out, "w") as f:
        for i, op in enumerate(ops):
            op["index"] = i
            f.write(json.dumps(op, sort_keys=True) + "\n")
    return ops


def load(path):
    ops = read_lines(path)
    if any("index" not in o for o in ops):
        ops.sort(key=lambda o: o["time"])
        for i, op in enumerate(ops):
            op["index"] = i
    return ops


def files_in(dirname):
    return sorted(os.path.join(dirname, n) for n in os.listdir(dirname)
                  if n.endswith(".part.jsonl"))
