-- Incident 5 of doc/incidents.md: the transcode scheduler.
--
-- A scheduler runs SELECT pg_try_advisory_lock(42) on a session it keeps open
-- and schedules only while it holds the lock.  Scheduler A runs BEGIN and that
-- call, which returns true at 12:00; then its process freezes with its
-- connection open.  Default settings, no pooler.  Scheduler B runs the same
-- call on its own session at 12:10, 12:20 and 12:30.  At 12:15 A wakes just
-- long enough to run COMMIT, then freezes again.  At 12:25 an operator ends
-- A's session with pg_terminate_backend (today only: with fence B has had
-- the lease since 12:10, so nobody needs to, and A's session stays open,
-- frozen, to the end).
--
-- The incident does not say what A does with its moment awake at 12:15; here it
-- writes the schedule once before its COMMIT (a scheduler that believes it
-- holds the lock schedules), so that both designs show what becomes of a
-- frozen holder's write.
--
-- today:      the incident's session-level advisory lock.  COMMIT does not end it,
--             and nothing else does while A's connection lives: B is refused
--             until the operator's real pg_terminate_backend at 12:25.
-- with fence: a session lease with a TTL, fence_try_lease(42, '10 min'),
--             which a scheduler takes or, holding it, renews with its token
--             (fence_renew(42, token, '10 min')) every 5 minutes (half its
--             TTL; the incident's 10-minute calls would let B's own lease
--             lapse), and a fenced schedule row.  A froze, so its lease ran
--             out at 12:10: B gets it then, with a higher token, and A's write
--             at 12:15 is rejected.  No operator step.
--
-- How it is replayed (fresh database per variant, one session per worker,
-- virtual clock): test/lib/timeline.sql.  A "-" in the story: the step does not
-- happen in that design (B schedules only while it holds the lock).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
\i :abs_srcdir/test/lib/timeline.sql
\set ECHO all

SELECT start('transcode', 'The transcode scheduler', '2025-03-03',
	intro => 'One transcode scheduler at a time: a scheduler keeps a session open and schedules only '
		'while it holds PostgreSQL''s session-level advisory lock 42. Scheduler A takes it and its '
		'process freezes with the connection still open; scheduler B keeps trying.',
	lesson => 'A session lock lasts as long as the session, and a frozen process keeps its session: '
		'B waits until an operator kills A. A lease with a TTL passes to B on its own when A stops '
		'renewing it, and the fence rejects whatever A writes when it wakes.');

SELECT setup($$
	CREATE TABLE schedule (id int PRIMARY KEY, scheduler text, at time, fence bigint NOT NULL);
	INSERT INTO schedule VALUES (1, NULL, NULL, 32);
$$);
SELECT setup($$ SELECT fence_protect('schedule', column_name => 'fence') $$, '{fenced}');

INSERT INTO script (at, worker, action, today, fenced) VALUES
	('12:00:00', 'A', 'BEGIN',
		$$BEGIN$$, $$BEGIN$$),
	('12:00:00', 'A', 'takes the scheduler lock (then freezes)',
		$$SELECT pg_try_advisory_lock(42)$$,
		$$SELECT fence_try_lease(42, '10 min')$$),
	('12:10:00', 'B', 'takes the scheduler lock',
		$$SELECT pg_try_advisory_lock(42)$$,
		$$SELECT fence_try_lease(42, '10 min')$$),
	('12:10:00', 'B', 'schedules',
		NULL,
		$$UPDATE schedule SET scheduler = 'B', at = '12:10' WHERE id = 1$$),
	('12:15:00', 'A', 'wakes, schedules',
		$$UPDATE schedule SET scheduler = 'A', at = '12:15' WHERE id = 1$$,
		$$UPDATE schedule SET scheduler = 'A', at = '12:15' WHERE id = 1$$),
	('12:15:00', 'A', 'COMMIT (then freezes again)',
		$$COMMIT$$, $$COMMIT$$),
	('12:15:00', 'B', 'renews its lease',
		NULL,
		$$SELECT fence_renew(42, {token:B}, '10 min')$$),
	('12:20:00', 'B', 'takes the scheduler lock',
		$$SELECT pg_try_advisory_lock(42)$$,
		$$SELECT fence_try_lease(42, '10 min')$$),
	('12:20:00', 'B', 'schedules',
		NULL,
		$$UPDATE schedule SET scheduler = 'B', at = '12:20' WHERE id = 1$$),
	('12:25:00', 'operator', 'ends A''s session: pg_terminate_backend',
		$$SELECT pg_terminate_backend({pid:A}, 5000)$$,
		NULL),
	('12:25:00', 'B', 'renews its lease',
		NULL,
		$$SELECT fence_renew(42, {token:B}, '10 min')$$),
	('12:30:00', 'B', 'takes the scheduler lock',
		$$SELECT pg_try_advisory_lock(42)$$,
		$$SELECT fence_try_lease(42, '10 min')$$),
	('12:30:00', 'B', 'schedules',
		$$UPDATE schedule SET scheduler = 'B', at = '12:30' WHERE id = 1$$,
		$$UPDATE schedule SET scheduler = 'B', at = '12:30' WHERE id = 1$$);


