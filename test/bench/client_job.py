"""make bench, client section: one job through the Python client (pgfence)
against the same job in hand-written SQL on the same kind of pool.

usage: client_job.py MODE CONNINFO PROCESSES SECONDS ROWS

MODE is one of
  pgfence      with fx.lease(key, ttl=30) as lease:
                   with lease.transaction() as conn: UPDATE the row
               (5 round trips: the client sends BEGIN and fence_use_token as one)
  sql          what a careful user writes by hand on the pool, without
               renewal or watchdog: fence_lease of a detached lease with an
               owner; a transaction with fence_use_token(token, key) and the
               UPDATE; fence_release by token (6 round trips)

PROCESSES worker processes (fork), each with a psycopg_pool.ConnectionPool of
its own (min_size = max_size = 2, autocommit), each on ROWS rows of its own
(distinct keys: no process waits for another's lease).  Every process works
from the moment its pool is open, but only the jobs finished between a start
and an end time common to all processes count.  Prints one line:
  rate=JOBS_PER_S jobs=N processes=P seconds=S
Every job checks that its UPDATE wrote the row; a job that did not is an
error (exit 1).
"""
import multiprocessing
import os
import random
import sys
import time

from psycopg_pool import ConnectionPool

import pgfence

TTL = 30
UPDATE = "UPDATE client_job SET v = v + 1 WHERE id = %s"
GRANT = "SELECT fence_lease(%s::text, %s::interval, NULL, owner => %s::text)::bigint"
USE = "SELECT fence_use_token(%s::bigint, %s::text)"
RELEASE = "SELECT fence_release(%s::text, %s::bigint)"


def worker(mode, conninfo, index, rows, start_at, end_at, out):
    pool = ConnectionPool(conninfo, min_size=2, max_size=2, kwargs={"autocommit": True}, open=True)
    pool.wait()
    owner = f"bench:{os.getpid()}"
    ttl = f"{TTL} seconds"
    first = index * rows + 1
    rng = random.Random(os.getpid())
    if mode == "pgfence":
        fx = pgfence.Fence(pool)

        def job(k):
            with fx.lease(f"client:{k}", ttl=TTL) as lease:
                with lease.transaction() as conn:
                    return conn.execute(UPDATE, (k,)).rowcount
    else:
        def job(k):
            key = f"client:{k}"
            with pool.connection() as conn:
                token = conn.execute(GRANT, (key, ttl, owner)).fetchone()[0]
            with pool.connection() as conn:
                try:
                    with conn.transaction():
                        conn.execute(USE, (token, key))
                        n = conn.execute(UPDATE, (k,)).rowcount
                finally:
                    conn.execute(RELEASE, (key, token))
            return n
    counted = 0
    cpu_start = cpu_end = None
    try:
        while True:
            now = time.time()
            if now >= end_at:
                cpu_end = time.process_time()
                break
            if now >= start_at and cpu_start is None:
                cpu_start = time.process_time()
            if job(first + rng.randrange(rows)) != 1:
                raise RuntimeError("a job's UPDATE wrote no row")
            if now >= start_at:
                counted += 1
    finally:
        if mode == "pgfence":
            fx.close()
        pool.close()
    out.send((counted, (cpu_end or 0.0) - (cpu_start or 0.0)))
    out.close()


def main():
    mode, conninfo, procs, secs, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    if mode not in ("pgfence", "sql"):
        sys.exit(f"client_job.py: unknown mode {mode}")
    ctx = multiprocessing.get_context("fork")
    # time to import, fork and open the pools before the counted window
    start_at = time.time() + 1.0 + 0.2 * procs
    end_at = start_at + secs
    kids = []
    for i in range(procs):
        r, w = ctx.Pipe(duplex=False)
        p = ctx.Process(target=worker, args=(mode, conninfo, i, rows, start_at, end_at, w))
        p.start()
        w.close()
        kids.append((p, r))
    total, cpu, failed = 0, 0.0, 0
    for p, r in kids:
        try:
            jobs, secs_cpu = r.recv()
            total += jobs
            cpu += secs_cpu
        except EOFError:
            failed += 1
        p.join()
        failed += p.exitcode != 0
    if failed:
        sys.exit(f"client_job.py: {failed} worker(s) failed")
    if time.time() < end_at:
        sys.exit("client_job.py: the workers ended before the window did")
    print(f"rate={total / secs:.1f} jobs={total} processes={procs} seconds={secs:g} "
          f"cpu_us={1e6 * cpu / max(total, 1):.1f}")


if __name__ == "__main__":
    main()
