-- Incident 1 of doc/incidents.md: the hourly digest.
--
-- A chat service's workers run the hourly digest job only after
-- SET lock:digest <worker> NX PX 30000 answers OK; their finally block runs
-- DEL lock:digest.  W1 takes the lock at 09:00:00 and freezes for 50 s; its
-- lease runs out at 09:00:30.  W2 gets the lock at 09:00:31.  W1 wakes at
-- 09:00:50, sends its digest and runs its finally.  W3 tries at 09:00:55.
-- The team wants W3 refused at 09:00:55, while W2 is still working.
--
-- today:      the incident's Redis lock.  Redis is modelled, not run: redis() in
--             test/lib/timeline.sql (SET NX PX, DEL) over a table, with PX
--             expiry read from the lease clock.  The model is faithful to
--             what matters here: DEL deletes the key whoever set it.
-- with fence: a 30 s lease, fence_try_lease('lock:digest', '30 s'); W1 checks
--             fence_assert_current right before its send, and its finally
--             releases only its own token: fence_release('lock:digest', 33).
--
-- How it is replayed (fresh database per variant, one session per worker,
-- virtual clock): test/lib/timeline.sql.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
\i :abs_srcdir/test/lib/timeline.sql
\set ECHO all

SELECT start('hourly_digest', 'The hourly digest', '2025-03-03',
	intro => 'Workers send the hourly digest only while they hold lock:digest, a 30-second lock. '
		'W1 takes it and freezes for 50 s; W2 takes it over when it runs out; then W1 wakes up, '
		'sends anyway and, in its finally block, deletes the lock - which by now is W2''s.',
	lesson => 'A lock that any holder can delete is not a lock: W1''s DEL freed W2''s lock and let W3 in. '
		'With fence, release is compare-and-delete on the token, so W1''s stale release does nothing, '
		'and fence_assert_current stops its send.');

INSERT INTO script (at, worker, action, today, fenced) VALUES
	('09:00:00', 'W1', 'takes the lock (then freezes 50 s)',
		$$SELECT redis('SET lock:digest W1 NX PX 30000')$$,
		$$SELECT set_token(fence_try_lease('lock:digest', '30 s'))$$),
	('09:00:31', 'W2', 'takes the lock (W1''s ran out at 09:00:30)',
		$$SELECT redis('SET lock:digest W2 NX PX 30000')$$,
		$$SELECT set_token(fence_try_lease('lock:digest', '30 s'))$$),
	('09:00:50', 'W1', 'wakes, sends its digest',
		$$SELECT send('hourly digest')$$,
		$$SELECT fence_assert_current('lock:digest', my_token());
		  SELECT send('hourly digest')$$),
	('09:00:50', 'observer', 'who holds lock:digest now?',
		$$SELECT redis('GET lock:digest')$$,
		$$SELECT a.application_name || ' (token ' || l.token || ')'
		    FROM fence_leases l JOIN pg_stat_activity a USING (pid)
		   WHERE l.key = 'lock:digest' AND l.live$$),
	('09:00:50', 'W1', 'finally: frees the lock',
		$$SELECT redis('DEL lock:digest')$$,
		$$SELECT fence_release('lock:digest', my_token())$$),
	('09:00:55', 'W3', 'takes the lock (W2 still working)',
		$$SELECT redis('SET lock:digest W3 NX PX 30000')$$,
		$$SELECT set_token(fence_try_lease('lock:digest', '30 s'))$$),
	('09:00:55', 'observer', 'who holds lock:digest now?',
		$$SELECT redis('GET lock:digest')$$,
		$$SELECT a.application_name || ' (token ' || l.token || ')'
		    FROM fence_leases l JOIN pg_stat_activity a USING (pid)
		   WHERE l.key = 'lock:digest' AND l.live$$);


-- When a worker is frozen (for the pictures; the script leaves the gap).
SELECT pause('W1', '09:00:00', '09:00:50', 'frozen 50 s');

SELECT * FROM play();

-- What went out, and the outcomes doc/incidents.md states.
SELECT * FROM rows('SELECT at, worker, what FROM sent ORDER BY n');

INSERT INTO verdict (side, claim, ok) VALUES
	('today', 'W2 gets the lock at 09:00:31 while W1 is frozen',
		outcome('today', '09:00:31', 'W2') = 'OK'),
	('today', 'W1''s DEL at 09:00:50 deletes W2''s lock',
		outcome('today', '09:00:50', 'observer') = 'W2'
		AND outcome('today', '09:00:50', 'W1', 'finally%') = '1'),
	('today', 'W3 gets the lock at 09:00:55 while W2 is still working',
		outcome('today', '09:00:55', 'W3') = 'OK'),
	('today', 'W1''s digest went out while W2 held the lock',
		ask('today', $$SELECT count(*) FROM sent WHERE worker = 'W1'$$) = '1'),
	('with fence', 'W1 gets token 33 at 09:00:00, W2 token 34 at 09:00:31',
		outcome('fenced', '09:00:00', 'W1') = '33' AND outcome('fenced', '09:00:31', 'W2') = '34'),
	('with fence', 'fence_assert_current stops W1''s send at 09:00:50 (LF002)',
		outcome('fenced', '09:00:50', 'W1', '%sends%') LIKE 'ERROR LF002:%'
		AND ask('fenced', 'SELECT count(*) FROM sent') = '0'),
	('with fence', 'W1''s fence_release(''lock:digest'', 33) is false',
		outcome('fenced', '09:00:50', 'observer') = 'W2 (token 34)'
		AND outcome('fenced', '09:00:50', 'W1', 'finally%') = 'f'),
	('with fence', 'W3 is refused at 09:00:55; W2 still holds token 34',
		outcome('fenced', '09:00:55', 'W3') = 'NULL'
		AND outcome('fenced', '09:00:55', 'observer') = 'W2 (token 34)');

SELECT side, claim, ok FROM verdict ORDER BY n;

SELECT finish();
