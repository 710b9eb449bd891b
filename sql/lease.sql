-- Leases: taking, re-taking, releasing, renewing, checking.
-- Error paths are in lease_errors, scopes and the token in effect in
-- lease_scopes, capacity in lease_table.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- Tokens are compared to a base, since other tests use the same counter.
SELECT fence_advance_tokens(0)::text::bigint AS base \gset
CREATE TEMP TABLE base AS SELECT :base AS b;
CREATE TEMP TABLE tok (name text PRIMARY KEY, t bigint);
CREATE FUNCTION pg_temp.rel(t fence_token) RETURNS bigint
	LANGUAGE sql AS $$ SELECT t::text::bigint - b FROM base $$;

-- Statistics of this database before the test, to show what it adds.
CREATE TEMP TABLE stats0 AS
	SELECT * FROM fence_stats WHERE database = current_database();

-- The virtual clock makes expiry exact.
SELECT fence_set_clock('2024-03-01 09:00:00+00');
SELECT fence_now();

-- A free key is granted at once, with a fresh token.
SELECT pg_temp.rel(fence_try_lease('lease:a', '30 seconds')) AS a;
SELECT key, pg_temp.rel(token) AS token, scope, owner, pid = pg_backend_pid() AS mine,
       granted_at, expires_at, live, waiters
  FROM fence_leases WHERE key LIKE 'lease:%' ORDER BY key;

-- The holder taking it again keeps the token and extends the expiry ...
SELECT fence_advance_clock('10 seconds');
SELECT pg_temp.rel(fence_try_lease('lease:a', '30 seconds')) AS a_again;
SELECT expires_at FROM fence_leases WHERE key = 'lease:a';
-- ... but never shortens it.
SELECT pg_temp.rel(fence_lease('lease:a', '1 second')) AS a_blocking_call;
SELECT expires_at FROM fence_leases WHERE key = 'lease:a';
-- No stacking: one release frees it.
SELECT fence_release('lease:a', fence_try_lease('lease:a', '30 seconds'));
SELECT count(*) AS rows_left FROM fence_leases WHERE key = 'lease:a';

-- Each grant takes a larger token.
SELECT pg_temp.rel(fence_try_lease('lease:b', '1 minute')) AS b;
SELECT pg_temp.rel(fence_try_lease('lease:c', '1 minute')) AS c;

-- A bigint key is the lease of its decimal text.
SELECT pg_temp.rel(fence_try_lease(4242, '1 minute')) AS int_key;
SELECT pg_temp.rel(fence_try_lease('4242', '1 minute')) AS same_as_text_key;
SELECT fence_lease_status(4242, fence_try_lease('4242', '1 minute'));
SELECT fence_release(4242, fence_try_lease('4242', '1 minute'));

-- Detached leases belong to an owner name, not to this connection.
INSERT INTO tok SELECT 'd1', pg_temp.rel(fence_try_lease('lease:d', '1 minute', owner => 'W1'));
SELECT t AS d1 FROM tok WHERE name = 'd1';
SELECT fence_try_lease('lease:d', '1 minute') AS other_holder_session;
SELECT fence_try_lease('lease:d', '1 minute', 'W2') AS other_holder_w2;
SELECT pg_temp.rel(fence_try_lease('lease:d', '2 minutes', 'W1')) AS w1_again;
SELECT key, scope, owner, pid, expires_at FROM fence_leases WHERE key = 'lease:d';

-- Status, as the lease goes from held to expired to superseded.
SELECT fence_lease_status('lease:d', (:base + t)::text::fence_token) FROM tok WHERE name = 'd1';
SELECT fence_assert_current('lease:d', (:base + t)::text::fence_token) FROM tok WHERE name = 'd1';
SELECT fence_advance_clock('2 minutes');
SELECT fence_lease_status('lease:d', (:base + t)::text::fence_token) FROM tok WHERE name = 'd1';
SELECT live FROM fence_leases WHERE key = 'lease:d';
-- An expired lease is taken over with a new token ...
INSERT INTO tok SELECT 'd2', pg_temp.rel(fence_try_lease('lease:d', '1 minute', 'W2'));
SELECT t > (SELECT t FROM tok WHERE name = 'd1') AS d2_is_larger FROM tok WHERE name = 'd2';
SELECT fence_lease_status('lease:d', (:base + t)::text::fence_token) FROM tok WHERE name = 'd1';
SELECT fence_lease_status('lease:d', (:base + t)::text::fence_token) FROM tok WHERE name = 'd2';
-- ... and the old holder's release, renewal and check all fail, changing nothing.
SELECT fence_release('lease:d', (:base + t)::text::fence_token) FROM tok WHERE name = 'd1';
SELECT fence_renew('lease:d', (:base + t)::text::fence_token, '1 minute') FROM tok WHERE name = 'd1';
\set VERBOSITY terse
SELECT fence_assert_current('lease:d', (:base + t)::text::fence_token) FROM tok WHERE name = 'd1';
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT owner, live FROM fence_leases WHERE key = 'lease:d';

