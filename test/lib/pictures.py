#!/usr/bin/env python3
"""Draw the incident timelines that make demo replays.

    pictures.py --out DIR RECORD.json...

Each RECORD is what one replay recorded (timeline.record() in
test/lib/timeline.sql): its steps with their times, workers, kinds, results
and the tokens the workers carried, the locks and leases held and the
circuit breakers' states after each step, the workers' pauses and waits, and
the checks the replay made.  For each record this
writes DIR/<name>.svg: a lane per worker, the timeline's own clock on the time
axis, one panel per design ("today" above "with fence"), the lock, lease or
permit each worker holds as a bar (solid while it holds it, hatched while it
only believes it does, with an arrowhead if it still holds it when the
timeline ends; a detached lease, such as a breaker's probe, on the worker
that was granted it), pauses and waits for a call (in every design, or in
the one the record names), each write or effect as a mark with its outcome
and token, labelled in rows under its lane (place_labels(): no label over
another, nor a leader line through one; every label inside the picture),
and, above the lanes of a design that has circuit breakers, each breaker's
state over time, as the replay read it from fence_breakers.  The legend
explains what the picture draws, and nothing else.  Then
DIR/index.html shows them all with their lessons: the incidents of
doc/incidents.md first, then the timelines that illustrate another page (the
record's "doc").

The output depends on the records only (no clock, no randomness, fixed number
formatting), so a second run over the same replay gives identical files; the
docs suite compares them with the copies in doc/img/.  Python 3 standard
library only.
"""

import argparse
import html
import json
import os
import re
import sys

WIDTH = 880
LEFT = 96           # lane names
RIGHT_PAD = 14
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
FS = 11             # label font size
ROW = 14            # height of a label row
GAP = 10            # least space between two labels of a row

# Advance widths of DejaVu Sans (regular, and bold), in thousandths of an em,
# of the characters from " " to "~", as Chromium measures them; the italic
# has the regular's widths.  text_width() adds a margin for the fonts after
# it in FONT (Verdana runs a few percent wider) and counts any other
# character as a full em.
GLYPHS = {
    False: [int(w) for w in """
        318 401 460 838 636 950 780 275 390 390 500 838 318 361 318 337 636 636 636 636
        636 636 636 636 636 636 337 337 838 838 838 531 1000 684 686 698 770 632 575 775
        752 295 295 656 557 863 748 787 603 787 695 635 611 732 684 989 685 611 685 390
        337 390 838 500 500 613 635 550 635 615 352 635 634 278 278 579 278 974 634 612
        635 635 411 521 392 634 592 818 592 592 525 636 337 636 838""".split()],
    True: [int(w) for w in """
        348 456 521 838 696 1002 872 306 457 457 523 838 380 415 380 365 696 696 696 696
        696 696 696 696 696 696 400 400 838 838 838 580 1000 774 762 734 830 683 683 821
        837 372 372 775 637 995 837 850 733 850 770 720 682 812 774 1103 771 724 725 457
        365 457 838 500 500 675 716 593 716 678 435 716 712 343 343 665 343 1042 712 687
        716 716 493 595 478 712 652 924 645 652 582 712 365 712 838""".split()],
}
WIDTH_MARGIN = 1.08

GREEN = "#1a7f37"
RED = "#cf222e"
GREY = "#6e7781"
INK = "#1f2328"
BLUE = "#0969da"
AMBER = "#9a6700"
# Colours of the Okabe-Ito palette, told apart with any colour vision: a
# worker's wait for a timeout, and a breaker's states.
WAIT = "#cc79a7"
BREAKER_STATE = {
    "closed": ("#009e73", "closed"),
    "open": ("#d55e00", "open"),
    "half_open": ("#f0e442", "half_open"),
}

VARIANT_TITLE = {
    "today": "Today",
    "fenced": "With fence",
    "strict": "With fence, strict trigger",
}

PANEL_NOTE = {
    "redis": "a Redis lock (SET NX PX, DEL, INCR), replayed by a model in SQL",
    "advisory": "PostgreSQL's advisory lock",
    "fenced": "fence's lease, and the fence trigger on the table",
    "strict": "fence's lease, and the trigger with strict => true (the lease must be live)",
    "alone": "no shared state: each worker finds out for itself",
    "breaker": "fence's circuit breaker, shared by all workers; the one probe holds a lease",
    "bulkhead": "a bulkhead: fence's lease with %d permits, so at most %d holders at once",
    "nocap": "no shared state: nothing caps how many workers call at once",
}


