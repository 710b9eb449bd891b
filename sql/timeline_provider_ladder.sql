-- Incident 7 of doc/incidents.md: the provider ladder.
--
-- An AI pipeline's workers send each job to provider A, and to provider B
-- when A does not answer; a call to A gives up after a 15 s timeout.  A goes
-- down before 10:00:00 and comes back at 10:00:40.  Three workers take jobs
-- between 10:00:00 and 10:00:55.
--
-- today:      every job tries A first: each one waits out A's 15 s timeout
--             before it moves on to B, for as long as A is down.
-- with fence: a shared circuit breaker per provider,
--             fence_breaker_allow('provider:A', failure_threshold => 1,
--             open_for => '30 s'), asked before the call, told the outcome
--             after it.  The first timeout trips it; jobs then skip A at once;
--             after 30 s exactly one worker probes A (a lease on
--             breaker:provider:A), and its success closes the breaker.
--
-- Providers are modelled, not called: call_provider(p) answers 'ok', or 'no
-- answer' while p is down (read from the lease clock), and records the call.
-- How it is replayed (fresh database per variant, one session per worker,
-- virtual clock): test/lib/timeline.sql.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
\i :abs_srcdir/test/lib/timeline.sql
\set ECHO all

SELECT start('provider_ladder', 'The provider ladder', '2025-03-10',
	intro => 'Workers send each job to provider A, or to B when A does not answer within 15 s. '
		'A is down from before 10:00:00 until 10:00:40. Every worker finds that out for itself, '
		'one job at a time.',
	lesson => 'Without shared state, every job that tries A while it is down pays its 15 s timeout: '
		'three workers each lose 15 s. A breaker that all workers share opens on the first timeout, '
		'so only W1 waits and the other jobs go straight to B. After open_until, one probe (a lease, '
		'so only one worker holds it) finds A back, and its report closes the breaker.');

SELECT setup($$
	CREATE TABLE outage (provider text PRIMARY KEY, down_from timestamptz, down_until timestamptz);
	INSERT INTO outage VALUES ('A', '2025-03-10 09:59:00+00', '2025-03-10 10:00:40+00');
	CREATE TABLE calls (n int GENERATED ALWAYS AS IDENTITY, at time, worker text, provider text, answer text);
	CREATE FUNCTION call_provider(p text) RETURNS text LANGUAGE sql AS $f$
		INSERT INTO calls (at, worker, provider, answer)
		SELECT (fence_now() AT TIME ZONE 'UTC')::time, current_setting('application_name'), p,
		       CASE WHEN EXISTS (SELECT FROM outage o WHERE o.provider = p
		                          AND fence_now() >= o.down_from AND fence_now() < o.down_until)
		            THEN 'no answer' ELSE 'ok' END
		RETURNING answer
	$f$;
$$);

INSERT INTO script (at, worker, action, today, fenced) VALUES
	-- Job 1: both designs pay the first timeout.
	('10:00:00', 'W1', 'job 1: asks the breaker for A',
		NULL,
		$$SELECT decision FROM fence_breaker_allow('provider:A', failure_threshold => 1, open_for => '30 s')$$),
	('10:00:00', 'W1', 'job 1: calls A (waits for its timeout)',
		$$SELECT call_provider('A')$$,
		$$SELECT call_provider('A')$$),
	('10:00:15', 'W1', 'job 1: A timed out',
		NULL,
		$$SELECT fence_breaker_report('provider:A', false)$$),
	('10:00:15', 'W1', 'job 1: calls B',
		$$SELECT call_provider('B')$$,
		$$SELECT call_provider('B')$$),
	-- Jobs 2 and 3, while A is still down.
	('10:00:20', 'W2', 'job 2: asks the breaker for A',
		NULL,
		$$SELECT decision FROM fence_breaker_allow('provider:A', failure_threshold => 1, open_for => '30 s')$$),
	('10:00:20', 'W2', 'job 2: calls A (waits for its timeout)',
		$$SELECT call_provider('A')$$,
		NULL),
	('10:00:20', 'W2', 'job 2: calls B at once',
		NULL,
		$$SELECT call_provider('B')$$),
	('10:00:25', 'W3', 'job 3: asks the breaker for A',
		NULL,
		$$SELECT decision FROM fence_breaker_allow('provider:A', failure_threshold => 1, open_for => '30 s')$$),
	('10:00:25', 'W3', 'job 3: calls A (waits for its timeout)',
		$$SELECT call_provider('A')$$,
		NULL),
	('10:00:25', 'W3', 'job 3: calls B at once',
		NULL,
		$$SELECT call_provider('B')$$),
	('10:00:35', 'W2', 'job 2: A timed out; calls B',
		$$SELECT call_provider('B')$$,
		NULL),
	('10:00:40', 'W3', 'job 3: A timed out; calls B',
		$$SELECT call_provider('B')$$,
		NULL),
	-- A is back at 10:00:40; the breaker stays open until 10:00:45.
	('10:00:50', 'W1', 'job 4: asks the breaker for A',
		NULL,
		$$SELECT decision FROM fence_breaker_allow('provider:A', failure_threshold => 1, open_for => '30 s')$$),
	('10:00:50', 'observer', 'who may probe A?',
		NULL,
		$$SELECT key || ' (' || owner || ', token ' || token || ')' FROM fence_leases WHERE key LIKE 'breaker:%' AND live$$),
	('10:00:50', 'W3', 'job 5: asks the breaker for A',
		NULL,
		$$SELECT decision FROM fence_breaker_allow('provider:A', failure_threshold => 1, open_for => '30 s')$$),
	('10:00:50', 'W3', 'job 5: calls B at once',
		NULL,
		$$SELECT call_provider('B')$$),
	('10:00:50', 'W1', 'job 4: calls A',
		$$SELECT call_provider('A')$$,
		$$SELECT call_provider('A')$$),
	('10:00:50', 'W3', 'job 5: calls A',
		$$SELECT call_provider('A')$$,
		NULL),
	('10:00:51', 'W1', 'job 4: A answered; reports the probe',
		NULL,
		$$SELECT fence_breaker_report('provider:A', true, probe_token) FROM fence_breakers WHERE breaker = 'provider:A'$$),
	('10:00:55', 'W2', 'job 6: asks the breaker for A',
		NULL,
		$$SELECT decision FROM fence_breaker_allow('provider:A', failure_threshold => 1, open_for => '30 s')$$),
	('10:00:55', 'W2', 'job 6: calls A',
		$$SELECT call_provider('A')$$,
		$$SELECT call_provider('A')$$);

