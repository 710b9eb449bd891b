#!/usr/bin/python3
"""The checker of a chaos history (see history.py for its format).

    /usr/bin/python3 test/chaos/check.py HISTORY.jsonl [--ttl SECONDS] [--not-durable]

Prints a report and exits 1 if any property is violated.  The properties,
each over the whole history:

  P1 unique tokens: no two ok grants returned the same token.
  P2 real-time order: a grant that returned before another was asked has
     the smaller token (across keys, crashes and failovers).
  P3 no token never granted: every token in a row's log and every ok write
     carries a token some ok grant returned.
  P4 row logs in order: each row's final log is non-decreasing in token,
     two ok writes one of which returned before the other was asked are in
     that order, and every ok read of the log is a prefix of the final log.
  P5 no acknowledged write lost or doubled: every ok write is in its row's
     log exactly once, no failed write is there, no write is there twice.
  P6 honest stale rejections: every stale rejection (LF001) names a stored
     fence some ok grant returned, above the write's token; or says the
     lease was granted to a newer token, and such a grant was asked for.
  P7 no renewal of a superseded lease: no ok renew or release with token t
     after an ok grant of a larger token on the key returned.
  P8 mutual exclusion while a lease is provably held (see held_intervals).
  P9 no lost update through a claim: every set element added by an ok
     claim-then-read-modify-write is in the final set, no failed one is.
     The same without a claim is the control: counted, never a violation
     (fencing orders writes; it cannot fix a read made before them).
"""

import argparse
import bisect
import re
import sys
from collections import Counter, defaultdict

import history

WRITES = ("write", "rmw", "rmw-nc")
CUT_SESSION = ("kill-client", "terminate-backend", "partition", "crash", "failover")
CUT_ALL = ("crash", "failover")
STORED = re.compile(r"a writer with token (\d+) has written this row since")
SUPERSEDED = re.compile(r"has been granted to a newer token since")
PROPS = [
    ("P1", "tokens of ok grants are unique"),
    ("P2", "tokens follow the real-time order of grants (across crashes and failover)"),
    ("P3", "no write carries a token that was never granted"),
    ("P4", "each row's log is in token order and agrees with real time and with earlier reads"),
    ("P5", "no acknowledged write lost or doubled, no failed write applied"),
    ("P6", "every stale rejection names a newer token that was granted"),
    ("P7", "no renewal or release of a superseded lease"),
    ("P8", "mutual exclusion while a lease is provably held"),
    ("P9", "no lost update through a claim"),
]


class Call:
    __slots__ = ("f", "key", "process", "inv", "done", "type", "v")

    def __init__(self, inv):
        self.f = inv["f"]
        self.key = inv.get("key")
        self.process = inv["process"]
        self.inv = inv
        self.done = None
        self.type = "info"
        self.v = dict(inv.get("value") or {})

    @property
    def t0(self):
        return self.inv["time"]

    @property
    def t1(self):
        return self.done["time"] if self.done else float("inf")

    def desc(self):
        return "%s %s %s key=%s p=%s %s [%d%s]" % (
            self.type, self.f, "", self.key, self.process,
            {k: self.v[k] for k in sorted(self.v) if k not in ("log", "rows")},
            self.inv["index"], ".." + str(self.done["index"]) if self.done else "")


def pair(ops):
    """Match each invoke with its completion: the next op of the same
    process, and for a write the one with the same write id (a write in a
    transaction lease completes at the COMMIT, after later invokes of its
    process); for the nemesis, the next op of the same fault."""
    def ident(op):
        p = op["process"]
        if p == "nemesis":
            return (p, op["f"])
        wid = (op.get("value") or {}).get("wid")
        return (p, wid) if wid is not None else (p,)
    open_ = {}
    calls = []
    for op in ops:
        if op["type"] == "invoke":
            c = Call(op)
            open_[ident(op)] = c
            calls.append(c)
        else:
            c = open_.pop(ident(op), None)
            if c is None:
                continue
            c.done = op
            c.type = op["type"]
            c.v.update(op.get("value") or {})
    return calls


