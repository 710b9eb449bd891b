-- The job under a fence session lease, autocommit: take the lease of a
-- random row, update the row (the trigger checks and stamps the token),
-- release by token.  A refused take skips the write.
\set k random(1, :keys)
SELECT t IS NOT NULL AS got, coalesce(t, 0) AS t FROM fence_try_lease(:k::bigint, '30 s') t \gset
\if :got
UPDATE job_fence SET v = v + 1 WHERE id = :k;
SELECT fence_release(:k::bigint, :t);
\endif
