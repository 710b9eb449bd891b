-- Breakers defined once (fence_breaker_define): the definition's settings
-- hold for every caller, and the settings callers of fence_breaker_allow
-- pass are ignored.  On the virtual clock.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
CREATE VIEW pg_temp.b AS
	SELECT breaker, state, defined, consecutive_failures AS consec, failure_threshold,
	       failure_rate, window_size, open_until, open_for, probe_expires_at, trips
	  FROM fence_breakers WHERE database = current_database() AND breaker LIKE 'def:%';
SELECT fence_set_clock('2024-05-01 09:00:00+00');

-- Defining a new breaker creates it, closed.
SELECT fence_breaker_define('def:a', failure_threshold => 2, failure_rate => NULL,
                            open_for => '10 seconds', probe_ttl => '5 seconds');
SELECT * FROM pg_temp.b;
-- A caller's settings are ignored: two failures trip it, not 100.
SELECT decision FROM fence_breaker_allow('def:a', failure_threshold => 100, open_for => '1 hour');
SELECT failure_threshold, failure_rate, window_size FROM pg_temp.b;
SELECT fence_breaker_report('def:a', false);
SELECT fence_breaker_report('def:a', false);
SELECT state, open_until, trips FROM pg_temp.b;
-- Open for the defined 10 seconds; the probe's lease lasts the defined 5.
SELECT fence_advance_clock('10 seconds');
SELECT decision, probe_token IS NOT NULL AS probe
  FROM fence_breaker_allow('def:a', failure_threshold => 100, open_for => '1 hour', probe_ttl => '1 hour');
SELECT state, probe_expires_at FROM pg_temp.b;

-- Defining it again changes the settings and keeps the state.
SELECT fence_breaker_define('def:a', failure_threshold => 3, window_size => 8);
SELECT state, failure_threshold, failure_rate, window_size, open_for FROM pg_temp.b;

-- A breaker that callers made is defined in place: their settings stop
-- counting from then on.
SELECT decision FROM fence_breaker_allow('def:b', failure_threshold => 7);
SELECT breaker, defined, failure_threshold FROM pg_temp.b WHERE breaker = 'def:b';
SELECT fence_breaker_define('def:b', failure_threshold => 4);
SELECT decision FROM fence_breaker_allow('def:b', failure_threshold => 7);
SELECT breaker, defined, failure_threshold FROM pg_temp.b WHERE breaker = 'def:b';

-- Bad input: 22023, and the definition stays as it was.
\set VERBOSITY default
SELECT fence_breaker_define('def:b', failure_threshold => 0);
SELECT fence_breaker_define('def:b', window_size => 65);
SELECT fence_breaker_define('def:b', open_for => '10 minutes', max_open_for => '1 minute');
SELECT fence_breaker_define(NULL);
\set VERBOSITY terse
SELECT breaker, defined, failure_threshold, window_size, open_for FROM pg_temp.b WHERE breaker = 'def:b';

-- Only roles granted EXECUTE may define (it is revoked from PUBLIC).
CREATE ROLE breaker_definer_nobody;
SET ROLE breaker_definer_nobody;
SELECT fence_breaker_define('def:c');
RESET ROLE;
DROP ROLE breaker_definer_nobody;

-- Reset forgets the definition with the rest: callers' settings count again.
SELECT fence_breaker_reset('def:b');
SELECT decision FROM fence_breaker_allow('def:b', failure_threshold => 7);
SELECT breaker, defined, failure_threshold FROM pg_temp.b WHERE breaker = 'def:b';

SELECT fence_breaker_reset(breaker) FROM pg_temp.b ORDER BY breaker;
SELECT fence_set_clock(NULL) IS NOT NULL AS real_time;
