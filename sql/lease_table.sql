-- The shared lease table: capacity (fence.max_leases), and reclaiming of
-- released and expired entries when it runs out of free slots.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

SHOW fence.max_leases;
SELECT fence_set_clock('2024-06-01 00:00:00+00') IS NOT NULL AS clock_set;

-- Fill every slot that other live leases leave free.
SELECT current_setting('fence.max_leases')::int
       - (SELECT count(*) FROM fence_leases WHERE live) AS free \gset
SELECT count(fence_try_lease('table:' || i, '1 minute', 'filler')) = :free AS filled
  FROM generate_series(1, :free) AS i;

-- Full of live leases: the next grant fails, and takes no token.
SELECT fence_advance_tokens(0)::text::bigint AS before_full \gset
SELECT fence_try_lease('table:more', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('table:more', '1 minute', '0', 'W1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_tokens(0)::text::bigint - :before_full AS tokens_taken_by_refused_grants;
-- Re-acquiring a lease one holds needs no new slot.
SELECT fence_try_lease('table:1', '1 minute', 'filler') IS NOT NULL AS reacquired;

-- A released entry is reclaimed for the next grant.
SELECT fence_release('table:1', fence_try_lease('table:1', '1 minute', 'filler'));
SELECT fence_try_lease('table:more', '1 minute') IS NOT NULL AS granted_after_release;
SELECT fence_try_lease('table:more2', '1 minute');
\echo :LAST_ERROR_SQLSTATE

-- So are expired ones.
SELECT fence_advance_clock('1 minute') IS NOT NULL AS all_expired;
SELECT fence_try_lease('table:more2', '1 minute') IS NOT NULL AS granted_after_expiry;
SELECT count(*) FILTER (WHERE live) AS live, count(*) < :free AS some_reclaimed
  FROM fence_leases WHERE key LIKE 'table:%';

-- Clean up.
SELECT count(*) >= 0 AS cleaned
  FROM generate_series(1, :free) AS i, fence_break('table:' || i) AS t;
SELECT fence_release('table:more', fence_try_lease('table:more', '1 minute'));
SELECT fence_break('table:more2') IS NOT NULL AS broke_more2;
SELECT count(*) AS left_over FROM fence_leases WHERE key LIKE 'table:%';
SELECT fence_set_clock(NULL) IS NOT NULL AS clock_cleared;
