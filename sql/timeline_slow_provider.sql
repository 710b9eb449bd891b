-- An illustration for doc/bulkheads.md (not one of the incidents of
-- doc/incidents.md): a slow provider, and a bulkhead on it.
--
-- Workers W1..W5 each take a job between 10:00:00 and 10:00:08 and send it to
-- provider A.  A has turned slow: every call takes 20 s, but it answers, so a
-- circuit breaker (which counts failures) would never open.  Job 6 comes in
-- at 10:00:10 and job 7 at 10:00:21.
--
-- today:      every job calls A.  From 10:00:08 all five workers wait on A,
--             job 6 finds no free worker until 10:00:20, and every job is
--             done 20 s or more after it came in.
-- with fence: a bulkhead of 2 permits on A: before calling A a worker takes
--             fence_try_permit('bulkhead:A', 2, '30 s'), and gives it back
--             with fence_release when A has answered.  W1 and W2 get permits
--             33 and 34 and call A; W3, W4 and W5 (and job 6) get NULL at once
--             and call provider B, which answers at once.  When W1 gives back
--             its permit at 10:00:20, job 7's worker gets one (35).
--
-- Providers are modelled, not called: call_provider(job, p) records that the
-- job's worker sent it to p; B answers at once ('done in 0 s'), A does not
-- ('sent').  answered(job) is A's answer, taken by the worker when it comes:
-- it records the job as done if A's 20 s have passed on the lease clock.
-- permit_holders(key) is what an observer reads in fence_leases: each live
-- holder of a permit, by worker, with its token.
-- How it is replayed (fresh database per variant, one session per worker,
-- virtual clock): test/lib/timeline.sql.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
\i :abs_srcdir/test/lib/timeline.sql
\set ECHO all

SELECT start('slow_provider', 'A slow provider', '2025-05-12',
	intro => 'Workers send each job to provider A. A has turned slow: every call takes 20 s, but it '
		'answers, so a breaker never opens. Five jobs come in between 10:00:00 and 10:00:08, a sixth '
		'at 10:00:10 and a seventh at 10:00:21.',
	lesson => 'A breaker stops calls to a provider that fails, not to one that is slow. Without a '
		'cap, every worker ends up waiting on the slow provider and every job is late. A bulkhead '
		'of 2 permits lets two workers wait on A; the others get NULL at once and take B, and a '
		'permit given back goes to the next job.',
	doc => 'doc/bulkheads.md');

SELECT setup($$
	CREATE TABLE provider (name text PRIMARY KEY, latency interval NOT NULL);
	INSERT INTO provider VALUES ('A', '20 s'), ('B', '0 s');
	CREATE TABLE jobs (job int PRIMARY KEY, came time NOT NULL, worker text, provider text,
	                   sent time, done time);
	INSERT INTO jobs (job, came) VALUES (1, '10:00:00'), (2, '10:00:02'), (3, '10:00:04'),
		(4, '10:00:06'), (5, '10:00:08'), (6, '10:00:10'), (7, '10:00:21');
	CREATE FUNCTION call_provider(j int, p text) RETURNS text LANGUAGE sql AS $f$
		UPDATE jobs SET worker = current_setting('application_name'), provider = p,
		       sent = (fence_now() AT TIME ZONE 'UTC')::time,
		       done = CASE WHEN (SELECT latency FROM provider WHERE name = p) = '0 s'
		                   THEN (fence_now() AT TIME ZONE 'UTC')::time END
		 WHERE job = j
		RETURNING CASE WHEN done IS NULL THEN 'sent'
		               ELSE format('done in %s s', extract(epoch FROM done - came)::int) END
	$f$;
	CREATE FUNCTION answered(j int) RETURNS text LANGUAGE sql AS $f$
		UPDATE jobs SET done = (fence_now() AT TIME ZONE 'UTC')::time
		 WHERE job = j AND done IS NULL
		   AND (fence_now() AT TIME ZONE 'UTC')::time
		       >= sent + (SELECT latency FROM provider WHERE name = jobs.provider)
		RETURNING format('done in %s s', extract(epoch FROM done - came)::int)
	$f$;
	-- The live holders of a key's permits, by worker: fence_leases.
	CREATE FUNCTION permit_holders(k text) RETURNS text LANGUAGE sql AS $f$
		SELECT string_agg(a.application_name || ' ' || l.token, ', ' ORDER BY l.token)
		  FROM fence_leases l JOIN pg_stat_activity a USING (pid)
		 WHERE l.key = k AND l.live
	$f$;
$$);