def secs(hms):
    h, m, s = hms.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def hms(t):
    t = int(round(t))
    return "%02d:%02d:%02d" % (t // 3600, t // 60 % 60, t % 60)


def num(x):
    """Fixed formatting of a coordinate: one decimal, no "-0.0"."""
    s = "%.1f" % x
    return "0.0" if s == "-0.0" else s


def text_width(s, size=FS, bold=False):
    table = GLYPHS[bool(bold)]
    em = sum(table[ord(c) - 32] if 32 <= ord(c) < 127 else 1000 for c in s) / 1000
    return em * size * WIDTH_MARGIN


def parts_width(parts, size=FS):
    """The width of a label made of (text, fill, weight, style) parts."""
    return sum(text_width(p[0], size, p[2] == "bold") for p in parts)


def esc(s):
    return html.escape(s, quote=True)


def wrap(text, width_px, size):
    words = text.split()
    lines, line = [], ""
    for w in words:
        cand = w if not line else line + " " + w
        if line and text_width(cand, size) > width_px:
            lines.append(line)
            line = w
        else:
            line = cand
    if line:
        lines.append(line)
    return lines


def short_action(action):
    a = re.sub(r"\s*\([^)]*\)", "", action).strip()
    return a


def token_of(run):
    tok = run.get("token")
    if tok is None:
        return None
    if tok == "NULL" or tok == "":
        return "no token"
    if tok.startswith("ERROR"):
        m = re.search(r"token (\d+)", run.get("result") or "")
        return "token " + m.group(1) if m else None
    return "token " + tok


def sqlstate(result):
    m = re.match(r"ERROR ([0-9A-Z]{5})", result or "")
    return m.group(1) if m else None


def classify(step, run, victims=()):
    """A mark for one step, or None: (shape, colour, label parts)."""
    kind = run["kind"]
    result = run.get("result") or ""
    act = short_action(step["action"])
    code = sqlstate(result)
    tok = token_of(run)
    if kind == "write":
        if code:
            return ("rejected", RED, act, "rejected, %s" % code, tok)
        if re.match(r"^(UPDATE|DELETE) 0$|^INSERT 0 0$", result):
            return ("skipped", GREY, act, "0 rows: skipped", tok)
        return ("accepted", GREEN, act, "accepted", tok)
    if kind == "effect":
        if code:
            return ("rejected", RED, act, "stopped, %s" % code, None)
        if result.startswith("duplicate key"):
            return ("skipped", GREY, act, "provider drops the duplicate", None)
        return ("effect", GREEN, act, result, None)
    if kind == "acquire":
        if result in ("NULL", "f", "") or code:
            return ("refused", GREY, act, "refused" + (", " + code if code else ""), None)
        return None                 # the bar shows it
    if kind == "renew":
        if result == "t":
            return None             # the bar shows it
        if code:
            return ("rejected", RED, act, code, None)
        return ("refused", GREY, act, "false: not its live lease", None)
    if kind == "release":
        if code:
            return ("rejected", RED, act, code, None)
        if result == "f":
            return ("refused", GREY, act, "false: not its lease", None)
        if result == "1":
            if victims:
                return ("release", AMBER, act, "DEL deletes %s's lock" % victims[0], None)
            return ("release", AMBER, act, "DEL: key deleted", None)
        if result == "0":
            return ("refused", GREY, act, "DEL: no key", None)
        return ("release", AMBER, act, "released", None)
    if kind == "terminate":
        return ("release", AMBER, act, "done" if result == "t" else result, None)
    if kind == "check":
        if code:
            return ("rejected", RED, act, "fails, %s" % code, None)
        return ("tick", BLUE, act, "lease held", None)
    if kind == "token":
        return ("tick", BLUE, act, "token " + result, None)
    if kind == "transaction":
        if step["action"].startswith("COMMIT") or result == "COMMIT":
            if result == "ROLLBACK":
                return ("rejected", RED, "COMMIT", "rolled back", None)
            return ("tick", INK, "COMMIT", None, None)
        return None
    if kind == "read":
        if step["worker"] in ("observer", "setup"):
            return None
        return ("tick", GREY, act, "'%s'" % result if result not in ("ok",) else None, None)
    return None


def nice_step(span):
    for s in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600):
        if span / s <= 8:
            return s
    return 7200


class Svg:
    def __init__(self):
        self.parts = []
        self.used = set()               # what the legend must explain

    def add(self, s):
        self.parts.append(s)

    def text(self, x, y, s, size=FS, fill=INK, anchor="start", weight=None, style=None):
        attrs = ['x="%s"' % num(x), 'y="%s"' % num(y), 'font-size="%d"' % size,
                 'fill="%s"' % fill]
        if anchor != "start":
            attrs.append('text-anchor="%s"' % anchor)
        if weight:
            attrs.append('font-weight="%s"' % weight)
        if style:
            attrs.append('font-style="%s"' % style)
        self.add("<text %s>%s</text>" % (" ".join(attrs), esc(s)))


def lanes_of(rec):
    order = []
    for st in rec["steps"]:
        w = st["worker"]
        if w in ("observer", "setup") or w in order:
            continue
        order.append(w)
    return order


def breakers_of(rec, variant):
    names = []
    for b in rec.get("breakers", []):
        if b["variant"] == variant and b["breaker"] not in names:
            names.append(b["breaker"])
    return names


