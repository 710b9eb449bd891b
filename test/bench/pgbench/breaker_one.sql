-- The same ask and report as breaker_two.sql in one statement, one round
-- trip: the report runs only when the answer is 'call'.  Compared with
-- select1.sql.
\set n random(1, :names)
SELECT fence_breaker_report('bench-' || :n::text, true)
  FROM fence_breaker_allow('bench-' || :n::text) a WHERE a.decision = 'call';