INSERT INTO script (at, worker, action, today, fenced) VALUES
	-- Jobs 1 and 2: both designs call A.
	('10:00:00', 'W1', 'job 1: permit for A',
		NULL,
		$$SELECT set_token(fence_try_permit('bulkhead:A', 2, '30 s'))$$),
	('10:00:00', 'W1', 'job 1: calls A',
		$$SELECT call_provider(1, 'A')$$,
		$$SELECT call_provider(1, 'A')$$),
	('10:00:02', 'W2', 'job 2: permit for A',
		NULL,
		$$SELECT set_token(fence_try_permit('bulkhead:A', 2, '30 s'))$$),
	('10:00:02', 'W2', 'job 2: calls A',
		$$SELECT call_provider(2, 'A')$$,
		$$SELECT call_provider(2, 'A')$$),
	-- Jobs 3, 4 and 5: today they call A too; with fence both permits are
	-- taken, so they go to B.
	('10:00:04', 'W3', 'job 3: permit for A',
		NULL,
		$$SELECT set_token(fence_try_permit('bulkhead:A', 2, '30 s'))$$),
	('10:00:04', 'W3', 'job 3: calls A',
		$$SELECT call_provider(3, 'A')$$,
		NULL),
	('10:00:04', 'W3', 'job 3: calls B',
		NULL,
		$$SELECT call_provider(3, 'B')$$),
	('10:00:06', 'W4', 'job 4: permit for A',
		NULL,
		$$SELECT set_token(fence_try_permit('bulkhead:A', 2, '30 s'))$$),
	('10:00:06', 'W4', 'job 4: calls A',
		$$SELECT call_provider(4, 'A')$$,
		NULL),
	('10:00:06', 'W4', 'job 4: calls B',
		NULL,
		$$SELECT call_provider(4, 'B')$$),
	('10:00:08', 'W5', 'job 5: permit for A',
		NULL,
		$$SELECT set_token(fence_try_permit('bulkhead:A', 2, '30 s'))$$),
	('10:00:08', 'W5', 'job 5: calls A',
		$$SELECT call_provider(5, 'A')$$,
		NULL),
	('10:00:08', 'W5', 'job 5: calls B',
		NULL,
		$$SELECT call_provider(5, 'B')$$),
	-- Job 6 comes in: today every worker waits on A.
	('10:00:10', 'observer', 'who holds a permit for A?',
		NULL,
		$$SELECT permit_holders('bulkhead:A')$$),
	('10:00:10', 'W3', 'job 6: permit for A',
		NULL,
		$$SELECT set_token(fence_try_permit('bulkhead:A', 2, '30 s'))$$),
	('10:00:10', 'W3', 'job 6: calls B',
		NULL,
		$$SELECT call_provider(6, 'B')$$),
	-- A answers job 1; W1 gives back its permit.
	('10:00:20', 'W1', 'job 1: A answers',
		$$SELECT answered(1)$$,
		$$SELECT answered(1)$$),
	('10:00:20', 'W1', 'job 1: gives back its permit',
		NULL,
		$$SELECT fence_release('bulkhead:A', my_token())$$),
	('10:00:20', 'W1', 'job 6, in since 10:00:10: calls A',
		$$SELECT call_provider(6, 'A')$$,
		NULL),
	-- Job 7 comes in: with fence, W1's permit is free.
	('10:00:21', 'W4', 'job 7: permit for A',
		NULL,
		$$SELECT set_token(fence_try_permit('bulkhead:A', 2, '30 s'))$$),
	('10:00:21', 'observer', 'who holds a permit for A?',
		NULL,
		$$SELECT permit_holders('bulkhead:A')$$),
	('10:00:21', 'W4', 'job 7: calls A',
		NULL,
		$$SELECT call_provider(7, 'A')$$),
	('10:00:22', 'W2', 'job 2: A answers',
		$$SELECT answered(2)$$,
		$$SELECT answered(2)$$),
	('10:00:22', 'W2', 'job 2: gives back its permit',
		NULL,
		$$SELECT fence_release('bulkhead:A', my_token())$$),
	('10:00:22', 'W2', 'job 7, in since 10:00:21: calls A',
		$$SELECT call_provider(7, 'A')$$,
		NULL),
	('10:00:24', 'W3', 'job 3: A answers',
		$$SELECT answered(3)$$,
		NULL),
	('10:00:26', 'W4', 'job 4: A answers',
		$$SELECT answered(4)$$,
		NULL),
	('10:00:28', 'W5', 'job 5: A answers',
		$$SELECT answered(5)$$,
		NULL),
	('10:00:40', 'W1', 'job 6: A answers',
		$$SELECT answered(6)$$,
		NULL),
	('10:00:41', 'W4', 'job 7: A answers',
		NULL,
		$$SELECT answered(7)$$),
	('10:00:41', 'W4', 'job 7: gives back its permit',
		NULL,
		$$SELECT fence_release('bulkhead:A', my_token())$$),
	('10:00:42', 'W2', 'job 7: A answers',
		$$SELECT answered(7)$$,
		NULL);