def segments(rec, variant, tmax):
    """Held intervals per worker: (worker, lock, token, start, end, how, believed_end).

    A lease held by an owner that is no worker (a detached lease, such as a
    breaker's probe lease, owned by "breaker probe") is drawn on the worker
    whose step granted it: the one whose step it first appeared after.  Its
    owner is kept in the interval ("owner").
    """
    steps = [s for s in rec["steps"] if variant in s["runs"]]
    lanes = lanes_of(rec)
    worker_of = {s["seq"]: s["worker"] for s in steps}
    granted_by = {}
    by_seq = {}
    for h in sorted((h for h in rec["holds"] if h["variant"] == variant), key=lambda h: h["seq"]):
        if h["worker"] not in lanes:
            owner = h["worker"]
            who = granted_by.setdefault((owner, h["lock"], h["token"]), worker_of[h["seq"]])
            h = dict(h, worker=who, owner=owner)
        by_seq.setdefault(h["seq"], []).append(h)
    last_step = {}
    for s in steps:
        last_step[s["worker"]] = secs(s["at"])
    open_ = {}
    done = []

    def close(key, end, how, by=None):
        seg = open_.pop(key)
        done.append(dict(seg, end=end, how=how, by=by))

    for s in steps:
        t = secs(s["at"])
        cur = {}
        for h in by_seq.get(s["seq"], []):
            cur[(h["worker"], h["lock"])] = h
        for key in list(open_):
            seg = open_[key]
            h = cur.get(key)
            exp = seg["expires"]
            if h is not None and h["token"] == seg["token"] and (exp is None or exp > t):
                seg["expires"] = secs(h["expires_at"]) if h["expires_at"] else None
                continue
            if exp is not None and exp <= t:
                close(key, exp, "expired")
            elif s["worker"] == key[0]:
                close(key, t, "released")
            else:
                close(key, t, "lost", (s["worker"], s["runs"][variant]["kind"]))
        for key, h in cur.items():
            # An entry that has already run out (a lease or Redis key not yet
            # reclaimed) is not held.
            if key not in open_ and not (h["expires_at"] and secs(h["expires_at"]) <= t):
                open_[key] = dict(worker=key[0], lock=key[1], token=h["token"], start=t,
                                  expires=secs(h["expires_at"]) if h["expires_at"] else None,
                                  permits=h.get("permits"), owner=h.get("owner"))
    for key in list(open_):
        exp = open_[key]["expires"]
        if exp is not None and exp <= tmax:
            close(key, exp, "expired")
        else:
            close(key, None, "held")
    for seg in done:
        seg["believed"] = None
        if seg["how"] in ("expired", "lost"):
            last = last_step.get(seg["worker"])
            if last is not None and last > seg["end"]:
                seg["believed"] = last
            elif seg["how"] == "lost" and seg["by"] and seg["by"][1] == "release":
                seg["believed"] = None if last is None else tmax     # still working
    return done


def lock_label(lock, token, variant, permits=None, owner=None):
    if lock.startswith("advisory lock"):
        return lock
    if owner is not None and token is not None:
        # A detached lease the worker was granted: its key says what it is.
        return "lease %s, token %d" % (lock, token)
    if token is not None:
        return ("permit" if permits is not None else "lease") + ", token %d" % token
    return lock if variant == "today" else "lease " + lock


def permits_of(rec, variant=None):
    """The number of permits of the leases with permits held, or None."""
    for h in rec["holds"]:
        if (variant is None or h["variant"] == variant) and h.get("permits") is not None:
            return h["permits"]
    return None


def panel_kind(rec, variant):
    if variant != "today":
        if any(h["variant"] == variant and h["lock"].startswith("breaker:")
               for h in rec["holds"]):
            return "breaker"
        if permits_of(rec, variant) is not None:
            return "bulkhead"
        return variant if variant in PANEL_NOTE else "fenced"
    if not any(h["variant"] == "today" for h in rec["holds"]):
        return "nocap" if permits_of(rec) is not None else "alone"
    for h in rec["holds"]:
        if h["variant"] == "today" and h["lock"].startswith("advisory lock"):
            return "advisory"
    return "redis"