def check(ops, ttl=2.0, durable=True, margin=0.05):
    calls = pair(ops)
    v = defaultdict(list)           # property -> violations
    notes = []
    nem = [c for c in calls if c.process == "nemesis"]
    work = [c for c in calls if c.process != "nemesis"]
    # A holder asking again for a lease it holds gets the same token and a
    # later expiry: that is a renewal, not a grant.
    grants, first = [], {}
    for c in sorted((c for c in work if c.f == "acquire" and c.type == "ok"), key=lambda c: c.t0):
        g0 = first.get(c.v["token"])
        if g0 is not None and g0.key == c.key and g0.process == c.process:
            c.f = "renew"
            continue
        first.setdefault(c.v["token"], c)
        grants.append(c)
    granted = {c.v["token"] for c in grants}
    writes = [c for c in work if c.f in WRITES]
    final = next((c for c in work if c.f == "final-read" and c.type == "ok"), None)
    rows = final.v["rows"] if final else {}

    # P1
    by_token = defaultdict(list)
    for g in grants:
        by_token[g.v["token"]].append(g)
    for t, gs in sorted(by_token.items()):
        if len(gs) > 1:
            v["P1"].append("token %d granted %d times: %s" % (t, len(gs), "; ".join(g.desc() for g in gs)))

    # P2
    done_sorted = sorted(grants, key=lambda g: g.t1)
    best, i = None, 0
    for b in sorted(grants, key=lambda g: g.t0):
        while i < len(done_sorted) and done_sorted[i].t1 < b.t0:
            g = done_sorted[i]
            if best is None or g.v["token"] > best.v["token"]:
                best = g
            i += 1
        if best is not None and b.v["token"] <= best.v["token"]:
            v["P2"].append("grant %d asked after grant %d returned: %s  AFTER  %s"
                           % (b.v["token"], best.v["token"], b.desc(), best.desc()))

    # P3
    for w in writes:
        if w.type == "ok" and w.v["token"] not in granted:
            v["P3"].append("ok write with token %d, never granted: %s" % (w.v["token"], w.desc()))
    for key, row in sorted(rows.items()):
        for tok, wid in row["log"]:
            if tok not in granted:
                v["P3"].append("row %s: log entry (token %d, write %d) with a token never granted"
                               % (key, tok, wid))

    # P4 and P5
    wid_call = {w.v["wid"]: w for w in writes}
    for key, row in sorted(rows.items()):
        log = row["log"]
        for a, b in zip(log, log[1:]):
            if b[0] < a[0]:
                v["P4"].append("row %s: token %d (write %d) logged after token %d (write %d)%s"
                               % (key, b[0], b[1], a[0], a[1],
                                  ": " + wid_call[b[1]].desc() if b[1] in wid_call else ""))
        pos = {}
        counts = Counter(wid for _, wid in log)
        for n, (_, wid) in enumerate(log):
            pos.setdefault(wid, n)
        for wid, n in counts.items():
            if n > 1:
                v["P5"].append("row %s: write %d logged %d times" % (key, wid, n))
        kw = [w for w in writes if w.key == key]
        for w in kw:
            there = w.v["wid"] in counts
            if w.type == "ok" and not there:
                (v["P5"] if durable else notes).append(
                    "row %s: acknowledged write lost: %s" % (key, w.desc()))
            if w.type == "fail" and there:
                v["P5"].append("row %s: failed write applied: %s" % (key, w.desc()))
        oks = sorted((w for w in kw if w.type == "ok" and w.v["wid"] in pos), key=lambda w: w.t1)
        j, top = 0, None
        for b in sorted(oks, key=lambda w: w.t0):
            while j < len(oks) and oks[j].t1 < b.t0:
                if top is None or pos[oks[j].v["wid"]] > pos[top.v["wid"]]:
                    top = oks[j]
                j += 1
            if top is not None and pos[b.v["wid"]] < pos[top.v["wid"]]:
                v["P4"].append("row %s: write %s logged before write %s, which returned before it was asked"
                               % (key, b.desc(), top.desc()))
        failovers = [c.t0 for c in nem if c.f in ("failover", "crash")]
        for r in (c for c in work if c.f == "read" and c.type == "ok" and c.key == key):
            seen = [tuple(e) for e in r.v["log"]]
            if seen == [tuple(e) for e in log[:len(seen)]]:
                continue
            missing = [e for e in seen if e[1] not in counts]
            lost_unacked = missing and all(
                e[1] in wid_call and wid_call[e[1]].type != "ok" for e in missing)
            if lost_unacked and any(t > r.t1 for t in failovers):
                # PostgreSQL shows a commit still waiting for its synchronous
                # standby to other sessions; a failover then loses it.  Its
                # writer was never told it committed.
                notes.append("row %s: a read saw %d unacknowledged writes that a later failover lost: %s"
                             % (key, len(missing), r.desc()))
            elif not durable and missing:
                notes.append("row %s: a read saw writes lost later (synchronous_commit off): %s"
                             % (key, r.desc()))
            else:
                v["P4"].append("row %s: read is not a prefix of the final log: %s" % (key, r.desc()))

    # P6
    grants_by_key = defaultdict(list)
    asked_by_key = defaultdict(list)
    for c in work:
        if c.f == "acquire":
            asked_by_key[c.key].append(c)
            if c.type == "ok":
                grants_by_key[c.key].append(c)
    for w in writes:
        if w.type != "fail" or w.v.get("err") != "LF001":
            continue
        d = w.v.get("detail", "")
        m = STORED.search(d)
        if m:
            x = int(m.group(1))
            if x not in granted or x <= w.v["token"]:
                v["P6"].append("rejection names fence %d (%s): %s"
                               % (x, "never granted" if x not in granted else "not above the token",
                                  w.desc()))
        elif SUPERSEDED.search(d):
            if not any(a.t0 < w.t1 and (a.type != "ok" or a.v["token"] > w.v["token"])
                       for a in asked_by_key[w.key]):
                v["P6"].append("rejection says the lease has a newer token, and no such grant was asked: "
                               + w.desc())
        else:
            v["P6"].append("stale rejection without a known detail: " + w.desc())

    # P7
    for c in work:
        if c.f in ("renew", "release") and c.type == "ok" and c.process != "final":
            for g in grants_by_key[c.key]:
                if g.v["token"] > c.v["token"] and g.t1 < c.t0:
                    v["P7"].append("%s of token %d after grant %d returned: %s  AFTER  %s"
                                   % (c.f, c.v["token"], g.v["token"], c.desc(), g.desc()))
                    break

    # P8
    intervals = held_intervals(work, nem, grants, ttl, margin)
    for key, ivs in sorted(intervals.items()):
        ivs.sort(key=lambda x: x[0])
        cur = None
        for s, e, g in ivs:
            if cur is not None and s < cur[1] and g.v["token"] != cur[2].v["token"]:
                v["P8"].append("key %s held by two at once for %.3f s: %s  WHILE  %s"
                               % (key, (min(e, cur[1]) - s) / 1e9, g.desc(), cur[2].desc()))
            if cur is None or e > cur[1]:
                cur = (s, e, g)

    # P9 and the control
    lost_nc = 0
    for f, col in (("rmw", "items"), ("rmw-nc", "items_nc")):
        for w in (c for c in writes if c.f == f):
            if w.key not in rows:
                continue
            there = w.v["elem"] in rows[w.key][col]
            if f == "rmw":
                if w.type == "ok" and not there:
                    (v["P9"] if durable else notes).append(
                        "claimed read-modify-write lost its addition: " + w.desc())
                if w.type == "fail" and there:
                    v["P9"].append("failed read-modify-write applied: " + w.desc())
            elif w.type == "ok" and not there:
                lost_nc += 1

    counts = {
        "ops": sum(1 for c in work if c.process != "final"),
        "ok_writes": sum(1 for w in writes if w.type == "ok"),
        "stale_rejections": sum(1 for w in writes if w.type == "fail" and w.v.get("err") == "LF001"),
        "forged_rejections": sum(1 for w in writes if w.type == "fail" and w.v.get("err") == "22023"),
        "grants": len(grants),
        "takeovers": takeovers(grants_by_key, work),
        "info_ops": sum(1 for c in work if c.type == "info"),
        "crashes": sum(1 for c in nem if c.f == "crash"),
        "failovers": sum(1 for c in nem if c.f == "failover"),
        "partitions": sum(1 for c in nem if c.f == "partition"),
        "pauses": sum(1 for c in nem if c.f.startswith("pause")),
        "kills": sum(1 for c in nem if c.f in ("kill-client", "terminate-backend")),
        "clock_moves": sum(1 for c in nem if c.f == "clock" and c.v.get("offsets")),
        "held_intervals": sum(len(x) for x in intervals.values()),
        "claimed_rmw_ok": sum(1 for w in writes if w.f == "rmw" and w.type == "ok"),
        "unclaimed_rmw_ok": sum(1 for w in writes if w.f == "rmw-nc" and w.type == "ok"),
        "unclaimed_rmw_lost": lost_nc,
    }
    for f in ("read", "renew", "release"):
        counts["ok_" + f + "s"] = sum(1 for c in work if c.f == f and c.type == "ok")
    by_f = defaultdict(Counter)
    for c in work:
        if c.process != "final":
            by_f[c.f][c.type] += 1
    return {"violations": [(p, m) for p, _ in PROPS for m in v[p]], "by_prop": dict(v),
            "notes": notes, "counts": counts, "by_f": {f: dict(t) for f, t in by_f.items()},
            "faults": dict(Counter(c.f for c in nem if c.f != "clock" or c.v.get("offsets")))}


