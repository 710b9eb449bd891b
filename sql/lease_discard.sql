-- DISCARD ALL ends what the session held, as it releases advisory locks:
-- its session leases and permits are released (free for the next taker at
-- once, queued waiters served) and its tokens are forgotten, so that the
-- next client of a session pooler (PgBouncer's server_reset_query) starts
-- as on a new connection.  Detached leases belong to their owner name and
-- stay.  The same through a real PgBouncer: test/t/007_pgbouncer.pl.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;

-- DISCARD ALL drops temporary objects, so nothing here is temporary:
-- tokens are kept in psql variables and shown only as comparisons.
CREATE TABLE discard_rows (id int PRIMARY KEY, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO discard_rows VALUES (1);
-- The trigger names the session lease, so that its token is the one in
-- effect for these writes (not the most recent one this session took).
SELECT fence_protect('discard_rows', lease => 'discard:s', require_token => true);
CREATE FUNCTION discard_held() RETURNS TABLE (key text, scope text, owner text, mine bool)
	LANGUAGE sql AS $$ SELECT key, scope, owner, pid = pg_backend_pid() FROM fence_leases
	                    WHERE key LIKE 'discard:%' AND live ORDER BY key, token $$;

-- A second session, to wait for the lease and take it.
SELECT dblink_connect('discard_other',
	format('host=%s port=%s dbname=%s',
	       quote_literal(split_part(current_setting('unix_socket_directories'), ',', 1)),
	       current_setting('port'), quote_literal(current_database())));

-- This session holds a session lease, a permit, a detached lease and an
-- advisory lock, and the session lease's token is in effect.
SELECT fence_try_lease('discard:s', '1 hour') AS s_tok \gset
SELECT fence_try_permit('discard:p', 2, '1 hour') AS p_tok \gset
SELECT fence_try_lease('discard:d', '1 hour', owner => 'keeper') AS d_tok \gset
SELECT fence_try_lease('discard:s', '1 hour')::text = :'s_tok' AS s_tok_is_held;
SELECT pg_try_advisory_lock(4711) AS advisory_locked;
SELECT * FROM discard_held();
SELECT fence_current_token('discard:s')::text = :'s_tok' AS s_in_effect,
       fence_current_token('discard:p')::text = :'p_tok' AS p_in_effect,
       fence_current_token('discard:d')::text = :'d_tok' AS d_in_effect;
UPDATE discard_rows SET id = 1 RETURNING fence::text = :'s_tok' AS written_with_s_tok;

-- The other session queues up for the session lease.
SELECT dblink_send_query('discard_other',
	$$SELECT fence_lease('discard:s', '1 hour', timeout => '30 seconds') IS NOT NULL$$);
DO $$
BEGIN
	FOR i IN 1 .. 300 LOOP
		EXIT WHEN EXISTS (SELECT FROM fence_lease_waiters WHERE key = 'discard:s');
		PERFORM pg_sleep(0.1);
	END LOOP;
END $$;
SELECT key, queue_position FROM fence_lease_waiters WHERE key = 'discard:s';

-- The other forms of DISCARD leave leases and tokens alone, as they leave
-- advisory locks.
DISCARD PLANS;
DISCARD SEQUENCES;
DISCARD TEMP;
SELECT * FROM discard_held();
SELECT count(*) AS advisory_locks FROM pg_locks
 WHERE locktype = 'advisory' AND pid = pg_backend_pid();
SELECT fence_current_token('discard:s')::text = :'s_tok' AS s_in_effect;

-- DISCARD ALL refuses to run in a transaction block, and then changes
-- nothing.  That is also why no fence_use_token (which lasts for its
-- transaction) and no transaction lease can be in effect when it runs.
BEGIN;
SELECT fence_use_token('5');
SELECT fence_current_token()::text AS current;
DISCARD ALL;
ROLLBACK;
SELECT * FROM discard_held();

-- DISCARD ALL.
DISCARD ALL;
-- The queued session got the lease at once ...
SELECT * FROM dblink_get_result('discard_other') AS t(granted bool);
SELECT * FROM dblink_get_result('discard_other') AS t(granted bool);
-- ... so of this session's leases only the detached one is left, and the
-- advisory lock is gone too.
SELECT * FROM discard_held();
SELECT count(*) AS advisory_locks FROM pg_locks
 WHERE locktype = 'advisory' AND pid = pg_backend_pid();
SELECT fence_lease_status('discard:s', :'s_tok') AS s_status,
       fence_lease_status('discard:p', :'p_tok') AS p_status,
       fence_lease_status('discard:d', :'d_tok') AS d_status;
-- No token is in effect, not even the detached lease's (the most recent
-- one this session took): a write carries none (LF003 here, as the table
-- requires one).
SELECT fence_current_token() IS NULL AS no_token,
       fence_current_token('discard:s') IS NULL AS none_for_s,
       fence_current_token('discard:d') IS NULL AS none_for_d;
UPDATE discard_rows SET id = 1 RETURNING fence::text = :'s_tok' AS written_with_s_tok;
\echo :LAST_ERROR_SQLSTATE
-- The permit is free again: both of the key's permits can be taken.
SELECT fence_try_permit('discard:p', 2, '1 hour', owner => 'p1') IS NOT NULL AS p1,
       fence_try_permit('discard:p', 2, '1 hour', owner => 'p2') IS NOT NULL AS p2;
-- The detached lease is still its owner's: released with its token.
SELECT fence_release('discard:d', :'d_tok') AS d_released;

-- Clean up.
SELECT * FROM dblink('discard_other',
	$$SELECT fence_release('discard:s', fence_current_token('discard:s'))$$) AS t(released bool);
SELECT dblink_disconnect('discard_other');
SELECT fence_break('discard:p') IS NOT NULL AS p_broken;
SELECT * FROM discard_held();
DROP TABLE discard_rows;
DROP FUNCTION discard_held();