def draw(rec):
    variants = rec["variants"]
    lanes = lanes_of(rec)
    times = [secs(s["at"]) for s in rec["steps"]]
    for p in rec["pauses"]:
        times += [secs(p["from"]), secs(p["to"])]
    t0, tmax = min(times), max(times)
    span = max(tmax - t0, 1)
    step = nice_step(span)
    t0 = t0 - (t0 % step)
    t1 = tmax + span * 0.06
    x0, x1 = LEFT + 6, WIDTH - RIGHT_PAD - 4

    def X(t):
        return x0 + (t - t0) / (t1 - t0) * (x1 - x0)

    svg = Svg()
    y = 0
    # Title and what happened.
    y += 26
    svg.text(12, y, rec["title"], size=17, weight="bold")
    y += 8
    for line in wrap(rec["intro"], WIDTH - 24, 12):
        y += 16
        svg.text(12, y, line, size=12, fill=INK)
    y += 14

    checks = {"today": [], "with fence": []}
    for c in rec["checks"]:
        checks[c["side"]].append(c)
    fence_variants = [v for v in variants if v != "today"]

    for variant in variants:
        pk = panel_kind(rec, variant)
        # Panel header.
        y += 10
        top = y
        svg.text(12, y + 14, VARIANT_TITLE.get(variant, variant), size=14, weight="bold",
                 fill=INK if variant == "today" else BLUE)
        # Bold 14 px DejaVu Sans runs narrower per glyph than the label estimate.
        note = PANEL_NOTE[pk]
        if pk == "bulkhead":
            note = note % (permits_of(rec, variant), permits_of(rec, variant))
        svg.text(12 + len(VARIANT_TITLE.get(variant, variant)) * 14 * 0.56 + 10, y + 14,
                 note, size=11, fill=GREY)
        y += 26
        lanes_at = len(svg.parts)
        # The circuit breakers of this design first: their state is what the
        # workers' steps below ask and change.
        for name in breakers_of(rec, variant):
            y = draw_breaker(svg, rec, variant, name, y, X, t1)
        segs = segments(rec, variant, tmax)
        for lane in lanes:
            y = draw_lane(svg, rec, variant, lane, segs, y, X, tmax, t1)
        # Time axis.
        y += 4
        svg.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>'
                % (num(x0), num(y), num(x1), num(y), GREY))
        t = t0
        while t <= t1 + 0.001:
            xt = X(t)
            svg.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>'
                    % (num(xt), num(y), num(xt), num(y + 4), GREY))
            svg.text(xt, y + 15, hms(t), size=10, fill=GREY, anchor="middle")
            t += step
        y += 22
        # Grid lines behind the lanes of this panel.
        grid = []
        t = t0
        while t <= t1 + 0.001:
            grid.append('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#d0d7de" '
                        'stroke-width="1" stroke-dasharray="2,3"/>'
                        % (num(X(t)), num(top + 22), num(X(t)), num(y - 22)))
            t += step
        svg.parts[lanes_at:lanes_at] = grid
        # The checks of this side, under its last panel.
        side = "today" if variant == "today" else "with fence"
        if variant == "today" or variant == fence_variants[-1]:
            for c in checks[side]:
                mark = "\u2713" if c["ok"] else "\u2717"
                lines = wrap(c["claim"], WIDTH - 60, 11)
                for i, line in enumerate(lines):
                    y += 14
                    if i == 0:
                        svg.text(20, y, mark, size=11, fill=GREEN if c["ok"] else RED,
                                 weight="bold")
                    svg.text(34, y, line, size=11, fill=INK)
            y += 6
        y += 4
        svg.add('<line x1="8" y1="%s" x2="%s" y2="%s" stroke="#d0d7de" stroke-width="1"/>'
                % (num(y), num(WIDTH - 8), num(y)))

    # Legend.
    y = draw_legend(svg, y + 8)
    # Lesson.
    y += 6
    lines = wrap("Lesson: " + rec["lesson"], WIDTH - 24, 12)
    for i, line in enumerate(lines):
        y += 16
        if i == 0:
            svg.add('<text x="12" y="%s" font-size="12" fill="%s"><tspan font-weight="bold">'
                    'Lesson:</tspan>%s</text>' % (num(y), INK, esc(line[len("Lesson:"):])))
        else:
            svg.text(12, y, line, size=12)
    y += 14
    height = int(y)
    head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'viewBox="0 0 %d %d" font-family="%s" role="img" aria-label="%s">\n'
            % (WIDTH, height, WIDTH, height, FONT, esc(rec["title"])))
    title = "<title>%s</title>\n" % esc("%s, today and with fence. %s" % (rec["title"], rec["intro"]))
    defs = ('<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
            'patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/>'
            '<line x1="0" y1="0" x2="0" y2="6" stroke="%s" stroke-width="2.5"/></pattern></defs>\n'
            % "#8c959f")
    body = "\n".join(svg.parts)
    return head + title + defs + '<rect width="100%" height="100%" fill="#ffffff"/>\n' + body + "\n</svg>\n", height


