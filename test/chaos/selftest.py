#!/usr/bin/python3
"""The checker's self-test: every hand-made history in fixtures/ named
pN_... must violate property PN and no other; good.jsonl none.  Prints one
"ok"/"not ok" line per fixture and exits 1 if any is not caught."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check  # noqa: E402
import history  # noqa: E402


def main():
    d = os.path.join(HERE, "fixtures")
    bad = 0
    props = {p for p, _ in check.PROPS}
    for name in sorted(os.listdir(d)):
        if not name.endswith(".jsonl"):
            continue
        want = set() if name == "good.jsonl" else {name.split("_")[0].upper()}
        r = check.check(history.load(os.path.join(d, name)))
        got = {p for p, _ in r["violations"]}
        ok = got == want
        bad += not ok
        print("%s %s: expected %s, checker found %s" % ("ok" if ok else "not ok", name,
              ", ".join(sorted(want)) or "none", ", ".join(sorted(got)) or "none"))
        props -= want
    if props:
        print("not ok: no fixture for " + ", ".join(sorted(props)))
        bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
