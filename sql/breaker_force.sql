-- Forced states an operator sets and clears: forced open (every caller
-- fails fast) and disabled (every caller calls, nothing trips it), held in
-- every session until cleared.  On the virtual clock.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
SELECT fence_set_clock('2024-05-02 09:00:00+00');
CREATE VIEW pg_temp.b AS
	SELECT breaker, state, consecutive_failures AS consec, window_calls AS wcalls,
	       open_until, probe_token IS NOT NULL AS probing, trips, fast_failures AS fast,
	       successes, failures
	  FROM fence_breakers WHERE database = current_database() AND breaker LIKE 'frc:%';

-- Forced open: a new breaker is made in that state; every caller fails
-- fast, told to retry at 'infinity' (only an operator ends it).
SELECT fence_breaker_force('frc:a', 'open');
SELECT * FROM fence_breaker_allow('frc:a');
-- Late plain reports are not counted.
SELECT fence_breaker_report('frc:a', true);
SELECT * FROM pg_temp.b;

-- It holds in another session, and however much time passes.
\c
SELECT fence_advance_clock('1 day');
SELECT * FROM fence_breaker_allow('frc:a');
SELECT breaker, state, fast_failures FROM fence_breakers WHERE breaker = 'frc:a';
CREATE VIEW pg_temp.b AS
	SELECT breaker, state, consecutive_failures AS consec, window_calls AS wcalls,
	       open_until, probe_token IS NOT NULL AS probing, trips, fast_failures AS fast,
	       successes, failures
	  FROM fence_breakers WHERE database = current_database() AND breaker LIKE 'frc:%';


-- Cleared: closed, counting afresh.
SELECT fence_breaker_unforce('frc:a');
SELECT decision FROM fence_breaker_allow('frc:a');
SELECT breaker, state, consecutive_failures, fast_failures FROM fence_breakers WHERE breaker = 'frc:a';
-- Clearing a breaker that is not forced changes nothing.
SELECT fence_breaker_report('frc:a', false);
SELECT fence_breaker_unforce('frc:a');
SELECT breaker, state, consecutive_failures FROM fence_breakers WHERE breaker = 'frc:a';

-- Disabled: every caller calls, and no number of failures trips it; the
-- reports are counted in the totals.
SELECT fence_breaker_force('frc:a', 'disabled');
SELECT count(fence_breaker_report('frc:a', false)) AS failed FROM generate_series(1, 50);
SELECT decision FROM fence_breaker_allow('frc:a', failure_threshold => 1);
SELECT breaker, state, consecutive_failures, trips, failures FROM fence_breakers WHERE breaker = 'frc:a';
-- Cleared, it trips again (the last caller asked for failure_threshold 1).
SELECT fence_breaker_unforce('frc:a');
SELECT fence_breaker_report('frc:a', false);

-- Forcing ends a probe in flight: its lease is freed, and its late report
-- is stale and ignored.
SELECT decision FROM fence_breaker_allow('frc:p', failure_threshold => 1);
SELECT fence_breaker_report('frc:p', false);
SELECT fence_advance_clock('30 seconds');
SELECT probe_token AS p FROM fence_breaker_allow('frc:p', failure_threshold => 1) \gset
SELECT state, probing FROM pg_temp.b WHERE breaker = 'frc:p';
SELECT fence_breaker_force('frc:p', 'open');
SELECT count(*) AS probe_leases FROM fence_leases WHERE key = 'breaker:frc:p';
SET client_min_messages = warning;
SELECT fence_breaker_report('frc:p', true, :'p');
RESET client_min_messages;
SELECT state, probing FROM pg_temp.b WHERE breaker = 'frc:p';

-- A definition does not clear a forced state.
SELECT fence_breaker_define('frc:p', failure_threshold => 2);
SELECT decision FROM fence_breaker_allow('frc:p');

-- Clearing a breaker that does not exist makes none.
SELECT fence_breaker_unforce('frc:none');
SELECT count(*) FROM pg_temp.b WHERE breaker = 'frc:none';

-- Bad input: 22023, and nothing changes.
\set VERBOSITY default
SELECT fence_breaker_force('frc:p', 'closed');
SELECT fence_breaker_force('frc:p', NULL);
SELECT fence_breaker_force(NULL, 'open');
SELECT fence_breaker_unforce('');
\set VERBOSITY terse
SELECT breaker, state FROM pg_temp.b ORDER BY breaker;

-- Only roles granted EXECUTE may force (they are revoked from PUBLIC).
CREATE ROLE breaker_force_nobody;
SET ROLE breaker_force_nobody;
SELECT fence_breaker_force('frc:p', 'disabled');
SELECT fence_breaker_unforce('frc:p');
RESET ROLE;
DROP ROLE breaker_force_nobody;

-- Reset forgets the forced state with the rest.
SELECT fence_breaker_reset('frc:p');
SELECT decision FROM fence_breaker_allow('frc:p');
SELECT fence_breaker_reset(breaker) FROM pg_temp.b ORDER BY breaker;
SELECT fence_set_clock(NULL) IS NOT NULL AS real_time;
