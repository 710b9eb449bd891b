-- The same claim, fenced: a transaction lease on the job's id taken in the
-- same statement, its token written on the row with the claim (the trigger
-- on queue_fence checks it), so that a later write by a worker holding an
-- older token for this job is refused.  A job whose lease is held elsewhere
-- is not claimed.
WITH next AS (
	SELECT id FROM queue_fence WHERE state = 'created'
	ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
UPDATE queue_fence q SET state = 'active', started_at = now(), fence = t::bigint
FROM next, fence_try_xact_lease(next.id, '30 s') t
WHERE q.id = next.id AND t IS NOT NULL
RETURNING q.id, q.fence, q.payload;
