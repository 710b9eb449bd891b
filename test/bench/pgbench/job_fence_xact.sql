-- The job under a fence transaction lease, one round trip per statement:
-- take the lease of a random row, update that row (the trigger on job_fence
-- checks the token and stamps it), commit (which ends the lease).  A
-- refused take skips the write.
\set k random(1, :keys)
BEGIN;
SELECT fence_try_xact_lease(:k::bigint, '30 s') IS NOT NULL AS got \gset
\if :got
UPDATE job_fence SET v = v + 1 WHERE id = :k;
\endif
COMMIT;
