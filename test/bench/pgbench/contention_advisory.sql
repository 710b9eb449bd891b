-- Contention: every client waits for the same advisory lock, then unlocks.
SELECT pg_advisory_lock(1::bigint);
SELECT pg_advisory_unlock(1::bigint);