-- When a worker waits for A's timeout (for the pictures): job 1 in both
-- designs, jobs 2 and 3 today only (with fence they fail fast).
SELECT wait('W1', '10:00:00', '10:00:15', 'waits for A 15 s');
SELECT wait('W2', '10:00:20', '10:00:35', 'waits for A 15 s', 'today');
SELECT wait('W3', '10:00:25', '10:00:40', 'waits for A 15 s', 'today');

SELECT * FROM play();

-- Every call, and the outcomes doc/incidents.md states.
SELECT * FROM rows('SELECT at, worker, provider, answer FROM calls ORDER BY n');

INSERT INTO verdict (side, claim, ok) VALUES
	('today', 'jobs 1, 2 and 3 each wait out A''s 15 s timeout before calling B',
		ask('today', $$SELECT count(*) FROM calls WHERE provider = 'A' AND answer = 'no answer'$$) = '3'),
	('today', 'jobs 2 and 3 reach B only at 10:00:35 and 10:00:40',
		ask('today', $$SELECT string_agg(at::text, ' ' ORDER BY n) FROM calls WHERE provider = 'B' AND worker IN ('W2', 'W3')$$)
			= '10:00:35 10:00:40'),
	('with fence', 'only job 1 waits for A: its timeout trips the breaker at 10:00:15',
		ask('fenced', $$SELECT count(*) FROM calls WHERE provider = 'A' AND answer = 'no answer'$$) = '1'
		AND outcome('fenced', '10:00:15', 'W1', '%timed out') = 'open'),
	('with fence', 'jobs 2 and 3 fail fast and call B at once (10:00:20, 10:00:25)',
		outcome('fenced', '10:00:20', 'W2', '%asks%') = 'fail_fast'
		AND outcome('fenced', '10:00:25', 'W3', '%asks%') = 'fail_fast'
		AND ask('fenced', $$SELECT count(*) FROM calls WHERE provider = 'B' AND worker IN ('W2', 'W3') AND at IN ('10:00:20', '10:00:25')$$) = '2'),
	('with fence', 'at 10:00:50 W1 is the one probe (lease breaker:provider:A, token 33); W3 fails fast',
		outcome('fenced', '10:00:50', 'W1', '%asks%') = 'probe'
		AND outcome('fenced', '10:00:50', 'observer') = 'breaker:provider:A (breaker probe, token 33)'
		AND outcome('fenced', '10:00:50', 'W3', '%asks%') = 'fail_fast'),
	('with fence', 'the probe''s success closes the breaker; job 6 calls A',
		outcome('fenced', '10:00:51', 'W1') = 'closed'
		AND outcome('fenced', '10:00:55', 'W2', '%asks%') = 'call'
		AND outcome('fenced', '10:00:55', 'W2', '%calls A') = 'ok');

-- The breaker's states as fence_breakers showed them after each step (what
-- the picture draws as the breaker's band), each from its changed_at.
SELECT string_agg(format('%s from %s', state, changed_at)
				  || CASE state WHEN 'open' THEN ' until ' || open_until
								WHEN 'half_open' THEN ', probe ' || probe_token ELSE '' END,
				  '; ' ORDER BY first) AS states
  FROM (SELECT state, changed_at, min(open_until) AS open_until, min(probe_token) AS probe_token,
			   min(seq) AS first
		  FROM breaker WHERE variant = 'fenced' AND breaker = 'provider:A'
		 GROUP BY state, changed_at) s \gset
SELECT :'states' AS states;

INSERT INTO verdict (side, claim, ok) VALUES
	('with fence', 'fence_breakers: provider:A closed, open from 10:00:15 until 10:00:45, half_open from 10:00:50 (probe 33), closed from 10:00:51',
		:'states' = 'closed from 10:00:00; open from 10:00:15 until 10:00:45; '
			'half_open from 10:00:50, probe 33; closed from 10:00:51');

SELECT side, claim, ok FROM verdict ORDER BY n;

SELECT finish();
