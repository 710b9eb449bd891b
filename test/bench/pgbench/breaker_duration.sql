-- breaker_one.sql with the call's duration in the report, on the same
-- breakers, which the bench defines with slow_call (2 s) and a slow-call
-- rate: the slow-call rules are judged on every report.  The durations (0
-- to 999 ms) are fast, so the breakers stay closed.  Compared with
-- select1.sql and breaker_one.sql.
\set n random(1, :names)
\set ms random(0, 999)
SELECT fence_breaker_report('bench-' || :n::text, true, NULL, make_interval(secs => :ms / 1000.0))
  FROM fence_breaker_allow('bench-' || :n::text) a WHERE a.decision = 'call';
