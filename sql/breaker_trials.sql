-- Half-open with N trials (half_open_trials): each trial holds a permit of
-- the lease 'breaker:<name>' with N permits; the breaker closes when N
-- trials have succeeded and reopens on a failed one.  One session here
-- (several at once: test/isolation/specs/breaker_trials.spec).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
SELECT fence_set_clock('2024-05-06 09:00:00+00');
CREATE VIEW pg_temp.b AS
	SELECT state, half_open_trials, trials_running, trials_succeeded, open_for,
	       probe_expires_at
	  FROM fence_breakers WHERE database = current_database() AND breaker = 'tri:a';
CREATE VIEW pg_temp.permits AS
	SELECT count(*) AS held, min(permits) AS of, bool_and(owner ~ '^breaker probe( [0-9]+)?$') AS probe_owner
	  FROM fence_leases WHERE key = 'breaker:tri:a' AND live;

SELECT fence_breaker_define('tri:a', failure_threshold => 1, open_for => '10 seconds',
                            probe_ttl => '20 seconds', half_open_trials => 3);
SELECT fence_breaker_report('tri:a', false);
SELECT fence_advance_clock('10 seconds');

-- The first trial opens the half-open period: a permit of three.
SELECT decision, probe_token AS t1 FROM fence_breaker_allow('tri:a') \gset
SELECT :'decision' AS decision;
SELECT * FROM pg_temp.b;
SELECT * FROM pg_temp.permits;
-- This session's trial still runs: asking again makes no second trial.
SELECT decision, retry_at FROM fence_breaker_allow('tri:a');
-- One success is not enough; its permit is freed.
SELECT fence_breaker_report('tri:a', true, :'t1');
SELECT * FROM pg_temp.b;
SELECT * FROM pg_temp.permits;
-- Two more trials, one after the other, close it.
SELECT probe_token AS t2 FROM fence_breaker_allow('tri:a') \gset
SELECT fence_breaker_report('tri:a', true, :'t2');
SELECT probe_token AS t3 FROM fence_breaker_allow('tri:a') \gset
SELECT :'t3'::fence_token > :'t2'::fence_token AS newer;
SELECT fence_breaker_report('tri:a', true, :'t3');
SELECT * FROM pg_temp.b;
SELECT * FROM pg_temp.permits;

-- A failed trial reopens it, for twice as long, whatever succeeded before.
SELECT fence_breaker_report('tri:a', false);
SELECT fence_advance_clock('10 seconds');
SELECT probe_token AS u1 FROM fence_breaker_allow('tri:a') \gset
SELECT fence_breaker_report('tri:a', true, :'u1');
SELECT probe_token AS u2 FROM fence_breaker_allow('tri:a') \gset
SELECT fence_breaker_report('tri:a', false, :'u2');
SELECT * FROM pg_temp.b;
SELECT * FROM pg_temp.permits;
-- The spent token is stale.
SET client_min_messages = warning;
SELECT fence_breaker_report('tri:a', true, :'u2');
RESET client_min_messages;

-- A trial whose permit ran out no longer counts as running: the next
-- caller starts a trial.  Three slots and two trials: nobody took the late
-- trial's slot, so its late success still counts (as a single probe's
-- does); the isolation test shows a slot taken over.
SELECT fence_advance_clock('20 seconds');
SELECT probe_token AS v1 FROM fence_breaker_allow('tri:a') \gset
SELECT fence_advance_clock('20 seconds');
SELECT * FROM pg_temp.permits;
SELECT probe_token AS v2 FROM fence_breaker_allow('tri:a') \gset
SELECT * FROM pg_temp.b;
SET client_min_messages = warning;
SELECT fence_breaker_report('tri:a', true, :'v1');
RESET client_min_messages;
SELECT * FROM pg_temp.b;

-- Redefining the number of trials applies from the next half-open period.
SELECT fence_breaker_define('tri:a', failure_threshold => 1, open_for => '10 seconds',
                            probe_ttl => '20 seconds', half_open_trials => 1);
SELECT half_open_trials, trials_running FROM pg_temp.b;
SELECT fence_breaker_report('tri:a', false, :'v2');
SELECT fence_advance_clock('40 seconds');
SELECT probe_token AS w1 FROM fence_breaker_allow('tri:a') \gset
-- (one probe holds an ordinary lease, no permits, as a probe always did)
SELECT * FROM pg_temp.permits;
SELECT fence_breaker_report('tri:a', true, :'w1');

-- Bad input: 22023, and nothing changes.
\set VERBOSITY default
SELECT fence_breaker_define('tri:a', half_open_trials => 0);
SELECT fence_breaker_define('tri:a', half_open_trials => 11);
SELECT fence_breaker_define('tri:a', half_open_trials => NULL);
\set VERBOSITY terse
SELECT half_open_trials FROM pg_temp.b;

SELECT fence_breaker_reset('tri:a');
SELECT fence_set_clock(NULL) IS NOT NULL AS real_time;