-- Renewal: the current live holder gets expires_at = now + ttl (which may
-- shorten it); a renewal after expiry fails, and the holder must stop.
SELECT fence_renew('lease:d', (:base + t)::text::fence_token, '10 seconds') FROM tok WHERE name = 'd2';
SELECT expires_at FROM fence_leases WHERE key = 'lease:d';
SELECT fence_advance_clock('10 seconds');
SELECT fence_renew('lease:d', (:base + t)::text::fence_token, '10 seconds') FROM tok WHERE name = 'd2';
SELECT fence_lease_status('lease:d', (:base + t)::text::fence_token) FROM tok WHERE name = 'd2';
-- Releasing an expired lease whose token is still current works.
SELECT fence_release('lease:d', (:base + t)::text::fence_token) FROM tok WHERE name = 'd2';
SELECT fence_lease_status('lease:d', (:base + t)::text::fence_token) FROM tok WHERE name = 'd2';
SELECT fence_release('lease:d', (:base + t)::text::fence_token) AS twice FROM tok WHERE name = 'd2';
-- A released entry gives its slot back at once: older tokens of the key
-- read as released too, no longer as superseded.
SELECT fence_lease_status('lease:d', (:base + t)::text::fence_token) AS d1_after_release FROM tok WHERE name = 'd1';
-- A key the table never saw, and a token it never granted, read as released.
SELECT fence_lease_status('lease:never', '1');
SELECT fence_lease_status('lease:b', '9223372036854775807');

-- fence_break ends a lease whoever holds it and returns its token.
SELECT pg_temp.rel(fence_break('lease:b')) AS broken_b;
SELECT fence_break('lease:b') AS nothing_left;
SELECT fence_break('lease:never') AS never_held;

-- Blocking calls on a free key, or one the caller holds, return at once.
SELECT pg_temp.rel(fence_lease('lease:e', '1 minute')) AS e;
SELECT pg_temp.rel(fence_lease('lease:e', '1 minute', timeout => '0')) AS e_again;
SELECT pg_temp.rel(fence_lease('lease:f', '1 minute', '1 second', 'W1')) AS f_detached;
SELECT scope, owner FROM fence_leases WHERE key = 'lease:f';
BEGIN;
SELECT pg_temp.rel(fence_xact_lease('lease:g', '1 minute')) AS g_xact;
SELECT pg_temp.rel(fence_xact_lease('lease:g', '1 minute', '1 second')) AS g_again;
SELECT scope FROM fence_leases WHERE key = 'lease:g';
COMMIT;
SELECT count(*) AS g_after_commit FROM fence_leases WHERE key = 'lease:g';

-- A blocking call waits for another holder: here the timeout ends the wait
-- (the cross-session waits are in the isolation suite).
SELECT fence_lease('lease:f', '1 minute', timeout => '10 ms');
\echo :LAST_ERROR_SQLSTATE
SET lock_timeout = '10ms';
SELECT fence_lease('lease:f', '1 minute');
\echo :LAST_ERROR_SQLSTATE
RESET lock_timeout;
SELECT waiters FROM fence_leases WHERE key = 'lease:f';

-- What this test did, in fence_stats (grants include takeovers; renewals
-- include re-acquires by the holder; refusals include timeouts).
SELECT s.grants - coalesce(s0.grants, 0) AS grants,
       s.refusals - coalesce(s0.refusals, 0) AS refusals,
       s.takeovers - coalesce(s0.takeovers, 0) AS takeovers,
       s.releases - coalesce(s0.releases, 0) AS releases,
       s.refused_releases - coalesce(s0.refused_releases, 0) AS refused_releases,
       s.renewals - coalesce(s0.renewals, 0) AS renewals,
       s.failed_renewals - coalesce(s0.failed_renewals, 0) AS failed_renewals
  FROM fence_stats s LEFT JOIN stats0 s0 USING (database)
 WHERE s.database = current_database();

-- The clock: set, advanced, and back on real time.
SELECT fence_set_clock('2024-03-01 12:00:00+00');
SELECT fence_advance_clock('1 day 2 hours 3.5 seconds');
SELECT fence_now();
SELECT fence_set_clock(NULL) IS NOT NULL AS cleared;
SELECT abs(extract(epoch FROM fence_now() - clock_timestamp())) < 60 AS real_time;

-- Clean up what is still held.
SELECT fence_release('lease:c', fence_try_lease('lease:c', '1 minute'));
SELECT fence_release('lease:e', fence_try_lease('lease:e', '1 minute'));
SELECT fence_break('lease:f') IS NOT NULL AS broke_f;
SELECT count(*) AS left_over FROM fence_leases WHERE key LIKE 'lease:%' OR key = '4242';

-- A bigint key at either end of its range, and zero, is the lease of its
-- decimal text, as fence_leases shows and a release by the text key proves.
CREATE TEMP TABLE ends AS
SELECT k, fence_try_lease(k, '1 minute') AS t
  FROM unnest(ARRAY[-9223372036854775808, 0, 9223372036854775807]::bigint[]) k;
SELECT l.key, e.t IS NOT NULL AS granted
  FROM ends e JOIN fence_leases l ON l.key = e.k::text ORDER BY e.k;
SELECT e.k, fence_release(e.k::text, e.t) AS released_by_text FROM ends e ORDER BY e.k;
