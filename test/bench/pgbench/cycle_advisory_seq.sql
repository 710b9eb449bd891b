-- A do-it-yourself lease with a token that is NOT durable: an advisory lock
-- plus nextval() in one round trip, then unlock.  The same shape as
-- cycle_fence.sql; nextval's value can be handed out again after a crash
-- if its transaction aborted.
\set k random(1, :keys)
SELECT CASE WHEN pg_try_advisory_lock(:k::bigint) THEN nextval('bench_token_seq') ELSE 0 END AS t \gset
SELECT CASE WHEN :t > 0 THEN pg_advisory_unlock(:k::bigint) END;
