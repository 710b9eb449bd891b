-- An ask of a half-open breaker whose half_open_trials (10) trials are all
-- running: what every other worker pays while a dependency is being tried
-- again.  The answer is fail_fast; the breaker looks at its 10 trials.
-- Compared with select1.sql.
\set n random(1, :names)
SELECT decision FROM fence_breaker_allow('bench-h-' || :n::text);
