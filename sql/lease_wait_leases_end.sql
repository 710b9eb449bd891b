-- fence_wait_leases_end: what it returns at once, expiry on the virtual
-- clock, and bad input.  Its waits (woken by a release or a break of one
-- lease of the set, not by a lease outside it) are in the isolation suite
-- (lease_wait_leases_end).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

SELECT fence_try_lease('many:a', '30 seconds')::bigint AS a,
       fence_try_lease('many:b', '30 seconds')::bigint AS b,
       fence_try_lease(4343, '30 seconds')::bigint AS c \gset

-- Every lease held, with a timeout that has passed: no row, nothing changes.
SELECT * FROM fence_wait_leases_end(ARRAY['many:a', 'many:b', '4343'],
                                    ARRAY[:a, :b, :c]::fence_token[], timeout => '0');
SELECT * FROM fence_wait_leases_end(ARRAY['many:a', 'many:b'],
                                    ARRAY[:a, :b]::fence_token[], timeout => '20 ms');
SELECT count(*) AS held FROM fence_leases WHERE key IN ('many:a', 'many:b', '4343');

-- A lease of the set that is not held: returned at once, alone, in the
-- order given; a bigint key is its decimal text.
SELECT * FROM fence_wait_leases_end(ARRAY['many:a', 'many:never', 'many:b'],
                                    ARRAY[:a, 7, :b]::fence_token[]);
SELECT fence_release(4343, :c);
SELECT key, status FROM fence_wait_leases_end(ARRAY['many:a', '4343', 'many:b'],
                                              ARRAY[:a, :c, :b]::fence_token[]);
-- Another token of a held key, and a bigint array of tokens.
SELECT key, token = :a + 100 AS other, status
  FROM fence_wait_leases_end(ARRAY['many:a'], ARRAY[:a + 100]);
-- Every lease that has ended, each once per place it is named.
SELECT fence_release('many:a', :a);
SELECT key, status FROM fence_wait_leases_end(ARRAY['many:a', 'many:b', 'many:a'],
                                              ARRAY[:a, :b, :a]::fence_token[]);
SELECT fence_release('many:b', :b);

-- Expiry on the virtual clock: not a moment before the TTL, then at once.
SELECT fence_set_clock('2024-01-01 09:00:00+00') IS NOT NULL AS clock_set;
SELECT fence_try_lease('many:v1', '10 seconds')::bigint AS v1,
       fence_try_lease('many:v2', '20 seconds')::bigint AS v2 \gset
SELECT fence_advance_clock('9 seconds') IS NOT NULL AS moved;
SELECT * FROM fence_wait_leases_end(ARRAY['many:v1', 'many:v2'],
                                    ARRAY[:v1, :v2]::fence_token[], timeout => '10 ms');
SELECT fence_advance_clock('1 second') IS NOT NULL AS moved;
SELECT key, status FROM fence_wait_leases_end(ARRAY['many:v1', 'many:v2'],
                                              ARRAY[:v1, :v2]::fence_token[]);
-- Taken over after it expired: the old token reads superseded.
SELECT fence_try_lease('many:v1', '10 seconds') IS NOT NULL AS taken_over;
SELECT key, status FROM fence_wait_leases_end(ARRAY['many:v1', 'many:v2'],
                                              ARRAY[:v1, :v2]::fence_token[]);
SELECT fence_advance_clock('20 seconds') IS NOT NULL AS moved;
SELECT key, status FROM fence_wait_leases_end(ARRAY['many:v2'], ARRAY[:v2]::fence_token[]);
SELECT fence_set_clock(NULL) IS NOT NULL AS real_time;
SELECT fence_break('many:v1') IS NOT NULL AS broken, fence_break('many:v2') IS NOT NULL AS broken;

-- Bad input: a clear error (SQLSTATE, detail, hint), and nothing changes.
SELECT fence_try_lease('many:a', '30 seconds')::bigint AS a \gset
-- (each followed by its SQLSTATE)
SELECT * FROM fence_wait_leases_end(ARRAY['many:a', 'many:b'], ARRAY[:a]::fence_token[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(ARRAY[]::text[], ARRAY[]::fence_token[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(NULL, ARRAY[:a]::fence_token[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(ARRAY['many:a'], NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(ARRAY['many:a', NULL], ARRAY[:a, 1]::fence_token[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(ARRAY['many:a', 'many:b'], ARRAY[:a, NULL]::fence_token[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(ARRAY[['many:a'], ['many:b']], ARRAY[[:a], [1]]::fence_token[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(ARRAY['many:a', ''], ARRAY[:a, 1]::fence_token[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(ARRAY['many:a', repeat('k', 201)], ARRAY[:a, 1]::fence_token[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(ARRAY['many:a'], ARRAY[:a]::fence_token[], timeout => '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(ARRAY['many:a'], ARRAY[:a]::fence_token[], timeout => '1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_wait_leases_end(array_fill('many:a'::text, ARRAY[10001]),
                                    array_fill(:a::fence_token, ARRAY[10001]));
\echo :LAST_ERROR_SQLSTATE
-- The limit itself is accepted.
SELECT count(*) FROM fence_wait_leases_end(array_fill('many:a'::text, ARRAY[10000]),
                                           array_fill(:a::fence_token, ARRAY[10000]),
                                           timeout => '0');
SELECT fence_lease_status('many:a', :a);
SELECT fence_release('many:a', :a);