-- When a worker is frozen (for the pictures; the script leaves the gap).
-- With fence nobody ends A's session: it stays frozen to the end.
SELECT pause('A', '12:00:00', '12:15:00', 'frozen');
SELECT pause('A', '12:15:00', '12:25:00', 'frozen again', 'today');
SELECT pause('A', '12:15:00', '12:30:00', 'frozen again', 'fenced');

SELECT * FROM play();

-- The schedule at the end, and the outcomes doc/incidents.md states.
SELECT * FROM rows('SELECT id, scheduler, at, fence FROM schedule');

INSERT INTO verdict (side, claim, ok) VALUES
	('today', 'A gets the lock at 12:00',
		outcome('today', '12:00:00', 'A', 'takes%') = 't'),
	('today', 'B is refused at 12:10 and, after A''s COMMIT, at 12:20',
		outcome('today', '12:10:00', 'B', 'takes%') = 'f'
		AND outcome('today', '12:15:00', 'A', 'COMMIT%') = 'COMMIT'
		AND outcome('today', '12:20:00', 'B', 'takes%') = 'f'),
	('today', 'the operator''s pg_terminate_backend at 12:25 ends A''s session',
		outcome('today', '12:25:00', 'operator') = 't'),
	('today', 'B gets the lock at 12:30',
		outcome('today', '12:30:00', 'B', 'takes%') = 't'),
	('with fence', 'A gets token 33 at 12:00; B gets token 34 at 12:10',
		outcome('fenced', '12:00:00', 'A', 'takes%') = '33'
		AND outcome('fenced', '12:10:00', 'B', 'takes%') = '34'),
	('with fence', 'A''s write at 12:15 is rejected (LF001), and so its transaction rolls back',
		outcome('fenced', '12:15:00', 'A', 'wakes%') LIKE 'ERROR LF001:%'
		AND outcome('fenced', '12:15:00', 'A', 'COMMIT%') = 'ROLLBACK'),
	('with fence', 'B renews its lease with token 34 at 12:15 and 12:25, and keeps token 34 through 12:30',
		outcome('fenced', '12:15:00', 'B', 'renews%') = 't'
		AND outcome('fenced', '12:20:00', 'B', 'takes%') = '34'
		AND outcome('fenced', '12:25:00', 'B', 'renews%') = 't'
		AND outcome('fenced', '12:30:00', 'B', 'takes%') = '34'),
	('with fence', 'no operator step: A''s session is never ended, and is still open at 12:30',
		outcome('fenced', '12:25:00', 'operator') = '(not run)'
		AND ask('fenced', $$SELECT count(*) FROM pg_stat_activity
							 WHERE datname = current_database() AND application_name = 'A'$$) = '1'),
	('with fence', 'the schedule ends written by B with token 34',
		ask('fenced', $$SELECT scheduler || ', fence ' || fence FROM schedule$$) = 'B, fence 34');

SELECT side, claim, ok FROM verdict ORDER BY n;

SELECT finish();