def held_intervals(work, nem, grants, ttl, margin):
    """When each ok grant is provably held, in monotonic nanoseconds: from
    its ok until the earliest of its release's invoke; its grant's or last
    ok renewal's invoke plus the TTL (renewals asked while it was still
    provably held); any crash or failover; any window in which the lease
    clock was moved (or the start of the grant, if it fell in one); and,
    for session and transaction scope, any kill, termination or partition,
    and its process's next operation that was lost (info); for transaction
    scope also its transaction's end or first failed statement."""
    by_proc = defaultdict(list)
    for c in work:
        by_proc[c.process].append(c)
    renews = defaultdict(list)
    releases = defaultdict(list)
    for c in work:
        if c.f == "renew" and c.type == "ok":
            renews[(c.key, c.v["token"])].append(c)
        if c.f == "release":
            releases[(c.key, c.v["token"])].append(c)
    windows = [(c.f, c.t0, c.t1) for c in nem]
    out = defaultdict(list)
    for g in grants:
        if g.process == "final":
            continue
        tok, key, scope = g.v["token"], g.key, g.v.get("scope")
        start = g.t1
        life = int((g.v.get("ttl", ttl) - margin) * 1e9)
        end = g.t0 + life
        for r in sorted(renews[(key, tok)], key=lambda c: c.t0):
            if r.t0 < end:
                end = max(end, r.t0 + life)
        for r in releases[(key, tok)]:
            if r.t0 >= start:
                end = min(end, r.t0)
        for f, w0, w1 in windows:
            cuts = f == "clock" or f in CUT_ALL or (scope != "detached" and f in CUT_SESSION)
            if cuts and w0 < end and w1 > start:
                end = min(end, max(start, w0))
        if scope != "detached":
            for c in by_proc[g.process]:
                if c.t0 <= g.t1:
                    continue
                if c.type == "info" or (scope == "xact" and (c.f in ("commit", "rollback") or c.type == "fail")):
                    end = min(end, c.t0)
                    break
        if end > start:
            out[key].append((start, end, g))
    return out


