#!/usr/bin/env python3
"""The docs suite of make test (test/run runs it after make demo's replay).

    check.py readme SRC
        The SQL of the README's "Getting started" equals each copy of it that
        sql/readme.sql runs between its markers (so the README shows what the
        regression test runs, and the test pastes it twice).

    check.py pictures GENERATED SRC/doc/img
        Each SVG that this run of the demo drew equals its copy committed
        under doc/img/, byte for byte (doc/img/ may hold other pictures too).

    check.py browser DIR SHOTS
        Opens DIR/index.html in headless Chromium (file://, every host name
        unresolvable, so a page that fetches anything from the network
        fails), and fails on any console message (an error, an uncaught
        exception) or an image that did not load.  Saves a screenshot of the
        whole page and one of each picture as PNG files in SHOTS.

Each prints one line per failure and exits 1 if anything failed.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHROMIUM = os.environ.get("FENCE_CHROMIUM", "chromium")


def readme(src):
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- getting-started:[^\n]*-->\n```sql\n(.*?)```\n", text, re.S)
    if not m:
        print("README.md: no Getting-started SQL block after its <!-- getting-started --> marker")
        return 1
    with open(os.path.join(src, "sql", "readme.sql"), encoding="utf-8") as f:
        sql = f.read()
    copies = re.findall(r"^-- getting-started: begin\n(.*?)^-- getting-started: end\n", sql, re.S | re.M)
    if len(copies) < 2:
        print("sql/readme.sql: the example must be run twice (two pairs of -- getting-started: markers)")
        return 1
    for n, copy in enumerate(copies, 1):
        if m.group(1) != copy:
            a, b = m.group(1).splitlines(), copy.splitlines()
            for i in range(max(len(a), len(b))):
                la = a[i] if i < len(a) else "(none)"
                lb = b[i] if i < len(b) else "(none)"
                if la != lb:
                    print("README.md and copy %d in sql/readme.sql differ at line %d of the example:" % (n, i + 1))
                    print("  README.md:      " + la)
                    print("  sql/readme.sql: " + lb)
                    break
            return 1
    print("README.md's Getting-started SQL is what sql/readme.sql runs, %d times" % len(copies))
    return 0


def pictures(generated, committed):
    gen = sorted(os.path.basename(p) for p in glob.glob(os.path.join(generated, "*.svg")))
    com = sorted(os.path.basename(p) for p in glob.glob(os.path.join(committed, "*.svg")))
    bad = 0
    if not gen:
        print("no pictures were drawn in %s" % generated)
        return 1
    for name in gen:
        if name not in com:
            print("doc/img/%s is missing: this run drew it (copy it from %s)" % (name, generated))
            bad += 1
        else:
            with open(os.path.join(generated, name), "rb") as f:
                a = f.read()
            with open(os.path.join(committed, name), "rb") as f:
                b = f.read()
            if a != b:
                print("doc/img/%s differs from what this run drew (%s): the replay or the "
                      "drawing changed; look at both, then copy the new one" % (
                          name, os.path.join(generated, name)))
                bad += 1
    if not bad:
        print("doc/img/: the %d pictures this run drew, identical" % len(gen))
    return 1 if bad else 0


def chromium(args, timeout=120):
    # A profile of its own for each run: runs in parallel (or a desktop
    # Chromium of the same user) would otherwise share one and refuse.
    profile = tempfile.mkdtemp(prefix="fence-chromium-")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0",
           "--user-data-dir=" + profile,
           "--host-resolver-rules=MAP * ~NOTFOUND"] + args
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def console_lines(stderr):
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def browser(directory, shots):
    directory = os.path.abspath(directory)
    os.makedirs(shots, exist_ok=True)
    index = os.path.join(directory, "index.html")
    if not os.path.exists(index):
        print("%s does not exist" % index)
        return 1
    bad = 0
    with open(index, encoding="utf-8") as f:
        page = f.read()
    # Nothing may come from the network: no remote src/href, no @import or url().
    for m in re.finditer(r'(?:src|href)\s*=\s*"([^"]*)"|url\(([^)]*)\)|@import', page):
        ref = m.group(1) or m.group(2) or m.group(0)
        if re.match(r"\s*['\"]?(https?:)?//", ref) or ref == "@import":
            print("index.html fetches from outside its folder: %s" % ref)
            bad += 1
    rc, dom, err = chromium(["--dump-dom", "file://" + index])
    if rc != 0:
        print("chromium --dump-dom failed (exit %d):\n%s" % (rc, err[-2000:]))
        return 1
    for line in console_lines(err):
        print("console: " + line.split("] ", 1)[-1])
        bad += 1
    m = re.search(r'data-images="([^"]*)"', dom)
    n = page.count("<img ")
    if not m:
        print("index.html: its image check did not run (no data-images on <body>)")
        bad += 1
    elif m.group(1) != "ok %d" % n:
        print("index.html: images: %s (expected ok %d)" % (m.group(1), n))
        bad += 1
    h = re.search(r'data-height="(\d+)"', dom)
    height = int(h.group(1)) if h else 4000
    shot = os.path.join(shots, "index.png")
    rc, _, err = chromium(["--screenshot=" + shot, "--window-size=920,%d" % height,
                           "file://" + index])
    if rc != 0 or not os.path.exists(shot):
        print("screenshot of index.html failed:\n%s" % err[-2000:])
        bad += 1
    for line in console_lines(err):
        print("console: " + line.split("] ", 1)[-1])
        bad += 1
    for svg in sorted(glob.glob(os.path.join(directory, "*.svg"))):
        with open(svg, encoding="utf-8") as f:
            head = f.read(400)
        size = re.search(r'width="(\d+)" height="(\d+)"', head)
        if not size:
            print("%s: no width and height" % svg)
            bad += 1
            continue
        png = os.path.join(shots, os.path.basename(svg)[:-4] + ".png")
        rc, _, err = chromium(["--screenshot=" + png,
                               "--window-size=%s,%s" % (size.group(1), size.group(2)),
                               "file://" + svg])
        if rc != 0 or not os.path.exists(png):
            print("screenshot of %s failed:\n%s" % (svg, err[-2000:]))
            bad += 1
        for line in console_lines(err):
            print("console (%s): %s" % (os.path.basename(svg), line.split("] ", 1)[-1]))
            bad += 1
    if not bad:
        print("index.html: %d images loaded, no console message; screenshots in %s" % (n, shots))
    return 1 if bad else 0


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "readme" and len(args) == 1:
        return readme(args[0])
    if cmd == "pictures" and len(args) == 2:
        return pictures(*args)
    if cmd == "browser" and len(args) == 2:
        return browser(*args)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