-- While a worker waits for A's answer (for the pictures).
SELECT wait('W1', '10:00:00', '10:00:20', 'waits 20 s for A');
SELECT wait('W2', '10:00:02', '10:00:22', 'waits 20 s for A');
SELECT wait('W3', '10:00:04', '10:00:24', 'waits 20 s for A', 'today');
SELECT wait('W4', '10:00:06', '10:00:26', 'waits 20 s for A', 'today');
SELECT wait('W5', '10:00:08', '10:00:28', 'waits 20 s for A', 'today');
SELECT wait('W1', '10:00:20', '10:00:40', 'waits 20 s for A', 'today');
SELECT wait('W2', '10:00:22', '10:00:42', 'waits 20 s for A', 'today');
SELECT wait('W4', '10:00:21', '10:00:41', 'waits 20 s for A', 'fenced');

SELECT * FROM play();

-- Every job, and the outcomes doc/bulkheads.md states.
SELECT * FROM rows('SELECT job, came, worker, provider, sent, done FROM jobs ORDER BY job');

INSERT INTO verdict (side, claim, ok) VALUES
	('today', 'jobs 1 to 5 all call A and each waits 20 s: from 10:00:08 to 10:00:20 all five workers wait on A',
		ask('today', $$SELECT count(*) FROM jobs WHERE job <= 5 AND provider = 'A'
		                 AND done - sent = '20 s' AND sent <= '10:00:08' AND done >= '10:00:20'$$) = '5'),
	('today', 'job 6, in at 10:00:10, finds no free worker: W1 takes it at 10:00:20, and it is done at 10:00:40',
		ask('today', $$SELECT worker || ' ' || provider || ' ' || sent || ' ' || done FROM jobs WHERE job = 6$$)
			= 'W1 A 10:00:20 10:00:40'),
	('today', 'every job is done 20 s or more after it came in',
		ask('today', $$SELECT count(*) FROM jobs WHERE done - came >= '20 s'$$) = '7'),
	('with fence', 'W1 and W2 get permits 33 and 34 and call A; W3, W4 and W5 get NULL from fence_try_permit at once',
		outcome('fenced', '10:00:00', 'W1', '%permit%') = '33'
		AND outcome('fenced', '10:00:02', 'W2', '%permit%') = '34'
		AND outcome('fenced', '10:00:04', 'W3', '%permit%') = 'NULL'
		AND outcome('fenced', '10:00:06', 'W4', '%permit%') = 'NULL'
		AND outcome('fenced', '10:00:08', 'W5', '%permit%') = 'NULL'),
	('with fence', 'jobs 3 to 6 go to B and are done the second they come in',
		ask('fenced', $$SELECT count(*) FROM jobs WHERE job BETWEEN 3 AND 6 AND provider = 'B' AND done = came$$) = '4'
		AND outcome('fenced', '10:00:10', 'W3', '%permit%') = 'NULL'),
	('with fence', 'after every step, fence_leases shows at most 2 holders of bulkhead:A (W1 33, W2 34 at 10:00:10)',
		(SELECT max(n) = 2 AND bool_and(p) FROM (SELECT count(*) AS n, bool_and(permits = 2) AS p FROM hold
		                      WHERE variant = 'fenced' AND lock = 'bulkhead:A' GROUP BY seq) c)
		AND outcome('fenced', '10:00:10', 'observer') = 'W1 33, W2 34'),
	('with fence', 'W1 gives back permit 33 at 10:00:20; job 7 gets a permit at 10:00:21 (35), while W2 holds 34',
		outcome('fenced', '10:00:20', 'W1', '%gives back%') = 't'
		AND outcome('fenced', '10:00:21', 'W4', '%permit%') = '35'
		AND outcome('fenced', '10:00:21', 'observer') = 'W2 34, W4 35'),
	('with fence', 'only jobs 1, 2 and 7 wait on A, and every permit is given back',
		ask('fenced', $$SELECT string_agg(job::text, ' ' ORDER BY job) FROM jobs WHERE provider = 'A' AND done - sent = '20 s'$$) = '1 2 7'
		AND ask('fenced', $$SELECT count(*) FROM fence_leases WHERE key = 'bulkhead:A'$$) = '0');

SELECT side, claim, ok FROM verdict ORDER BY n;

SELECT finish();
