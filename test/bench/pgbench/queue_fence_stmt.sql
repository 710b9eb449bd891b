-- The same claim, fenced the cheaper way: the transaction lease on the
-- job's id is taken in the WHERE clause, as a filter of the one row the
-- CTE locked, and the statement does not set the fence column: the trigger
-- stamps the row with the token in effect, the lease's.  No function scan
-- and no join beyond the unfenced claim's.  A job whose lease is held
-- elsewhere is not claimed.
WITH next AS (
	SELECT id FROM queue_fence WHERE state = 'created'
	ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
UPDATE queue_fence q SET state = 'active', started_at = now()
FROM next WHERE q.id = next.id AND fence_try_xact_lease(next.id, '30 s') IS NOT NULL
RETURNING q.id, q.fence, q.payload;