def takeovers(grants_by_key, work):
    """Grants of a key whose previous holder never released it (its lease
    expired, or its session or the server ended)."""
    rel = {(c.key, c.v["token"]) for c in work if c.f == "release" and c.type == "ok"}
    n = 0
    for key, gs in grants_by_key.items():
        gs = sorted(gs, key=lambda g: g.v["token"])
        for a, b in zip(gs, gs[1:]):
            if (key, a.v["token"]) not in rel and a.process != b.process and b.process != "final":
                n += 1
    return n


def render(result):
    lines = ["fence chaos checker"]
    by = result["by_prop"]
    for p, what in PROPS:
        vs = by.get(p, [])
        lines.append("  %s %-80s %s" % (p, what, "ok" if not vs else "VIOLATED (%d)" % len(vs)))
        for m in vs[:10]:
            lines.append("       " + m)
        if len(vs) > 10:
            lines.append("       ... and %d more" % (len(vs) - 10))
    for n in result["notes"][:20]:
        lines.append("  note: " + n)
    c = result["counts"]
    lines.append("  counts: " + ", ".join("%s %d" % kv for kv in c.items()))
    for f, t in sorted(result["by_f"].items()):
        lines.append("  %-10s %s" % (f, ", ".join("%s %d" % (k, t.get(k, 0)) for k in ("ok", "fail", "info"))))
    lines.append("  faults: " + ", ".join("%s %d" % kv for kv in sorted(result["faults"].items())))
    lines.append("  violations: %s" % (len(result["violations"]) or "none"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("history")
    ap.add_argument("--ttl", type=float, default=2.0)
    ap.add_argument("--not-durable", action="store_true")
    a = ap.parse_args()
    r = check(history.load(a.history), ttl=a.ttl, durable=not a.not_durable)
    sys.stdout.write(render(r))
    sys.exit(1 if r["violations"] else 0)


if __name__ == "__main__":
    main()
