-- The unfenced claim (queue_plain.sql) on a table with the no-op C trigger
-- BEFORE UPDATE: the floor of any row trigger, which makes PostgreSQL lock
-- the row again, on the page every claimer works on, before the trigger runs.
WITH next AS (
	SELECT id FROM queue_noop WHERE state = 'created'
	ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
UPDATE queue_noop q SET state = 'active', started_at = now()
FROM next WHERE q.id = next.id
RETURNING q.id, q.payload;