def draw_lane(svg, rec, variant, lane, segs, y, X, tmax, t1):
    band = y + 12                       # centre of the bar band
    svg.text(12, band + 4, lane, size=12, weight="bold")
    x1 = WIDTH - RIGHT_PAD - 4
    if any(st["worker"] == lane and variant in st["runs"] for st in rec["steps"]):
        svg.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eaeef2" stroke-width="1"/>'
                % (num(LEFT + 6), num(band), num(x1), num(band)))
    else:
        # A worker of the other design only (the operator no one needs).
        svg.text(LEFT + 6, band + 4, "no step in this design", size=11, fill=GREY,
                 style="italic")
    labels = []                         # (x, parts[, alignments]) to place in rows
    # The marks first, so that a bar's own label is not drawn under one.
    marks = []
    seen = {}
    for st in rec["steps"]:
        if st["worker"] != lane or variant not in st["runs"]:
            continue
        victims = [g["worker"] for g in segs if g["how"] == "lost" and g["by"]
                   and g["by"][0] == lane and g["end"] == secs(st["at"])]
        m = classify(st, st["runs"][variant], victims)
        if m is None:
            continue
        t = secs(st["at"])
        k = seen.get(t, 0)
        seen[t] = k + 1
        marks.append((X(t) + k * 9, m))
    # Pauses, and waits for a call to time out: time the worker loses.  A
    # pause is a zigzag, a wait a bar under the lane (a lock's bar stays
    # above it).
    for p in rec["pauses"]:
        if p["worker"] != lane or p.get("variant") not in (None, variant):
            continue
        a, b = X(secs(p["from"])), X(secs(p["to"]))
        if p.get("how") == "waits":
            svg.used.add("wait")
            svg.add('<rect x="%s" y="%s" width="%s" height="7" fill="%s" rx="2"/>'
                    % (num(a), num(band + 8), num(b - a), WAIT))
            labels.append((a, [(p["what"], INK, None, "italic")], "L"))
            continue
        svg.used.add("pause")
        zz = []
        xx, up = a, True
        while xx < b:
            zz.append("%s,%s" % (num(xx), num(band + 10 + (0 if up else 5))))
            xx += 4
            up = not up
        zz.append("%s,%s" % (num(b), num(band + 10 + (0 if up else 5))))
        svg.add('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.2"/>'
                % (" ".join(zz), GREY))
        # A pause's label starts under its zigzag, never before it.
        labels.append((a, [(p["what"], GREY, None, "italic")], "L"))
    # Lock and lease bars.  One still held when the timeline ends runs on to
    # the end of the time axis and ends in an arrowhead there, inside the
    # picture.
    for s in segs:
        if s["worker"] != lane:
            continue
        a = X(s["start"])
        fill = "#54aeff" if variant != "today" else "#8c959f"
        svg.used.add("bar")
        if s["end"] is None:
            b = max(X(t1), a + 10)
            svg.add('<rect x="%s" y="%s" width="%s" height="10" fill="%s" rx="2"/>'
                    % (num(a), num(band - 5), num(b - 7 - a), fill))
            svg.add('<path d="M %s %s l 8 7 l -8 7 z" fill="%s"/>'
                    % (num(b - 8), num(band - 7), fill))
        else:
            b = max(X(s["end"]), a + 3)
            svg.add('<rect x="%s" y="%s" width="%s" height="10" fill="%s" rx="2"/>'
                    % (num(a), num(band - 5), num(b - a), fill))
        label = lock_label(s["lock"], s["token"], variant, s.get("permits"), s.get("owner"))
        lw = text_width(label, 10)
        if (a + 10 + lw + 6 < b - (8 if s["end"] is None else 0)
                and not any(a + 10 - 8 < mx < a + 10 + lw + 8 for mx, _ in marks)):
            svg.text(a + 10, band + 3.5, label, size=10, fill="#ffffff" if variant == "today" else INK)
        else:
            labels.append((a, [(label, BLUE if variant != "today" else INK, None, None)]))
        if s["believed"] is not None and s["believed"] > s["end"]:
            svg.used.add("hatch")
            c = X(s["believed"])
            svg.add('<rect x="%s" y="%s" width="%s" height="10" fill="url(#hatch)" '
                    'stroke="#8c959f" stroke-width="1" rx="2"/>'
                    % (num(b), num(band - 5), num(max(c - b, 3))))
        if s["how"] in ("expired", "lost"):
            why = "ran out" if s["how"] == "expired" else (
                "freed by " + s["by"][0] if s["by"] and s["by"][1] == "release"
                else "ended by " + (s["by"][0] if s["by"] else "?"))
            svg.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>'
                    % (num(b), num(band - 8), num(b), num(band + 8), RED))
            labels.append((b, [("%s %s" % (why, hms(s["end"])), RED, None, None)]))
    # Marks.
    for x, (shape, colour, act, outcome, tok) in marks:
        draw_mark(svg, shape, colour, x, band)
        svg.used.add("skipped" if shape == "refused" else shape)
        parts = [(act + (": " if outcome else ""), INK, None, None)]
        if outcome:
            parts.append((outcome, colour, "bold", None))
        if tok:
            parts.append((" (" + tok + ")", colour if shape != "accepted" else INK, None, None))
        labels.append((x, parts))
    nrows = draw_labels(svg, labels, band)
    return band + 28 + max(nrows - 1, 0) * ROW + (8 if nrows else -10)


