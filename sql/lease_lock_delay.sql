-- fence.lock_delay: a lease that ends without a release (it expires, or its
-- session ends while holding it) keeps its key from everyone, its old
-- holder included, until its end plus the delay it was granted with.  A
-- release, a DISCARD ALL or a break ends a lease outright.  On the virtual
-- clock, so every boundary is exact.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;
SET TimeZone = 'UTC';

-- Off by default; bad values are refused and change nothing.  (SQLSTATEs
-- only: the range message differs between PostgreSQL versions.)
SHOW fence.lock_delay;
\set VERBOSITY sqlstate
SET fence.lock_delay = '-1s';
SET fence.lock_delay = 'soon';
SET fence.lock_delay = '30d';
\set VERBOSITY default
SHOW fence.lock_delay;

-- fence.max_lock_delay (a superuser's setting, 1 minute by default) bounds
-- it when a lease is taken: a longer delay is refused then, in every form,
-- and nothing is granted.
SHOW fence.max_lock_delay;
SET fence.lock_delay = '2min';
SELECT fence_try_lease('ld:too-long', '10 seconds');
\set VERBOSITY terse
SELECT fence_lease('ld:too-long', '10 seconds', owner => 'x');
SELECT fence_try_permit('ld:too-long', 2, '10 seconds');
\set VERBOSITY default
SELECT count(*) AS granted FROM fence_leases WHERE key = 'ld:too-long';
SET fence.max_lock_delay = '2min';
SELECT fence_release('ld:too-long', fence_try_lease('ld:too-long', '10 seconds')) AS granted_within_bound;
-- The tests below take delays of up to an hour.
SET fence.max_lock_delay = '1h';
RESET fence.lock_delay;

SELECT fence_set_clock('2024-05-01 09:00:00+00') IS NOT NULL AS clock_set;

-- Tokens relative to the first one taken here, so the output does not
-- depend on what ran before.
CREATE TEMP TABLE toks (name text PRIMARY KEY, token fence_token);
CREATE FUNCTION pg_temp.keep(n text, t fence_token) RETURNS bool
	LANGUAGE sql AS $$ INSERT INTO toks VALUES (n, t) RETURNING t IS NOT NULL $$;
CREATE FUNCTION pg_temp.tok(n text) RETURNS fence_token
	LANGUAGE sql AS $$ SELECT token FROM toks WHERE name = n $$;
CREATE FUNCTION pg_temp.free_at(k text) RETURNS TABLE (status text, live bool, expires_at timestamptz)
	LANGUAGE sql AS $$ SELECT fence_lease_status(k, token), live, expires_at
	                     FROM fence_leases WHERE key = k ORDER BY token DESC LIMIT 1 $$;

-- 1. Expiry.  Owner a takes the lease with a 10 s delay and a 30 s TTL.
-- The delay is the lease's, fixed when it is granted: resetting the
-- setting afterwards changes nothing for it.
SET fence.lock_delay = '10s';
SELECT pg_temp.keep('a', fence_try_lease('ld:expire', '30 seconds', owner => 'a')) AS a_granted;
RESET fence.lock_delay;
SELECT fence_advance_clock('30 seconds') IS NOT NULL AS at_09_00_30;
SELECT * FROM pg_temp.free_at('ld:expire');
-- From 09:00:30 to 09:00:39.999 nobody gets the key, not even a itself ...
SELECT fence_try_lease('ld:expire', '30 seconds', owner => 'b') IS NULL AS b_refused_at_30s;
SELECT fence_try_lease('ld:expire', '30 seconds', owner => 'a') IS NULL AS a_refused_at_30s;
SELECT fence_advance_clock('9.999 seconds') IS NOT NULL AS at_09_00_39_999;
SELECT fence_try_lease('ld:expire', '30 seconds', owner => 'b') IS NULL AS b_refused_at_39_999s;
-- ... a blocking ask waits no longer than its timeout, and says so ...
SELECT fence_lease('ld:expire', '30 seconds', timeout => '10 ms', owner => 'b');
\echo :LAST_ERROR_SQLSTATE
-- ... and at 09:00:40 b is granted, with a larger token.
SELECT fence_advance_clock('0.001 seconds') IS NOT NULL AS at_09_00_40;
SELECT pg_temp.keep('b', fence_try_lease('ld:expire', '30 seconds', owner => 'b')) AS b_granted;
SELECT pg_temp.tok('b') > pg_temp.tok('a') AS b_token_larger,
       fence_lease_status('ld:expire', pg_temp.tok('a')) AS a_status;
-- b took the lease with no delay: when it expires, the key is free at once.
SELECT fence_advance_clock('30 seconds') IS NOT NULL AS at_09_01_10;
SELECT fence_try_lease('ld:expire', '30 seconds', owner => 'c') IS NOT NULL AS c_granted_at_expiry;

-- 2. A holder that asks again while it holds the lease keeps it, and the
-- larger of the two delays.
SET fence.lock_delay = '5s';
SELECT pg_temp.keep('d', fence_try_lease('ld:extend', '10 seconds', owner => 'd')) AS d_granted;
SET fence.lock_delay = '20s';
SELECT fence_try_lease('ld:extend', '10 seconds', owner => 'd') = pg_temp.tok('d') AS d_same_token;
SET fence.lock_delay = '1s';
SELECT fence_try_lease('ld:extend', '10 seconds', owner => 'd') = pg_temp.tok('d') AS d_same_token;
RESET fence.lock_delay;
SELECT fence_advance_clock('29.999 seconds') IS NOT NULL AS at_09_01_39_999;
SELECT fence_try_lease('ld:extend', '10 seconds', owner => 'e') IS NULL AS e_refused_in_20s_delay;
SELECT fence_advance_clock('0.001 seconds') IS NOT NULL AS at_09_01_40;
SELECT fence_try_lease('ld:extend', '10 seconds', owner => 'e') IS NOT NULL AS e_granted;

-- 3. A release ends the lease outright: no delay.
SET fence.lock_delay = '1h';
SELECT pg_temp.keep('f', fence_try_lease('ld:release', '10 seconds', owner => 'f')) AS f_granted;
SELECT fence_release('ld:release', pg_temp.tok('f')) AS f_released;
SELECT fence_try_lease('ld:release', '10 seconds', owner => 'g') IS NOT NULL AS g_granted_at_once;

-- 4. fence_break ends a lease in its delay too: the administrator's way
-- out of a delay set too long.
SELECT pg_temp.keep('h', fence_try_lease('ld:break', '10 seconds', owner => 'h')) AS h_granted;
RESET fence.lock_delay;
SELECT fence_advance_clock('10 seconds') IS NOT NULL AS at_09_01_50;
SELECT fence_try_lease('ld:break', '10 seconds', owner => 'i') IS NULL AS i_refused_in_delay;
SELECT fence_break('ld:break') = pg_temp.tok('h') AS broke_h;
SELECT fence_try_lease('ld:break', '10 seconds', owner => 'i') IS NOT NULL AS i_granted_after_break;

-- 5. Permits.  Two permits, both taken with a 10 s delay; one is released,
-- the other expires.  The expired one stays out of use for its delay.
SET fence.lock_delay = '10s';
SELECT pg_temp.keep('p1', fence_try_permit('ld:permits', 2, '10 seconds', owner => 'p1')) AS p1_granted;
SELECT pg_temp.keep('p2', fence_try_permit('ld:permits', 2, '10 seconds', owner => 'p2')) AS p2_granted;
RESET fence.lock_delay;
SELECT fence_release('ld:permits', pg_temp.tok('p1')) AS p1_released;
SELECT fence_advance_clock('10 seconds') IS NOT NULL AS at_09_02_00;
SELECT fence_try_permit('ld:permits', 2, '10 seconds', owner => 'p3') IS NOT NULL AS p3_granted;
SELECT fence_try_permit('ld:permits', 2, '10 seconds', owner => 'p4') IS NULL AS p4_refused;
-- A key in its delay cannot change its number of permits either.
SELECT fence_try_lease('ld:permits', '10 seconds', owner => 'p4');
SELECT fence_advance_clock('10 seconds') IS NOT NULL AS at_09_02_10;
-- p2's delay and p3's lease end together: two permits free.
SELECT fence_try_permit('ld:permits', 2, '10 seconds', owner => 'p4') IS NOT NULL AS p4_granted;
SELECT fence_try_permit('ld:permits', 2, '10 seconds', owner => 'p5') IS NOT NULL AS p5_granted;
SELECT count(*) AS permit_entries FROM fence_leases WHERE key = 'ld:permits';

-- 6. A session that ends while it holds a session lease and a transaction
-- lease: both are left expired as of its end, and their keys wait out the
-- delay.  The same session without a delay frees them at once.
SELECT dblink_connect('ld_other',
	format('host=%s port=%s dbname=%s',
	       quote_literal(split_part(current_setting('unix_socket_directories'), ',', 1)),
	       current_setting('port'), quote_literal(current_database())));
SELECT pid AS other_pid FROM dblink('ld_other', 'SELECT pg_backend_pid()') AS t(pid int) \gset
SELECT dblink_exec('ld_other', $$SET fence.lock_delay = '15s'$$);
SELECT ok FROM dblink('ld_other', $$SELECT fence_try_lease('ld:session', '1 hour') IS NOT NULL$$) AS t(ok bool);
SELECT dblink_exec('ld_other', 'BEGIN');
SELECT ok FROM dblink('ld_other', $$SELECT fence_try_xact_lease('ld:xact', '1 hour') IS NOT NULL$$) AS t(ok bool);
SELECT key, scope, live FROM fence_leases WHERE key IN ('ld:session', 'ld:xact') ORDER BY key;
SELECT pg_terminate_backend(:other_pid, 10000) AS terminated;
SELECT dblink_disconnect('ld_other');
-- 09:02:10: both ended with the session, unreleased.
SELECT key, scope, live, pid, expires_at, fence_lease_status(key, token) AS status
  FROM fence_leases WHERE key IN ('ld:session', 'ld:xact') ORDER BY key;
SELECT fence_try_lease('ld:session', '10 seconds', owner => 'j') IS NULL AS session_key_refused,
       fence_try_lease('ld:xact', '10 seconds', owner => 'j') IS NULL AS xact_key_refused;
SELECT fence_advance_clock('14.999 seconds') IS NOT NULL AS at_09_02_24_999;
SELECT fence_try_lease('ld:session', '10 seconds', owner => 'j') IS NULL AS session_key_refused;
SELECT fence_advance_clock('0.001 seconds') IS NOT NULL AS at_09_02_25;
SELECT fence_try_lease('ld:session', '10 seconds', owner => 'j') IS NOT NULL AS session_key_granted,
       fence_try_lease('ld:xact', '10 seconds', owner => 'j') IS NOT NULL AS xact_key_granted;

-- Without a delay, the same end releases: the key is free at once.
SELECT dblink_connect('ld_other',
	format('host=%s port=%s dbname=%s',
	       quote_literal(split_part(current_setting('unix_socket_directories'), ',', 1)),
	       current_setting('port'), quote_literal(current_database())));
SELECT pid AS other_pid FROM dblink('ld_other', 'SELECT pg_backend_pid()') AS t(pid int) \gset
SELECT ok FROM dblink('ld_other', $$SELECT fence_try_lease('ld:nodelay', '1 hour') IS NOT NULL$$) AS t(ok bool);
SELECT pg_terminate_backend(:other_pid, 10000) AS terminated;
SELECT dblink_disconnect('ld_other');
SELECT count(*) AS nodelay_entries FROM fence_leases WHERE key = 'ld:nodelay';
SELECT fence_try_lease('ld:nodelay', '10 seconds', owner => 'k') IS NOT NULL AS nodelay_key_granted;

-- 7. DISCARD ALL and a committed transaction are requests to end the hold:
-- they release, whatever the delay.
SELECT dblink_connect('ld_other',
	format('host=%s port=%s dbname=%s',
	       quote_literal(split_part(current_setting('unix_socket_directories'), ',', 1)),
	       current_setting('port'), quote_literal(current_database())));
SELECT dblink_exec('ld_other', $$SET fence.max_lock_delay = '1h'$$);
SELECT dblink_exec('ld_other', $$SET fence.lock_delay = '1h'$$);
SELECT ok FROM dblink('ld_other', $$SELECT fence_try_lease('ld:discard', '1 hour') IS NOT NULL$$) AS t(ok bool);
SELECT dblink_exec('ld_other', 'BEGIN');
SELECT ok FROM dblink('ld_other', $$SELECT fence_try_xact_lease('ld:commit', '1 hour') IS NOT NULL$$) AS t(ok bool);
SELECT dblink_exec('ld_other', 'COMMIT');
SELECT dblink_exec('ld_other', 'DISCARD ALL');
SELECT fence_try_lease('ld:discard', '10 seconds', owner => 'l') IS NOT NULL AS discard_key_granted,
       fence_try_lease('ld:commit', '10 seconds', owner => 'l') IS NOT NULL AS commit_key_granted;

-- 8. A session that waits for the key is served when the delay ends: the
-- clock's move wakes it.
SET fence.lock_delay = '10s';
SELECT pg_temp.keep('m', fence_try_lease('ld:wait', '10 seconds', owner => 'm')) AS m_granted;
RESET fence.lock_delay;
SELECT fence_advance_clock('10 seconds') IS NOT NULL AS at_09_02_35;
SELECT dblink_send_query('ld_other',
	$$SELECT fence_lease('ld:wait', '10 seconds', timeout => '60 seconds', owner => 'n') IS NOT NULL$$);
DO $$
BEGIN
	FOR i IN 1 .. 300 LOOP
		EXIT WHEN EXISTS (SELECT FROM fence_lease_waiters WHERE key = 'ld:wait');
		PERFORM pg_sleep(0.1);
	END LOOP;
END $$;
SELECT key, queue_position FROM fence_lease_waiters WHERE key = 'ld:wait';
SELECT fence_advance_clock('10 seconds') IS NOT NULL AS at_09_02_45;
SELECT granted FROM dblink_get_result('ld_other') AS t(granted bool);
SELECT owner, fence_lease_status(key, token) AS status FROM fence_leases WHERE key = 'ld:wait';
SELECT dblink_disconnect('ld_other');

-- Clean up.
SELECT count(*) > 0 AS broke_all FROM (SELECT fence_break(key) FROM fence_leases
	WHERE key LIKE 'ld:%' GROUP BY key) AS b;
SELECT count(*) AS left_over FROM fence_leases WHERE key LIKE 'ld:%';
RESET fence.max_lock_delay;
SELECT fence_set_clock(NULL) IS NOT NULL AS clock_cleared;
