-- Infinite intervals (PostgreSQL 17 and later) as durations.  'infinity' is
-- the longest duration there is and '-infinity' the most negative, judged
-- by each argument's own rules: an infinite TTL is over fence.max_ttl, an
-- infinite timeout is no limit at all (lock_timeout included), the clock
-- cannot move to the end of time, a breaker's durations are out of range.
-- Before 17 the test stops here (expected/intervals_infinite_1.out).
SELECT current_setting('server_version_num')::int < 170000 AS before_17 \gset
\if :before_17
\quit
\endif
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;

-- TTLs: rejected, as the finite values past each end would be.
SELECT fence_try_lease('inf:k', 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('inf:k', '-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease(7, 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_permit('inf:p', 2, 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('inf:k', '1 minute') AS t \gset
SELECT fence_renew('inf:k', :t, 'infinity');
\echo :LAST_ERROR_SQLSTATE
-- Nothing changed: the lease is held with its token.
SELECT fence_lease_status('inf:k', :t) AS status;

-- Timeouts: '-infinity' is negative.
SELECT fence_lease('inf:k2', '1 minute', '-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_wait_lease_end('inf:k', :t, '-infinity');
\echo :LAST_ERROR_SQLSTATE
-- 'infinity' on a free key: granted at once.
SELECT fence_lease('inf:k2', '1 minute', 'infinity') AS t2 \gset
SELECT :t2 > 0 AS granted;

-- 'infinity' on a key another session holds: the wait has no limit, so
-- lock_timeout does not end it (statement_timeout does, 57014); without a
-- timeout of its own the same wait ends at lock_timeout (55P03).
SELECT dblink_connect('inf_w1', 'dbname=' || current_database());
SELECT w1 AS held_token FROM dblink('inf_w1',
	'SELECT fence_try_lease(''inf:held'', ''1 minute'')::bigint') AS r(w1 bigint) \gset
SELECT :held_token > 0 AS other_holds;
SET lock_timeout = '50ms';
SET statement_timeout = '400ms';
SELECT fence_lease('inf:held', '1 minute', 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('inf:held', '1 minute');
\echo :LAST_ERROR_SQLSTATE
RESET statement_timeout;
RESET lock_timeout;
-- The watchdog's wait: no limit either.
SET statement_timeout = '200ms';
SELECT fence_wait_lease_end('inf:held', :held_token, 'infinity');
\echo :LAST_ERROR_SQLSTATE
RESET statement_timeout;
SELECT dblink_disconnect('inf_w1');

-- The virtual clock: not to the end of time, and never backwards.
SELECT fence_set_clock('2026-06-01 00:00:00+00') IS NOT NULL AS clock_set;
SELECT fence_advance_clock('infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_clock('-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_now() = '2026-06-01 00:00:00+00' AS clock_unmoved;
SELECT fence_set_clock(NULL) IS NOT NULL AS clock_real;

-- Breakers: out of range, or not greater than zero.
SELECT * FROM fence_breaker_allow('inf:b', open_for => 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_breaker_allow('inf:b', open_for => '-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM fence_breaker_allow('inf:b', probe_ttl => 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS breakers FROM fence_breakers WHERE breaker = 'inf:b';

SELECT fence_release('inf:k', :t);
SELECT fence_release('inf:k2', :t2);
