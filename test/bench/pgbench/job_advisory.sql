-- The job with PostgreSQL's advisory locks, done carefully, autocommit:
-- take the row's lock and a token from a sequence in one round trip, update
-- the row only if no newer token has written it (the check in the WHERE
-- clause), unlock.  A refused take skips the write.
\set k random(1, :keys)
SELECT CASE WHEN pg_try_advisory_lock(:k::bigint) THEN nextval('job_token_seq') ELSE 0 END AS t \gset
\if :t > 0
UPDATE job_advisory SET v = v + 1, fence = :t WHERE id = :k AND fence <= :t;
SELECT pg_advisory_unlock(:k::bigint);
\endif
