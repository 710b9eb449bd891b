-- The job under a fence transaction lease in one statement, autocommit: the
-- UPDATE takes the lease of its row in its WHERE clause, so the trigger on
-- job_fence sees the token in effect when it checks and stamps the row, and
-- the commit ends the lease.  A refused take (NULL) skips the row.  One
-- round trip, like the limit's bare UPDATE.
\set k random(1, :keys)
UPDATE job_fence SET v = v + 1 WHERE id = :k AND fence_try_xact_lease(:k::bigint, '30 s') IS NOT NULL;
