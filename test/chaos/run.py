#!/usr/bin/python3
"""A Jepsen-style fault test of fence: random lease operations and fenced
writes from several client processes while a nemesis pauses, kills,
crashes, partitions, fails over and moves the lease clock; a history of
every call; a checker of the safety properties over the whole history.

    /usr/bin/python3 test/chaos/run.py --bindir DIR [--seconds N] [--seed S]
        [--workdir DIR] [--unprotected] [--profile short|full]

DIR holds the PostgreSQL programs, with fence installed in that
installation.  Runs as a user that may run initdb.  Two nodes (a primary
and its synchronous standby) on 127.0.0.1, each behind a TCP proxy of this
process; the clients connect through both proxies with
target_session_attrs=read-write.  Exits 0 if the checker found no
violation and the run exercised at least the profile's minimum counts; on
failure it keeps the seed, the history, the checker's report and the
servers' logs in the directory it prints.  --unprotected leaves out
fence_protect, so nothing fences the writes: the checker must then find
violations (the exit status is 0 only if it does).
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import psycopg

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check  # noqa: E402
import history  # noqa: E402
from proxy import Proxy  # noqa: E402

PROFILES = {
    # seconds of faults, minimum counts the run must reach
    "short": {"seconds": 90, "gap": (2.0, 5.0),
              "min": {"ok_writes": 120, "stale_rejections": 10, "takeovers": 5,
                      "crashes": 2, "failovers": 1}},
    "full": {"seconds": 1200, "gap": (3.0, 10.0),
             "min": {"ok_writes": 500, "stale_rejections": 50, "takeovers": 20,
                     "crashes": 5, "failovers": 3}},
}

SCHEMA = """
CREATE EXTENSION fence;
CREATE TABLE cells (
    key text PRIMARY KEY,
    fence fence_token NOT NULL DEFAULT 0,
    wid bigint,
    claims int NOT NULL DEFAULT 0,
    items bigint[] NOT NULL DEFAULT '{}',
    items_nc bigint[] NOT NULL DEFAULT '{}');
-- The log of a row: every write that set wid, with the fence it was
-- stamped with, in the order the row's writers committed (they hold its
-- row lock until then).
CREATE TABLE wlog (seq bigserial PRIMARY KEY, key text NOT NULL,
                   token bigint NOT NULL, wid bigint NOT NULL);
CREATE FUNCTION log_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.wid IS NOT NULL THEN
        INSERT INTO wlog (key, token, wid) VALUES (NEW.key, NEW.fence::text::bigint, NEW.wid);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER log_write AFTER UPDATE ON cells FOR EACH ROW EXECUTE FUNCTION log_write();