def draw_labels(svg, labels, band):
    """A lane's labels, in rows below its band (centred at y = band): each
    starts at its mark or ends at it, no two of a row closer than GAP, and
    no leader line (from a mark down to its label) through another label.
    Returns the number of rows."""
    placed = place_labels(labels, LEFT + 2, WIDTH - 10)
    nrows = max([r for _, r, _, _ in placed], default=-1) + 1
    for lx, r, x, parts in placed:
        ty = band + 28 + r * ROW
        svg.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#d0d7de" stroke-width="1"/>'
                % (num(x), num(band + 8), num(x), num(ty - 9)))
    for lx, r, x, parts in placed:
        ty = band + 28 + r * ROW
        spans = []
        for s, fill, weight, style in parts:
            a = ' fill="%s"' % fill
            if weight:
                a += ' font-weight="%s"' % weight
            if style:
                a += ' font-style="%s"' % style
            spans.append("<tspan%s>%s</tspan>" % (a, esc(s)))
        # A label that ends at its leader line is anchored there, so that
        # it does whatever the font's real widths; a white halo keeps other
        # lines off the text.
        if abs(lx + parts_width(parts) - (x - 4)) < 0.01:
            at = '"%s" text-anchor="end"' % num(x - 4)
        else:
            at = '"%s"' % num(lx)
        svg.add('<text x=%s y="%s" font-size="%d" stroke="#ffffff" stroke-width="3" '
                'stroke-linejoin="round" paint-order="stroke">%s</text>'
                % (at, num(ty), FS, "".join(spans)))
    return nrows


def breaker_states(rec, variant, name):
    """A breaker's states over time, as the replay saw it after each step (its
    row in fence_breakers): [(state, from, open_until, probe_token)], each
    from its changed_at."""
    runs = []
    for b in rec.get("breakers", []):
        if b["variant"] != variant or b["breaker"] != name:
            continue
        if runs and runs[-1][0] == b["state"] and runs[-1][1] == secs(b["changed_at"]):
            continue
        runs.append((b["state"], secs(b["changed_at"]), b["open_until"], b["probe_token"]))
    return runs


def band_text(svg, x, y, s, anchor="start"):
    """A label on a breaker's band, on a white ground, so that it reads the
    same on any of the states' colours."""
    w = text_width(s, 10)
    left = x - w if anchor == "end" else x
    svg.add('<rect x="%s" y="%s" width="%s" height="12" fill="#ffffff" fill-opacity="0.85" rx="2"/>'
            % (num(left - 3), num(y - 9.5), num(w + 6)))
    svg.text(x, y, s, size=10, anchor=anchor)


def draw_breaker(svg, rec, variant, name, y, X, t1):
    """A row for one breaker: its state as a band of colours (one per state,
    each labelled with the time it began), the open state's open_until
    marked; the last state runs on to the end of the time axis."""
    band = y + 12
    svg.text(12, band, "breaker", size=12, weight="bold")
    svg.text(12, band + 12, name, size=10, fill=GREY)
    runs = breaker_states(rec, variant, name)
    labels = []
    for i, (state, start, open_until, probe) in enumerate(runs):
        end = runs[i + 1][1] if i + 1 < len(runs) else t1
        a, b = X(start), X(end)
        colour, shown = BREAKER_STATE.get(state, ("#ffffff", state))
        svg.used.add("breaker:" + state)
        svg.add('<rect x="%s" y="%s" width="%s" height="14" fill="%s" stroke="%s" '
                'stroke-width="0.5"/>' % (num(a), num(band - 7), num(b - a), colour, GREY))
        label = "%s from %s" % (shown, hms(start))
        if state == "half_open" and probe is not None:
            label += ", probe token %d" % probe
        room = b - 4
        if state == "open" and open_until and start < secs(open_until) < end:
            u = X(secs(open_until))
            svg.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" '
                    'stroke-dasharray="3,2"/>' % (num(u), num(band - 9), num(u), num(band + 9), INK))
            until = "open_until %s" % open_until
            if text_width(until, 10) + 10 < u - a - text_width(label, 10) - 14:
                band_text(svg, u - 7, band + 3.5, until, anchor="end")
                room = u - 7 - text_width(until, 10) - 10
            else:
                labels.append((u, [(until, INK, None, None)]))
        if a + 5 + text_width(label, 10) + 3 < room:
            band_text(svg, a + 5, band + 3.5, label)
        else:
            labels.append((a, [(label, INK, None, None)]))
    nrows = draw_labels(svg, labels, band)
    return band + 28 + max(nrows - 1, 0) * ROW + (8 if nrows else -10)


