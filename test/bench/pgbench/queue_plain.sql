-- A job queue's claim, as pg-boss and river make it: the oldest job not yet
-- taken, locked with SKIP LOCKED so that workers never wait on each other,
-- marked active and returned, in one statement (autocommit).
WITH next AS (
	SELECT id FROM queue_plain WHERE state = 'created'
	ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
UPDATE queue_plain q SET state = 'active', started_at = now()
FROM next WHERE q.id = next.id
RETURNING q.id, q.payload;
