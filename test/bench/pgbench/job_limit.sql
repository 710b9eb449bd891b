-- The limit of any lock design: the job's write alone, no lock, no token,
-- autocommit, one round trip.  What a job costs before any locking.
\set k random(1, :keys)
UPDATE job_limit SET v = v + 1 WHERE id = :k;
