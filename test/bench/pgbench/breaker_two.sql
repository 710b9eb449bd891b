-- A worker's use of a shared circuit breaker, one round trip per call: ask
-- the breaker of a random one of :names dependencies, then report a success
-- (the breaker stays closed).  Compared with select1_twice.sql, the same two
-- round trips with nothing in them.  (No ':' in the name: pgbench takes
-- ':name' for a variable even inside quotes.)
\set n random(1, :names)
SELECT decision = 'call' AS go FROM fence_breaker_allow('bench-' || :n::text) \gset
\if :go
SELECT fence_breaker_report('bench-' || :n::text, true);
\endif