def place_labels(labels, lo, hi):
    """Rows for a lane's labels: [(left x, row, mark x, parts)].

    A label starts just right of its mark's leader line (x + 4), or, where
    that would run past hi, ends just left of it (x - 4); one wider than the
    room is put where it fits best.  A label may allow only one of the two
    ("L": it starts at its mark; "R": it ends there).  In a row, labels keep GAP apart; a
    label's leader line runs from its mark down through the rows above it,
    and must not cross a label of those rows (so labels of marks at the same
    x stack beside one line).  The fewest rows that allow that win
    (a depth-first search, tried with 1, 2, ... rows; labels are few); if no
    number of rows does, the leader lines may cross labels (their white halo
    keeps the text legible) and each label takes the first row with room.
    """
    items = []
    for label in sorted(labels, key=lambda l: l[0]):
        x, parts = label[0], label[1]
        aligns = label[2] if len(label) > 2 else "LR"
        w = parts_width(parts)
        opts = [lx for a, lx in (("L", x + 4), ("R", x - 4 - w))
                if a in aligns and lx >= lo and lx + w <= hi]
        if not opts:
            opts = [max(lo, min(x + 4, hi - w))]
        items.append((x, w, opts, parts))

    def fits(i, lx, r, chosen):
        x, w = items[i][0], items[i][1]
        for j, (ljx, rj) in enumerate(chosen):
            xj, wj = items[j][0], items[j][1]
            if rj == r and lx < ljx + wj + GAP and ljx < lx + w + GAP:
                return False
            if rj < r and ljx - 3 <= x <= ljx + wj + 3:
                return False
            if r < rj and lx - 3 <= xj <= lx + w + 3:
                return False
        return True

    def search(nrows, budget):
        chosen = []

        def dfs(i):
            if i == len(items):
                return True
            budget[0] -= 1
            if budget[0] < 0:
                return False
            for r in range(nrows):
                for lx in items[i][2]:
                    if fits(i, lx, r, chosen):
                        chosen.append((lx, r))
                        if dfs(i + 1):
                            return True
                        chosen.pop()
            return False

        return chosen if dfs(0) else None

    for nrows in range(1, len(items) + 1):
        chosen = search(nrows, [20000])
        if chosen is not None:
            return [(lx, r, it[0], it[3]) for (lx, r), it in zip(chosen, items)]
    rows, placed = [], []
    for x, w, opts, parts in items:
        lx = opts[0]
        for r, right in enumerate(rows):
            if lx >= right + GAP:
                rows[r] = lx + w
                break
        else:
            r = len(rows)
            rows.append(lx + w)
        placed.append((lx, r, x, parts))
    return placed


def draw_mark(svg, shape, colour, x, y):
    if shape == "accepted":
        svg.add('<circle cx="%s" cy="%s" r="5.5" fill="%s" stroke="#ffffff" stroke-width="1.5"/>'
                % (num(x), num(y), colour))
    elif shape == "effect":
        svg.add('<path d="M %s %s l 6 6 l -6 6 l -6 -6 z" fill="%s" stroke="#ffffff" '
                'stroke-width="1.5"/>' % (num(x), num(y - 6), colour))
    elif shape == "rejected":
        svg.add('<rect x="%s" y="%s" width="12" height="12" fill="%s" stroke="#ffffff" '
                'stroke-width="1.5"/>' % (num(x - 6), num(y - 6), colour))
        svg.add('<path d="M %s %s l 6 6 m 0 -6 l -6 6" stroke="#ffffff" stroke-width="1.8"/>'
                % (num(x - 3), num(y - 3)))
    elif shape in ("skipped", "refused"):
        svg.add('<circle cx="%s" cy="%s" r="5" fill="#ffffff" stroke="%s" stroke-width="2"/>'
                % (num(x), num(y), colour))
    elif shape == "release":
        svg.add('<path d="M %s %s l 12 0 l -6 -10 z" fill="%s" stroke="#ffffff" '
                'stroke-width="1"/>' % (num(x - 6), num(y + 5), colour))
    else:
        svg.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>'
                % (num(x), num(y - 6), num(x), num(y + 6), colour))


