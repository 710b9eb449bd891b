-- Minimum calls: a defined breaker's failure rate is judged once its
-- window holds min_calls outcomes, not only once the window is full.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
SELECT fence_set_clock('2024-05-04 09:00:00+00');
CREATE VIEW pg_temp.b AS
	SELECT breaker, state, window_calls AS wcalls, window_failures AS wfails,
	       window_size, min_calls, trips
	  FROM fence_breakers WHERE database = current_database() AND breaker LIKE 'min:%';

-- Three failures out of three are not judged: fewer than min_calls 4.
SELECT fence_breaker_define('min:a', failure_threshold => 100, failure_rate => 0.5,
                            window_size => 10, min_calls => 4);
SELECT fence_breaker_report('min:a', false);
SELECT fence_breaker_report('min:a', false);
SELECT fence_breaker_report('min:a', false);
SELECT * FROM pg_temp.b;
-- The fourth call is judged: 4 failures of 4.
SELECT fence_breaker_report('min:a', false);
SELECT * FROM pg_temp.b;

-- Judged against the calls so far: 2 failures of 4 is the rate 0.5.
SELECT fence_breaker_define('min:b', failure_threshold => 100, failure_rate => 0.5,
                            window_size => 10, min_calls => 4);
SELECT fence_breaker_report('min:b', false);
SELECT fence_breaker_report('min:b', true);
SELECT fence_breaker_report('min:b', true);
SELECT * FROM pg_temp.b WHERE breaker = 'min:b';
SELECT fence_breaker_report('min:b', false);
SELECT * FROM pg_temp.b WHERE breaker = 'min:b';

-- Without min_calls (and for breakers never defined), a full window.
SELECT fence_breaker_define('min:c', failure_threshold => 100, failure_rate => 0.5,
                            window_size => 10);
SELECT count(fence_breaker_report('min:c', false)) FROM generate_series(1, 9);
SELECT * FROM pg_temp.b WHERE breaker = 'min:c';
SELECT fence_breaker_report('min:c', false);
SELECT decision FROM fence_breaker_allow('min:d', failure_threshold => 100, window_size => 6);
SELECT count(fence_breaker_report('min:d', false)) FROM generate_series(1, 5);
SELECT * FROM pg_temp.b WHERE breaker = 'min:d';
SELECT fence_breaker_report('min:d', false);

-- Bad input: 22023, and nothing changes.
\set VERBOSITY default
SELECT fence_breaker_define('min:b', window_size => 10, min_calls => 0);
SELECT fence_breaker_define('min:b', window_size => 10, min_calls => 11);
\set VERBOSITY terse
SELECT * FROM pg_temp.b ORDER BY breaker;

SELECT fence_breaker_reset(breaker) FROM pg_temp.b ORDER BY breaker;
SELECT fence_set_clock(NULL) IS NOT NULL AS real_time;
