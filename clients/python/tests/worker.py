"""A worker process for the multi-process tests (tests/test_processes.py).

    worker.py holder DSN KEY TTL TABLE   take the lease, write, wait for a line on
                                         stdin, then try a late write
    worker.py taker DSN KEY TTL TABLE    wait for the lease, write, release
    worker.py sleeper DSN KEY TTL        take the lease and sleep (to be killed)

Prints one line per step, flushed, for the test to read.
"""
import sys
import time

import pgfence


def say(*words):
    print(*words, flush=True)


def main():
    role, dsn, key, ttl = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    table = sys.argv[5] if len(sys.argv) > 5 else None
    with pgfence.Fence(dsn) as fx:
        if role == "sleeper":
            with fx.lease(key, ttl=ttl) as lease:
                say("holding", lease.token)
                time.sleep(3600)
        elif role == "taker":
            with fx.lease(key, ttl=ttl, wait=30) as lease:
                with lease.transaction() as conn:
                    conn.execute(f"UPDATE {table} SET result = 'done by the taker' WHERE id = 1")
                say("wrote", lease.token)
        elif role == "holder":
            try:
                with fx.lease(key, ttl=ttl) as lease:
                    with lease.transaction() as conn:
                        conn.execute(f"UPDATE {table} SET result = 'started by the holder' WHERE id = 1")
                    say("wrote", lease.token)
                    sys.stdin.readline()  # frozen (SIGSTOP) here, then resumed
                    try:
                        with lease.transaction() as conn:
                            conn.execute(f"UPDATE {table} SET result = 'late write by the holder' WHERE id = 1")
                        say("late write landed")
                    except (pgfence.LeaseLostError, pgfence.StaleTokenError) as e:
                        say("refused", type(e).__name__, getattr(e, "how", e.sqlstate))
            except pgfence.LeaseLostError as e:
                say("block raised LeaseLostError", e.how)
        else:
            raise SystemExit(f"unknown role {role}")


main()
