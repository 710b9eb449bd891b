-- fence_leases_of(key): one key's rows of fence_leases, the same columns,
-- read from the key's bucket of the lease table rather than every
-- partition.  Tokens depend on what ran before: compared, never printed.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

SELECT fence_try_lease('lookup:a', '1 min') AS ta \gset
SELECT fence_try_lease('lookup:b', '1 min', 'owner-b') AS tb \gset
SELECT fence_try_lease(4242::bigint, '1 min') AS tc \gset
SELECT fence_try_permit('lookup:p', 3, '1 min', 'owner-p1') AS p1 \gset
SELECT fence_try_permit('lookup:p', 3, '1 min', 'owner-p2') AS p2 \gset

-- The same rows as the view, key by key.
SELECT k, (SELECT count(*) FROM fence_leases_of(k)) AS rows,
       (SELECT array_agg(o::text ORDER BY o.token) FROM fence_leases_of(k) o) IS NOT DISTINCT FROM
       (SELECT array_agg(v::text ORDER BY v.token) FROM fence_leases v
         WHERE v.key = k AND v.database = current_database()) AS same_as_view
FROM (VALUES ('lookup:a'), ('lookup:b'), ('lookup:p'), ('4242'), ('lookup:none')) t (k)
ORDER BY k;
SELECT scope, owner, token = :tb AS token, live, waiters, permits
FROM fence_leases_of('lookup:b');
SELECT scope, token = :tc AS token FROM fence_leases_of(4242::bigint);
SELECT scope, owner, permits FROM fence_leases_of('lookup:p') ORDER BY token;

-- Bad keys: the errors of the other lease functions.
SELECT * FROM fence_leases_of(NULL::text);
SELECT * FROM fence_leases_of('');
SELECT count(*) FROM fence_leases_of(repeat('k', 201));

-- fence_lease_waiters_of and fence_lease_blockers_of: no one waits here, so
-- the queues are empty; the live holders are what a request would wait for
-- (test/isolation/specs/lease_waiters.spec has sessions waiting).
SELECT count(*) AS waiters FROM fence_lease_waiters_of('lookup:a');
SELECT count(*) AS waiters FROM fence_lease_waiters_of(4242::bigint);
SELECT blocking_pid = pg_backend_pid() AS me, blocked_by, owner, queue_position
  FROM fence_lease_blockers_of('lookup:a');
SELECT blocking_pid, blocked_by, owner, queue_position FROM fence_lease_blockers_of('lookup:b');
SELECT count(*) AS blockers FROM fence_lease_blockers_of(4242::bigint);
SELECT blocked_by, owner FROM fence_lease_blockers_of('lookup:p') ORDER BY owner;
SELECT count(*) AS blockers FROM fence_lease_blockers_of('lookup:none');
SELECT * FROM fence_lease_waiters_of(NULL::text);
SELECT * FROM fence_lease_blockers_of('');
SELECT count(*) FROM fence_lease_waiters_of(repeat('k', 201));

SELECT fence_release('lookup:a', :ta), fence_release('lookup:b', :tb),
       fence_release(4242::bigint, :tc), fence_release('lookup:p', :p1),
       fence_release('lookup:p', :p2);
SELECT count(*) AS after_release FROM fence_leases_of('lookup:a');
