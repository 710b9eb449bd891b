-- Slow calls: a report may say how long the call took; on a breaker
-- defined with slow_call, a call that long or longer is slow even when it
-- succeeds, and a share of slow_call_rate slow calls in the window trips
-- the breaker.  On the virtual clock.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
SELECT fence_set_clock('2024-05-05 09:00:00+00');
CREATE VIEW pg_temp.b AS
	SELECT breaker, state, window_calls AS wcalls, window_failures AS wfails,
	       window_slow_calls AS wslow, slow_call, slow_call_rate, trips, successes,
	       failures, slow_calls
	  FROM fence_breakers WHERE database = current_database() AND breaker LIKE 'slow:%';

SELECT fence_breaker_define('slow:a', failure_threshold => 100, window_size => 4, min_calls => 4,
                            slow_call => '2 seconds', slow_call_rate => 0.75);
SELECT fence_breaker_report('slow:a', true, duration => '3 seconds');
SELECT fence_breaker_report('slow:a', true, duration => '1.999999 seconds');
SELECT fence_breaker_report('slow:a', true, NULL, '5 seconds');
SELECT * FROM pg_temp.b;
-- Exactly slow_call is slow: three slow calls of four, all successes, trip it.
SELECT fence_breaker_report('slow:a', true, duration => '2 seconds');
SELECT * FROM pg_temp.b;

-- A failed slow call counts against both rates; a report without a
-- duration is not slow.
SELECT fence_breaker_define('slow:b', failure_threshold => 100, failure_rate => 1,
                            window_size => 2, slow_call => '1 second');
SELECT fence_breaker_report('slow:b', false, duration => '10 seconds');
SELECT fence_breaker_report('slow:b', true);
SELECT * FROM pg_temp.b WHERE breaker = 'slow:b';
-- slow_call_rate left out is 1: every call of the window slow.
SELECT fence_breaker_report('slow:b', true, duration => '1 second');
SELECT * FROM pg_temp.b WHERE breaker = 'slow:b';
SELECT fence_breaker_report('slow:b', true, duration => '1 second');
SELECT * FROM pg_temp.b WHERE breaker = 'slow:b';

-- A probe that succeeds slowly has not shown the dependency is back: the
-- breaker opens again, for twice as long.
SELECT fence_advance_clock('30 seconds');
SELECT probe_token AS p FROM fence_breaker_allow('slow:b') \gset
SELECT fence_breaker_report('slow:b', true, :'p', '3 seconds');
SELECT state, open_for FROM fence_breakers WHERE breaker = 'slow:b';
SELECT fence_advance_clock('60 seconds');
SELECT probe_token AS p FROM fence_breaker_allow('slow:b') \gset
SELECT fence_breaker_report('slow:b', true, :'p', '0.5 seconds');

-- A breaker never defined has no slow_call: durations are checked and
-- counted as nothing.
SELECT decision FROM fence_breaker_allow('slow:u', failure_threshold => 1);
SELECT fence_breaker_report('slow:u', true, duration => '1 hour');
SELECT * FROM pg_temp.b WHERE breaker = 'slow:u';

-- Bad input: 22023, and nothing changes.
\set VERBOSITY default
SELECT fence_breaker_report('slow:u', false, duration => '-1 second');
SELECT fence_breaker_report('slow:u', false, duration => '1 month');
SELECT fence_breaker_define('slow:b', slow_call_rate => 0.5);
SELECT fence_breaker_define('slow:b', slow_call => '1 second', slow_call_rate => 0);
SELECT fence_breaker_define('slow:b', slow_call => '0');
\set VERBOSITY terse
SELECT * FROM pg_temp.b ORDER BY breaker;

SELECT fence_breaker_reset(breaker) FROM pg_temp.b ORDER BY breaker;
SELECT fence_set_clock(NULL) IS NOT NULL AS real_time;
