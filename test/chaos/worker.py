"""A chaos worker: one client process taking leases and writing fenced rows.

Started by run.py as `python3 worker.py CONFIG.json SLOT INCARNATION`.  It
connects through the test's TCP proxies to whichever node is primary
(libpq multi-host, target_session_attrs=read-write) and runs episodes drawn
from its own seeded generator until the stop file appears.  Every call is
recorded before it is made (invoke) and when it returns (ok, fail or
info): fail only when the operation surely did not take effect (an error
the server reported for a statement whose transaction it rolled back), info
when that is unknown (a lost connection, a commit whose wait for the
synchronous standby was cancelled).  After an info the worker drops its
connections and continues as a new process id, as in Jepsen.
"""

import json
import os
import random
import re
import signal
import sys
import time

import psycopg

from history import Recorder, now_ns

ISOLATION = ["READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"]
SYNCREP_CANCEL = re.compile(r"wait for synchronous replication|"
                            r"cancel.*synchronous standby", re.I)


class Unknown(Exception):
    """The outcome of the last call is unknown: the connection is gone."""


class Worker:
    def __init__(self, cfg, slot, incarnation):
        self.cfg = cfg
        self.slot = slot
        self.n = cfg["workers"]
        self.incarnation = incarnation
        self.rng = random.Random("%s-%d-%d" % (cfg["seed"], slot, incarnation))
        self.rec = Recorder(os.path.join(cfg["dir"], "w%d-%d.part.jsonl" % (slot, incarnation)))
        self.ttl = cfg["ttl"]
        self.conn = None
        self.conn2 = None
        self.notices = []
        self.old_tokens = {}
        self.max_seen = 0
        self.seq = 0
        self.stop = False

    # --- bookkeeping ---------------------------------------------------------

    @property
    def process(self):
        return self.slot + self.n * self.incarnation

    def next_id(self):
        self.seq += 1
        # Unique across every process of the run: slot, incarnation, count.
        return (self.incarnation * 1000 + self.slot) * 1000000 + self.seq

    def invoke(self, f, key, value):
        return self.rec.record("invoke", f, self.process, key, value)

    def done(self, type_, f, key, value):
        self.rec.record(type_, f, self.process, key, value)

    def lost(self):
        """After an info: new connections, a new process id."""
        for c in (self.conn, self.conn2):
            try:
                if c is not None:
                    c.close()
            except Exception:
                pass
        self.conn = self.conn2 = None
        self.incarnation += 1000
        return None

    # --- connections ---------------------------------------------------------

    def connect(self):
        deadline = time.monotonic() + 30
        while True:
            try:
                c = psycopg.connect(self.cfg["dsn"], autocommit=True,
                                    application_name="chaos-w%d" % self.slot)
                c.add_notice_handler(lambda d: self.notices.append(d.message_primary or ""))
                return c
            except psycopg.Error:
                if self.stop or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def main(self):
        if self.conn is None or self.conn.closed:
            self.conn = self.connect()
        return self.conn

    def other(self):
        if self.conn2 is None or self.conn2.closed:
            self.conn2 = self.connect()
        return self.conn2

    def call(self, conn, sql, params=None):
        """Run one statement; raise Unknown if the connection is lost,
        psycopg.Error (with a sqlstate) if the server refused it."""
        try:
            cur = conn.execute(sql, params)
            return cur.fetchall() if cur.description else cur.rowcount
        except psycopg.Error as e:
            if e.sqlstate is None or e.sqlstate.startswith(("08", "57P")) or conn.closed:
                raise Unknown(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
            raise

    @staticmethod
    def err(e):
        d = {"err": e.sqlstate, "msg": (e.diag.message_primary or "")}
        if e.diag.message_detail:
            d["detail"] = e.diag.message_detail
        return d

    def rollback(self, conn):
        try:
            conn.execute("ROLLBACK")
        except psycopg.Error:
            pass

    # --- operations ----------------------------------------------------------

    def acquire(self, key, scope, iso=None):
        ttl = "%d ms" % int(self.ttl * 1000)
        wait = self.rng.random() < 0.5
        v = {"scope": scope, "ttl": self.ttl, "wait": wait}
        owner = None
        if scope == "detached":
            owner = "o%d" % self.next_id()
            v["owner"] = owner
        if iso:
            v["iso"] = iso
        self.invoke("acquire", key, v)
        conn = self.main()
        t = "%d ms" % int(self.cfg["acquire_timeout"] * 1000)
        if scope == "xact":
            sql = ("SELECT fence_xact_lease(%s, %s, timeout => %s)::text, pg_backend_pid()" if wait
                   else "SELECT fence_try_xact_lease(%s, %s)::text, pg_backend_pid()")
            params = (key, ttl, t) if wait else (key, ttl)
        else:
            sql = ("SELECT fence_lease(%s, %s, timeout => %s, owner => %s)::text, pg_backend_pid()" if wait
                   else "SELECT fence_try_lease(%s, %s, owner => %s)::text, pg_backend_pid()")
            params = (key, ttl, t, owner) if wait else (key, ttl, owner)
        try:
            rows = self.call(conn, sql, params)
        except Unknown as e:
            self.done("info", "acquire", key, dict(v, err=str(e)))
            return self.lost()
        except psycopg.Error as e:
            self.done("fail", "acquire", key, dict(v, **self.err(e)))
            return None
        tok, bpid = rows[0]
        if tok is None:
            self.done("fail", "acquire", key, dict(v, err="busy"))
            return None
        tok = int(tok)
        self.max_seen = max(self.max_seen, tok)
        self.done("ok", "acquire", key, dict(v, token=tok, backend_pid=bpid))
        return tok

    def renew_or_release(self, f, key, token, conn):
        v = {"token": token}
        self.invoke(f, key, v)
        if f == "renew":
            sql, params = "SELECT fence_renew(%s, %s, %s)", (key, token, "%d ms" % int(self.ttl * 1000))
        else:
            sql, params = "SELECT fence_release(%s, %s)", (key, token)
        try:
            rows = self.call(conn, sql, params)
        except Unknown as e:
            self.done("info", f, key, dict(v, err=str(e)))
            return self.lost()
        except psycopg.Error as e:
            self.done("fail", f, key, dict(v, **self.err(e)))
            return False
        self.done("ok" if rows[0][0] else "fail", f, key, v)
        return rows[0][0]

    def read(self, key, conn=None):
        self.invoke("read", key, {})
        try:
            rows = self.call(conn or self.main(),
                             "SELECT token, wid FROM wlog WHERE key = %s ORDER BY seq", (key,))
        except Unknown as e:
            self.done("info", "read", key, {"err": str(e)})
            return self.lost()
        except psycopg.Error as e:
            self.done("fail", "read", key, self.err(e))
            return None
        self.done("ok", "read", key, {"log": [[int(t), int(w)] for t, w in rows]})
        return True

    def write_stmt(self, conn, key, token, wid, via, items=None):
        """The UPDATE of one write; via 'column' sets the fence column to the
        token, 'effect' leaves the trigger to stamp the token in effect."""
        sets = "wid = %(wid)s"
        if via == "column":
            sets += ", fence = %(tok)s"
        if items is not None:
            sets += ", %s = %%(items)s" % items[0]
        return self.call(conn, "UPDATE cells SET " + sets + " WHERE key = %(key)s",
                         {"wid": wid, "tok": token, "key": key,
                          "items": items[1] if items else None})

    def autocommit_write(self, f, key, token, value, conn, use_token=False, items=None):
        """One write in a transaction of its own; returns False after an info."""
        wid = self.next_id()
        v = dict(value, token=token, wid=wid)
        self.invoke(f, key, v)
        self.notices.clear()
        try:
            if use_token:
                self.call(conn, "BEGIN")
                self.call(conn, "SELECT fence_use_token(%s)", (token,))
                self.write_stmt(conn, key, token, wid, v["via"], items)
                self.call(conn, "COMMIT")
            else:
                self.write_stmt(conn, key, token, wid, v["via"], items)
        except Unknown as e:
            self.done("info", f, key, dict(v, err=str(e)))
            return self.lost()
        except psycopg.Error as e:
            self.rollback(conn)
            self.done("fail", f, key, dict(v, **self.err(e)))
            return True
        if any(SYNCREP_CANCEL.search(n) for n in self.notices):
            self.done("info", f, key, dict(v, err="commit not confirmed by the synchronous standby"))
            return True
        self.done("ok", f, key, v)
        return True

    def rmw(self, key, token, scope, conn, use_token, claim, in_xact=False, pending=None):
        """Read the row's set, add an element, write it back: with a claim
        (the row stamped with the token first, in the same transaction) or,
        as the control, without.  In a transaction lease it runs inside the
        open transaction and its outcome waits for the COMMIT (pending)."""
        f = "rmw" if claim else "rmw-nc"
        col = "items" if claim else "items_nc"
        iso = self.rng.choice(ISOLATION)
        wid = self.next_id()
        elem = self.next_id()
        v = {"token": token, "wid": wid, "elem": elem, "scope": scope, "via": "column",
             "iso": None if in_xact else iso}
        self.invoke(f, key, v)
        self.notices.clear()
        try:
            if not in_xact:
                self.call(conn, "BEGIN ISOLATION LEVEL " + iso)
                if use_token:
                    self.call(conn, "SELECT fence_use_token(%s)", (token,))
            if claim:
                self.call(conn, "UPDATE cells SET wid = NULL, claims = claims + 1, fence = %s WHERE key = %s",
                          (token, key))
            cur = self.call(conn, "SELECT %s FROM cells WHERE key = %%s" % col, (key,))
            cur_items = list(cur[0][0])
            if self.rng.random() < 0.3:
                time.sleep(self.rng.uniform(0, 0.5 * self.ttl))
            self.write_stmt(conn, key, token, wid, "column", (col, cur_items + [elem]))
            if in_xact:
                pending.append((f, key, v))
                return True
            self.call(conn, "COMMIT")
        except Unknown as e:
            if in_xact:
                # Nothing of the open transaction was committed.
                self.done("fail", f, key, dict(v, err="connection lost before COMMIT"))
                for p in pending:
                    self.done("fail", p[0], p[1], dict(p[2], err="connection lost before COMMIT"))
                pending.clear()
                raise
            self.done("info", f, key, dict(v, err=str(e)))
            return self.lost()
        except psycopg.Error as e:
            self.rollback(conn)
            self.done("fail", f, key, dict(v, **self.err(e)))
            if in_xact:
                for p in pending:
                    self.done("fail", p[0], p[1], dict(p[2], err="transaction aborted"))
                pending.clear()
                raise
            return True
        if any(SYNCREP_CANCEL.search(n) for n in self.notices):
            self.done("info", f, key, dict(v, err="commit not confirmed by the synchronous standby"))
            return True
        self.done("ok", f, key, v)
        return True

    # --- episodes ------------------------------------------------------------

    def keys(self):
        gen = int((time.time() - self.cfg["t0"]) / self.cfg["retire_seconds"])
        gen = min(gen, self.cfg["generations"] - 1)
        return ["g%dk%d" % (gen, i) for i in range(self.cfg["keys"])]

    def pause(self, short=False):
        r = self.rng.random()
        if short or r < 0.7:
            time.sleep(self.rng.uniform(0, 0.15 * self.ttl))
        else:
            time.sleep(self.rng.uniform(0.3 * self.ttl, 1.5 * self.ttl))

    def episode(self):
        key = self.rng.choice(self.keys())
        r = self.rng.random()
        if r < 0.05:
            return self.forged(key)
        if r < 0.10:
            return self.read(key)
        if r < 0.17:
            return self.stale(key)
        r = self.rng.random()
        if r < 0.45:
            return self.lease_episode(key, "session")
        if r < 0.75:
            return self.xact_episode(key)
        return self.lease_episode(key, "detached")

    def forged(self, key):
        # A token no lease ever had: far above every token handed out.
        token = self.max_seen + 10000000 + self.rng.randrange(1000)
        return self.autocommit_write("write", key, token, {"scope": "forged", "via": "column"},
                                     self.other())

    def stale(self, key):
        # A token of an earlier lease of this process on the key.
        olds = self.old_tokens.get(key)
        if not olds:
            return self.read(key)
        return self.autocommit_write("write", key, self.rng.choice(olds),
                                     {"scope": "stale", "via": "column"}, self.other())

    def lease_episode(self, key, scope):
        token = self.acquire(key, scope)
        if not token:
            return
        self.old_tokens.setdefault(key, []).append(token)
        # A detached lease is written from another connection, with the
        # token passed explicitly; a session lease from its own.
        conn = self.other() if scope == "detached" else self.main()
        for _ in range(self.rng.randint(1, 4)):
            self.pause()
            a = self.rng.random()
            via = "column" if self.rng.random() < 0.6 else "effect"
            use_token = scope == "detached" and via == "effect"
            if a < 0.55:
                ok = self.autocommit_write("write", key, token, {"scope": scope, "via": via},
                                           conn, use_token=use_token)
            elif a < 0.75:
                ok = self.rmw(key, token, scope, conn, scope == "detached", claim=True)
            elif a < 0.85:
                ok = self.rmw(key, token, scope, conn, scope == "detached", claim=False)
            else:
                ok = self.read(key, conn)
            if ok is None:
                return
            if self.rng.random() < 0.3:
                if self.renew_or_release("renew", key, token, conn) is None:
                    return
        if self.rng.random() < 0.7:
            self.renew_or_release("release", key, token, conn)
        # else: abandoned, left to expire (or to end with the session)

    def xact_episode(self, key):
        iso = self.rng.choice(ISOLATION)
        conn = self.main()
        try:
            self.call(conn, "BEGIN ISOLATION LEVEL " + iso)
        except Unknown:
            return self.lost()
        except psycopg.Error:
            self.rollback(conn)
            return
        token = self.acquire(key, "xact", iso)
        if not token:
            if self.conn is not None:
                self.rollback(conn)
            return
        self.old_tokens.setdefault(key, []).append(token)
        pending = []
        try:
            for _ in range(self.rng.randint(1, 3)):
                time.sleep(self.rng.uniform(0, 0.6 * self.ttl))
                if self.rng.random() < 0.6:
                    wid = self.next_id()
                    v = {"token": token, "wid": wid, "scope": "xact", "via": "column", "iso": iso}
                    self.invoke("write", key, v)
                    try:
                        self.write_stmt(conn, key, token, wid, "column")
                    except Unknown:
                        self.done("fail", "write", key, dict(v, err="connection lost before COMMIT"))
                        for p in pending:
                            self.done("fail", p[0], p[1], dict(p[2], err="connection lost before COMMIT"))
                        raise
                    except psycopg.Error as e:
                        self.rollback(conn)
                        self.done("fail", "write", key, dict(v, **self.err(e)))
                        for p in pending:
                            self.done("fail", p[0], p[1], dict(p[2], err="transaction aborted"))
                        return
                    pending.append(("write", key, v))
                else:
                    self.rmw(key, token, "xact", conn, False, claim=True, in_xact=True, pending=pending)
        except Unknown:
            return self.lost()
        except psycopg.Error:
            return
        end = "commit" if self.rng.random() < 0.8 else "rollback"
        self.invoke(end, key, {"token": token})
        self.notices.clear()
        try:
            self.call(conn, end.upper())
        except Unknown as e:
            self.done("info", end, key, {"token": token, "err": str(e)})
            for p in pending:
                self.done("info", p[0], p[1], dict(p[2], err="commit outcome unknown"))
            return self.lost()
        except psycopg.Error as e:
            self.rollback(conn)
            self.done("fail", end, key, dict({"token": token}, **self.err(e)))
            for p in pending:
                self.done("fail", p[0], p[1], dict(p[2], err="commit failed"))
            return
        unsure = any(SYNCREP_CANCEL.search(n) for n in self.notices)
        self.done("info" if unsure else "ok", end, key, {"token": token})
        for p in pending:
            if end == "rollback":
                self.done("fail", p[0], p[1], dict(p[2], err="rolled back"))
            elif unsure:
                self.done("info", p[0], p[1], dict(p[2], err="commit not confirmed by the synchronous standby"))
            else:
                self.done("ok", p[0], p[1], p[2])

    def run(self):
        stopfile = os.path.join(self.cfg["dir"], "stop")
        while not self.stop and not os.path.exists(stopfile):
            try:
                self.episode()
            except Unknown:
                self.lost()
            except psycopg.Error:
                # Could not connect for a long while: try again.
                self.lost()
                time.sleep(0.5)
        self.rec.close()


def main():
    cfg = json.load(open(sys.argv[1]))
    w = Worker(cfg, int(sys.argv[2]), int(sys.argv[3]))

    def on_term(*_):
        w.stop = True
    signal.signal(signal.SIGTERM, on_term)
    w.run()


if __name__ == "__main__":
    main()
