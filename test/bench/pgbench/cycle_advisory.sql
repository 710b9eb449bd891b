-- The advisory-lock cycle of the same shape as cycle_fence.sql: try a
-- session lock on a random key, then unlock it, one round trip each (no
-- token: an advisory lock has none).
\set k random(1, :keys)
SELECT CASE WHEN pg_try_advisory_lock(:k::bigint) THEN 1 ELSE 0 END AS t \gset
SELECT CASE WHEN :t > 0 THEN pg_advisory_unlock(:k::bigint) END;
