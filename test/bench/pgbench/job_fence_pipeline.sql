-- The same job as job_fence_xact.sql sent as one round trip (pgbench
-- pipeline mode: the four statements, then one Sync).  Nothing can be read
-- back in between, so the UPDATE itself skips the row when the take was
-- refused: without a lease the transaction has no token in effect.
\set k random(1, :keys)
\startpipeline
BEGIN;
SELECT fence_try_xact_lease(:k::bigint, '30 s');
UPDATE job_fence SET v = v + 1 WHERE id = :k AND fence_current_token() IS NOT NULL;
COMMIT;
\endpipeline