def draw_legend(svg, y):
    """The key to what this picture draws (svg.used), and to nothing else."""
    items = [
        ("bar", "holds the lock or lease"),
        ("hatch", "believes it still holds it"),
        ("pause", "frozen or paused"),
        ("wait", "waits on a call (its answer or timeout)"),
        ("accepted", "write accepted"),
        ("effect", "sent (outside the database)"),
        ("rejected", "rejected, with its SQLSTATE"),
        ("skipped", "refused or skipped"),
        ("release", "lock freed or session ended"),
        ("tick", "another step, with its result"),
    ] + [("breaker:" + state, ("breaker " if i == 0 else "") + name)
         for i, (state, (_, name)) in enumerate(BREAKER_STATE.items())]
    x = 12
    y += 10
    for kind, label in items:
        if kind not in svg.used:
            continue
        w = 22 + text_width(label, 10) + 14
        if x + w > WIDTH - 8:
            x = 12
            y += 18
        cy = y
        if kind == "bar":
            svg.add('<rect x="%s" y="%s" width="16" height="9" fill="#54aeff" rx="2"/>'
                    % (num(x), num(cy - 4.5)))
        elif kind == "hatch":
            svg.add('<rect x="%s" y="%s" width="16" height="9" fill="url(#hatch)" stroke="#8c959f" '
                    'stroke-width="1" rx="2"/>' % (num(x), num(cy - 4.5)))
        elif kind == "pause":
            svg.add('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.2"/>'
                    % (" ".join("%s,%s" % (num(x + i * 4), num(cy - 2 + (0 if i % 2 == 0 else 5)))
                                for i in range(5)), GREY))
        elif kind == "wait":
            svg.add('<rect x="%s" y="%s" width="16" height="7" fill="%s" rx="2"/>'
                    % (num(x), num(cy - 3.5), WAIT))
        elif kind.startswith("breaker:"):
            svg.add('<rect x="%s" y="%s" width="16" height="12" fill="%s" stroke="%s" '
                    'stroke-width="0.5"/>'
                    % (num(x), num(cy - 6), BREAKER_STATE[kind[len("breaker:"):]][0], GREY))
        else:
            draw_mark(svg, kind, {"accepted": GREEN, "effect": GREEN, "rejected": RED,
                                  "skipped": GREY, "release": AMBER, "tick": INK}[kind], x + 8, cy)
        svg.text(x + 22, cy + 3.5, label, size=10, fill=INK)
        x += w
    return y + 10


NUMBERS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
           "eleven", "twelve"]


def in_words(n):
    return NUMBERS[n] if n < len(NUMBERS) else str(n)


def write_index(out, recs):
    # The incidents of doc/incidents.md first, numbered as there; then the
    # timelines that illustrate another page (their record's "doc").
    incidents = [r for r in recs if r.get("doc", "doc/incidents.md") == "doc/incidents.md"]
    others = [r for r in recs if r not in incidents]
    heading = "%s incident%s, replayed" % (in_words(len(incidents)).capitalize(),
                                           "" if len(incidents) == 1 else "s")
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             "<title>fence: %s</title>" % esc(heading[0].lower() + heading[1:]),
             "<style>",
             "body { font-family: DejaVu Sans, Verdana, Arial, sans-serif; color: #1f2328;"
             " max-width: 900px; margin: 24px auto; padding: 0 12px; line-height: 1.45; }",
             "h1 { font-size: 24px; } h2 { font-size: 19px; margin-top: 36px; }",
             "img { display: block; width: 100%; max-width: 880px; height: auto;"
             " border: 1px solid #d0d7de; }",
             "</style>", "</head>", "<body>",
             "<h1>%s</h1>" % esc(heading),
             "<p>Each picture is drawn from one run of <code>make demo</code>: the same replay "
             "as the regression tests <code>sql/timeline_*.sql</code>. On top, the design as "
             "the team ran it; below, the same workers with fence. The incidents are described "
             "in <code>doc/incidents.md</code>.%s</p>" % (
                 " After them, %s %s." % (
                     "a replay that illustrates" if len(others) == 1
                     else in_words(len(others)) + " replays that illustrate",
                     " and ".join("<code>%s</code>" % esc(d) for d in
                                  sorted(set(r["doc"] for r in others))))
                 if others else "")]
    for n, rec in enumerate(incidents + others, 1):
        parts.append('<section id="%s">' % esc(rec["name"]))
        if rec in incidents:
            parts.append("<h2>%d. %s</h2>" % (n, esc(rec["title"])))
        else:
            parts.append("<h2>%s <small>(for <code>%s</code>)</small></h2>"
                         % (esc(rec["title"]), esc(rec["doc"])))
        # The picture carries the story and the lesson; the alternative text
        # says them for a reader who cannot see it.
        parts.append('<img src="%s.svg" alt="%s">'
                     % (esc(rec["name"]), esc("%s, today and with fence. %s Lesson: %s"
                                              % (rec["title"], rec["intro"], rec["lesson"]))))
        parts.append("</section>")
    # For the docs suite's browser test (test/docs/check.py): once the page
    # has loaded, say on <body> whether every picture loaded, and how tall
    # the page is (for its screenshot).
    parts += ["<script>",
              "window.addEventListener('load', function () {",
              "  var bad = [];",
              "  for (var i = 0; i < document.images.length; i++) {",
              "    var img = document.images[i];",
              "    if (!img.complete || img.naturalWidth === 0) bad.push(img.getAttribute('src'));",
              "  }",
              "  document.body.setAttribute('data-images', bad.length ?",
              "    'broken: ' + bad.join(' ') : 'ok ' + document.images.length);",
              "  document.body.setAttribute('data-height', document.documentElement.scrollHeight);",
              "});",
              "</script>",
              "</body>", "</html>", ""]
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write("\n".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("records", nargs="+")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    recs = []
    for path in args.records:
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
        svg, _ = draw(rec)
        with open(os.path.join(args.out, rec["name"] + ".svg"), "w", encoding="utf-8") as f:
            f.write(svg)
        recs.append(rec)
    write_index(args.out, recs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