"""


def log(msg):
    print("chaos: " + msg, flush=True)


class Node:
    def __init__(self, base, name, port, bindir, conf):
        self.name = name
        self.dir = os.path.join(base, name)
        self.data = os.path.join(self.dir, "data")
        self.logfile = os.path.join(base, "logs", name + ".log")
        self.port = port
        self.bindir = bindir
        self.conf = conf
        self.socketdir = base

    def bin(self, prog):
        return os.path.join(self.bindir, prog)

    def run(self, *args, check_=True):
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if check_ and r.returncode != 0:
            raise RuntimeError("%s failed: %s" % (" ".join(args), r.stdout))
        return r

    def own_conf(self):
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            # Every node, once primary, waits for a synchronous standby.
            f.write("port = %d\ncluster_name = '%s'\nsynchronous_standby_names = '*'\n"
                    % (self.port, self.name))

    def initdb(self):
        os.makedirs(self.dir, exist_ok=True)
        self.run(self.bin("initdb"), "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(self.conf)
        self.own_conf()

    def clone_from(self, primary):
        shutil.rmtree(self.data, ignore_errors=True)
        os.makedirs(self.dir, exist_ok=True)
        self.run(self.bin("pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
                 "-D", self.data, "-R", "-X", "stream", "-c", "fast", "--no-sync")
        with open(os.path.join(self.data, "postgresql.auto.conf"), "a") as f:
            f.write("primary_conninfo = 'host=127.0.0.1 port=%d user=postgres application_name=%s'\n"
                    % (primary.port, self.name))
        self.own_conf()

    def start(self):
        self.run(self.bin("pg_ctl"), "-D", self.data, "-l", self.logfile, "-w", "-t", "120", "start")

    def stop(self, mode="fast"):
        self.run(self.bin("pg_ctl"), "-D", self.data, "-m", mode, "-w", "stop", check_=False)

    def promote(self):
        self.run(self.bin("pg_ctl"), "-D", self.data, "-w", "promote")

    def postmaster_pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def connect(self, db="chaos", timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            try:
                return psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname=db,
                                       autocommit=True, connect_timeout=3,
                                       application_name="chaos-admin")
            except psycopg.Error:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def sql(self, q, params=None, db="chaos", timeout=60):
        with self.connect(db, timeout) as c:
            cur = c.execute(q, params)
            return cur.fetchall() if cur.description else None


def children_of(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Run:
    def __init__(self, args):
        self.args = args
        self.profile = PROFILES[args.profile]
        self.seconds = args.seconds or self.profile["seconds"]
        self.seed = args.seed if args.seed is not None else random.randrange(1 << 30)
        self.rng = random.Random("nemesis-%s" % self.seed)
        self.base = args.workdir or tempfile.mkdtemp(prefix="fence-chaos.")
        os.makedirs(os.path.join(self.base, "logs"), exist_ok=True)
        self.hist_dir = os.path.join(self.base, "history")
        os.makedirs(self.hist_dir, exist_ok=True)
        self.rec = history.Recorder(os.path.join(self.hist_dir, "nemesis.part.jsonl"))
        self.ttl = 2.0
        self.sync_commit = args.synchronous_commit
        conf = ("listen_addresses = '127.0.0.1'\n"
                "unix_socket_directories = '%s'\n"
                "shared_preload_libraries = 'fence'\n"
                "fence.test_clock = on\n"
                "lc_messages = 'C'\n"
                "max_connections = 40\n"
                "wal_level = replica\nmax_wal_senders = 6\nhot_standby = on\n"
                "wal_keep_size = '256MB'\n"
                "synchronous_standby_names = '*'\n"
                "synchronous_commit = %s\n"
                "fsync = on\n"
                "shared_buffers = '16MB'\n"
                "client_connection_check_interval = '1s'\n"
                "log_line_prefix = '%%m [%%p] %%a '\n"
                "log_min_messages = warning\n") % (self.base, self.sync_commit)
        self.nodes = [Node(self.base, n, free_port(), args.bindir, conf) for n in ("n1", "n2")]
        self.primary, self.standby = self.nodes
        self.proxies = {}
        self.workers = {}
        self.respawns = 0
        self.counts = {}

    # --- set-up ---------------------------------------------------------------

    def setup(self):
        log("seed %s, %d s of faults, work directory %s" % (self.seed, self.seconds, self.base))
        p, s = self.primary, self.standby
        p.initdb()
        # No standby yet: commit locally while setting up.
        with open(os.path.join(p.data, "postgresql.conf"), "a") as f:
            f.write("synchronous_standby_names = ''\n")
        p.start()
        p.sql("CREATE DATABASE chaos", db="postgres")
        p.sql(SCHEMA)
        if not self.args.unprotected:
            p.sql("SELECT fence_protect('cells', lease => '{key}')")
        self.generations = int(self.seconds / self.retire_seconds()) + 2
        p.sql("INSERT INTO cells (key) SELECT 'g' || g || 'k' || k FROM generate_series(0, %s) g, "
              "generate_series(0, 2) k" % (self.generations - 1))
        if not self.args.unprotected:
            # The schedule may draw a forged write before the first grant (CI's
            # first short run did, and it landed): a database whose counter
            # has issued no token must refuse every token.  Nothing is granted
            # before the workers start, so they meet that database too.
            try:
                p.sql("UPDATE cells SET fence = 10000000 WHERE key = 'g0k0'")
            except psycopg.Error as e:
                if e.sqlstate != "22023":
                    raise
            else:
                raise RuntimeError("a forged write before the database's first grant landed")
        s.clone_from(p)
        s.start()
        p.sql("ALTER SYSTEM SET synchronous_standby_names = '*'", db="postgres")
        p.sql("SELECT pg_reload_conf()", db="postgres")
        self.wait_sync()
        for n in self.nodes:
            self.proxies[n.name] = Proxy(0, n.port)
        hosts = ",".join("127.0.0.1" for _ in self.nodes)
        ports = ",".join(str(self.proxies[n.name].port) for n in self.nodes)
        dsn = ("host=%s port=%s user=postgres dbname=chaos target_session_attrs=read-write "
               "connect_timeout=2 keepalives=1 keepalives_idle=1 keepalives_interval=1 "
               "keepalives_count=3 tcp_user_timeout=3000 "
               "options='-c statement_timeout=5000 -c idle_in_transaction_session_timeout=10000'"
               % (hosts, ports))
        self.cfg = {"seed": self.seed, "dir": self.hist_dir, "dsn": dsn, "ttl": self.ttl,
                    "acquire_timeout": 3.0, "workers": self.args.workers, "keys": 3,
                    "t0": time.time(), "retire_seconds": self.retire_seconds(),
                    "generations": self.generations}
        self.cfg_path = os.path.join(self.base, "config.json")
        with open(self.cfg_path, "w") as f:
            json.dump(self.cfg, f, indent=1)
        with open(os.path.join(self.base, "seed"), "w") as f:
            f.write("%s\n" % self.seed)

    def retire_seconds(self):
        # About 300 operations per key at ~20 operations a second over 3 keys.
        return 45.0

    def wait_sync(self, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                r = self.primary.sql("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'",
                                     db="postgres", timeout=10)
                if r[0][0] > 0:
                    return True
            except psycopg.Error:
                pass
            time.sleep(0.3)
        raise RuntimeError("the standby did not become synchronous")

    # --- workers --------------------------------------------------------------

    def spawn(self, slot, incarnation):
        self.workers[slot] = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "worker.py"), self.cfg_path, str(slot), str(incarnation)],
            stdout=open(os.path.join(self.base, "logs", "worker%d.log" % slot), "a"),
            stderr=subprocess.STDOUT)

    def tend_workers(self):
        for slot, p in list(self.workers.items()):
            if p.poll() is not None:
                self.respawns += 1
                self.spawn(slot, self.respawns)

    # --- the nemesis ----------------------------------------------------------

    def event(self, type_, f, value=None):
        self.rec.record(type_, f, "nemesis", None, value or {})

    def count(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def backends(self):
        try:
            return self.primary.sql(
                "SELECT a.pid, a.application_name, l.key FROM pg_stat_activity a "
                "LEFT JOIN fence_leases l ON l.pid = a.pid "
                "WHERE a.application_name LIKE 'chaos-w%%'", timeout=5)
        except psycopg.Error:
            return []

    def pick_backend(self, holder):
        rows = self.backends()
        if holder:
            rows = [r for r in rows if r[2] is not None] or rows
        return self.rng.choice(rows) if rows else None

    def hold(self, d):
        end = time.monotonic() + d
        while time.monotonic() < end:
            self.tend_workers()
            time.sleep(min(0.2, max(0, end - time.monotonic())))

    def wait_primary(self):
        self.primary.connect(timeout=120).close()

    KINDS = [("pause-client", 8), ("pause-holder-backend", 8), ("kill-client", 6),
             ("terminate-backend", 5), ("clock-forward", 5), ("clock-backward", 3),
             ("clock-strobe", 2), ("crash", 5), ("kill-backend", 4), ("kill-postmaster", 2),
             ("partition", 10), ("failover", 5), ("pause-walreceiver", 3)]

    def schedule(self):
        """The faults of the run, in a seeded order: the profile's minimum
        of crashes and failovers, one more of each, and the rest drawn by
        weight, for about as many faults as the run's length holds."""
        lo, hi = self.profile["gap"]
        n = int(self.seconds / ((lo + hi) / 2 + 4.25)) + 1
        mins = self.profile["min"]
        crashes = ["crash", "kill-backend", "kill-postmaster"]
        deck = [crashes[i % 3] for i in range(mins["crashes"] + 1)]
        deck += ["failover"] * (mins["failovers"] + 1)
        names = [k for k, _ in self.KINDS]
        weights = [w for _, w in self.KINDS]
        deck += self.rng.choices(names, weights, k=max(0, n - len(deck)))
        self.rng.shuffle(deck)
        self.deck = deck

    def fault(self):
        if self.deck:
            kind = self.deck.pop()
        else:
            kind = self.rng.choices([k for k, _ in self.KINDS], [w for _, w in self.KINDS])[0]
        d = self.rng.uniform(0.5, 8.0)
        getattr(self, "f_" + kind.replace("-", "_"))(d)
        self.count(kind)

    def f_pause_client(self, d):
        slot = self.rng.choice(list(self.workers))
        pid = self.workers[slot].pid
        self.event("invoke", "pause-client", {"slot": slot, "pid": pid, "seconds": round(d, 2)})
        os.kill(pid, signal.SIGSTOP)
        self.hold(d)
        os.kill(pid, signal.SIGCONT)
        self.event("info", "pause-client", {"slot": slot, "pid": pid})

    def f_pause_holder_backend(self, d):
        b = self.pick_backend(True)
        if not b:
            return self.hold(1)
        self.event("invoke", "pause-backend", {"pid": b[0], "app": b[1], "key": b[2], "seconds": round(d, 2)})
        try:
            os.kill(b[0], signal.SIGSTOP)
            self.hold(d)
        finally:
            try:
                os.kill(b[0], signal.SIGCONT)
            except OSError:
                pass
        self.event("info", "pause-backend", {"pid": b[0]})

    def f_kill_client(self, d):
        slot = self.rng.choice(list(self.workers))
        pid = self.workers[slot].pid
        self.event("invoke", "kill-client", {"slot": slot, "pid": pid})
        os.kill(pid, signal.SIGKILL)
        self.workers[slot].wait()
        self.event("info", "kill-client", {"slot": slot, "pid": pid})
        self.hold(min(d, 2))

    def f_terminate_backend(self, d):
        b = self.pick_backend(self.rng.random() < 0.7)
        if not b:
            return self.hold(1)
        self.event("invoke", "terminate-backend", {"pid": b[0], "app": b[1], "key": b[2]})
        try:
            self.primary.sql("SELECT pg_terminate_backend(%s)", (b[0],), timeout=5)
        except psycopg.Error:
            pass
        self.event("info", "terminate-backend", {"pid": b[0]})

    def clock(self, offsets, d):
        """Set the primary's lease clock to real time plus each offset in
        turn, spread over d seconds, then back to real time."""
        self.event("invoke", "clock", {"offsets": offsets, "seconds": round(d, 2)})
        try:
            for off in offsets:
                self.primary.sql("SELECT fence_set_clock(now() + %s * interval '1 second')",
                                 (off,), timeout=5)
                self.hold(d / len(offsets))
            self.primary.sql("SELECT fence_set_clock(NULL)", timeout=5)
        except psycopg.Error as e:
            log("clock: %s" % e)
        self.event("info", "clock", {})

    def f_clock_forward(self, d):
        self.clock([round(self.rng.uniform(0.5, 3) * self.ttl, 3)], d)

    def f_clock_backward(self, d):
        self.clock([round(-self.rng.uniform(0.5, 3) * self.ttl, 3)], d)

    def f_clock_strobe(self, d):
        self.clock([round(self.rng.uniform(-2, 2) * self.ttl, 3) for _ in range(6)], d)

    def f_crash(self, d):
        self.event("invoke", "crash", {"node": self.primary.name, "how": "immediate stop"})
        self.primary.stop("immediate")
        self.hold(self.rng.uniform(0, 2 * self.ttl))
        self.primary.start()
        self.event("info", "crash", {"node": self.primary.name})

    def f_kill_backend(self, d):
        b = self.pick_backend(self.rng.random() < 0.5)
        if not b:
            return self.hold(1)
        self.event("invoke", "crash", {"node": self.primary.name, "how": "SIGKILL of a backend",
                                       "pid": b[0]})
        try:
            os.kill(b[0], signal.SIGKILL)
        except OSError:
            pass
        time.sleep(0.5)
        self.wait_primary()
        self.event("info", "crash", {"node": self.primary.name})

    def f_kill_postmaster(self, d):
        pm = self.primary.postmaster_pid()
        if not pm:
            return self.hold(1)
        kids = children_of(pm)
        self.event("invoke", "crash", {"node": self.primary.name,
                                       "how": "SIGKILL of the postmaster and its children"})
        for pid in [pm] + kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(os.path.exists("/proc/%d" % p) for p in [pm] + kids):
            time.sleep(0.05)
        self.hold(self.rng.uniform(0, 2 * self.ttl))
        self.primary.start()
        self.event("info", "crash", {"node": self.primary.name})

    def f_partition(self, d):
        mode = self.rng.choice(["stall", "drop", "oneway", "refuse"])
        self.event("invoke", "partition", {"mode": mode, "seconds": round(d, 2)})
        for p in self.proxies.values():
            p.cut(mode)
        self.hold(d)
        for p in self.proxies.values():
            p.heal()
        self.event("info", "partition", {"mode": mode})

    def f_pause_walreceiver(self, d):
        try:
            r = self.standby.sql("SELECT pid FROM pg_stat_wal_receiver", db="postgres", timeout=5)
        except psycopg.Error:
            r = []
        if not r:
            return self.hold(1)
        pid = r[0][0]
        self.event("invoke", "pause-walreceiver", {"node": self.standby.name, "pid": pid,
                                                   "seconds": round(d, 2)})
        try:
            os.kill(pid, signal.SIGSTOP)
            self.hold(d)
        finally:
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
        self.event("info", "pause-walreceiver", {"pid": pid})

    def f_failover(self, d):
        old, new = self.primary, self.standby
        self.event("invoke", "failover", {"from": old.name, "to": new.name})
        old.stop("immediate")
        new.promote()
        self.primary, self.standby = new, old
        self.hold(self.rng.uniform(0, 2))
        # The old primary comes back as the new one's standby: until it
        # streams, every commit on the new primary waits for it.
        old.clone_from(new)
        old.start()
        self.wait_sync()
        self.event("info", "failover", {"from": old.name, "to": new.name})

    # --- the run ----------------------------------------------------------------

    def go(self):
        self.setup()
        self.schedule()
        for slot in range(self.args.workers):
            self.spawn(slot, 0)
        start = time.monotonic()
        lo, hi = self.profile["gap"]
        faults = not self.args.no_faults
        while time.monotonic() - start < self.seconds:
            self.hold(self.rng.uniform(lo, hi))
            if faults and time.monotonic() - start < self.seconds:
                self.fault()
        self.finish()
        return self.verify()

    def finish(self):
        for p in self.proxies.values():
            p.heal()
        # Real time again, as a clock move of its own: had a move failed to
        # undo itself, this is a jump the checker must know of.
        self.event("invoke", "clock", {"offsets": [], "seconds": 0})
        try:
            self.primary.sql("SELECT fence_set_clock(NULL)", timeout=30)
        except psycopg.Error:
            pass
        self.event("info", "clock", {})
        with open(os.path.join(self.hist_dir, "stop"), "w"):
            pass
        deadline = time.monotonic() + 15
        for p in self.workers.values():
            while p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            if p.poll() is None:
                p.kill()
                p.wait()
        time.sleep(2 * self.ttl)
        # Take each key once, read every row and the counter.
        fin = history.Recorder(os.path.join(self.hist_dir, "final.part.jsonl"))
        c = self.primary.connect()
        rows = c.execute("SELECT key FROM cells ORDER BY key").fetchall()
        for (key,) in rows:
            v = {"scope": "session", "ttl": self.ttl, "wait": True}
            fin.record("invoke", "acquire", "final", key, v)
            tok = c.execute("SELECT fence_lease(%s, '2 s', timeout => '10 s')::text", (key,)).fetchone()[0]
            fin.record("ok", "acquire", "final", key, dict(v, token=int(tok)))
            fin.record("invoke", "release", "final", key, {"token": int(tok)})
            okr = c.execute("SELECT fence_release(%s, %s)", (key, int(tok))).fetchone()[0]
            fin.record("ok" if okr else "fail", "release", "final", key, {"token": int(tok)})
        state = {}
        for key, items, items_nc in c.execute("SELECT key, items, items_nc FROM cells"):
            state[key] = {"items": list(items), "items_nc": list(items_nc), "log": []}
        for key, tok, wid in c.execute("SELECT key, token, wid FROM wlog ORDER BY seq"):
            state[key]["log"].append([int(tok), int(wid)])
        fin.record("invoke", "final-read", "final", None, {})
        fin.record("ok", "final-read", "final", None, {"rows": state})
        fin.close()
        c.close()
        self.rec.close()
        for p in self.proxies.values():
            p.close()
        for n in self.nodes:
            n.stop("fast")

    def verify(self):
        hist = os.path.join(self.base, "history.jsonl")
        ops = history.merge(history.files_in(self.hist_dir), hist)
        result = check.check(ops, ttl=self.ttl, durable=(self.sync_commit != "off"))
        report = check.render(result)
        with open(os.path.join(self.base, "report.txt"), "w") as f:
            f.write(report)
        print(report, flush=True)
        c = result["counts"]
        mins = dict(self.profile["min"])
        if self.args.unprotected or self.args.no_faults:
            mins = {"ok_writes": mins["ok_writes"] // 3}
        short = ["%s %d < %d" % (k, c.get(k, 0), m) for k, m in mins.items() if c.get(k, 0) < m]
        log("exercised: %d operations; %s" % (c["ops"], ", ".join(
            "%s %d" % (k, c.get(k, 0)) for k in
            ("ok_writes", "stale_rejections", "takeovers", "crashes", "failovers", "partitions",
             "pauses", "kills", "clock_moves"))))
        log("faults by kind: " + ", ".join("%s %d" % kv for kv in sorted(self.counts.items())))
        violations = result["violations"]
        if self.args.unprotected:
            ok = bool(violations) and not short
            log("unprotected run: the checker %s" % (
                "found %d violations, as it must" % len(violations) if violations
                else "found NO violation: it cannot tell fenced writes from unfenced ones"))
        else:
            ok = not violations and not short
        if short:
            log("below the minimum counts: " + ", ".join(short))
        if ok:
            log("PASS (seed %s); history and report in %s" % (self.seed, self.base))
            for n in self.nodes:
                shutil.rmtree(n.data, ignore_errors=True)
        else:
            log("FAIL (seed %s): seed, history.jsonl, report.txt and the servers' logs (logs/) "
                "are kept in %s" % (self.seed, self.base))
            log("reproduce with: /usr/bin/python3 test/chaos/run.py --bindir %s --seed %s --seconds %d%s"
                % (self.args.bindir, self.seed, self.seconds,
                   " --unprotected" if self.args.unprotected else ""))
        return 0 if ok else 1

    def cleanup(self):
        with open(os.path.join(self.hist_dir, "stop"), "w"):
            pass
        for p in self.workers.values():
            if p.poll() is None:
                try:
                    os.kill(p.pid, signal.SIGCONT)
                    p.kill()
                except OSError:
                    pass
        for n in self.nodes:
            if os.path.exists(os.path.join(n.data, "postmaster.pid")):
                n.stop("immediate")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--profile", choices=sorted(PROFILES), default="short")
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--unprotected", action="store_true")
    ap.add_argument("--no-faults", action="store_true")
    ap.add_argument("--synchronous-commit", default="on", choices=["on", "remote_apply", "off"])
    args = ap.parse_args()
    r = Run(args)
    try:
        rc = r.go()
    except BaseException:
        import traceback
        traceback.print_exc()
        log("FAIL (seed %s): the run broke off; everything is kept in %s" % (r.seed, r.base))
        rc = 2
    finally:
        r.cleanup()
    sys.exit(rc)


if __name__ == "__main__":
    main()
