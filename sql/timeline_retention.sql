-- Incident 2 of doc/incidents.md: the retention setting.
--
-- A settings job writes channel 7's message retention.  A worker takes
-- SET lock:retention <worker> NX PX 30000, then INCR lock:retention:fence for
-- its token, and writes with
--     UPDATE channels SET retention_days = $1, fence = $2 WHERE id = 7 AND fence <= $2
-- ($2: its token).  The row's fence and the counter are at 32.  W1 takes the
-- lock at 10:00:00 (token 33) and pauses; its lease runs out at 10:00:30.  W2
-- takes it at 10:00:31 (token 34).  W1 writes 30 days at 10:00:40, W2 writes
-- 90 days at 10:00:45, W1 writes 30 days again at 10:00:50.
--
-- today:      the incident's design: Redis lock and INCR counter (modelled by
--             redis() in test/lib/timeline.sql, PX expiry read from the lease
--             clock), and the fence check in the UPDATE's WHERE clause.
-- with fence: fence_try_lease('lock:retention', '30 s') gives the token, and
--             the trigger (fence_protect on channels.fence, the same bigint
--             column) checks it: the UPDATE has no WHERE clause on the fence.
-- strict:     the same, with fence_protect(..., lease => 'lock:retention',
--             strict => true): a write must carry the lease's current live
--             token, so the stale W1 is refused before W2 ever writes.
--
-- How it is replayed (fresh database per variant, one session per worker,
-- virtual clock): test/lib/timeline.sql.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
\i :abs_srcdir/test/lib/timeline.sql
\set ECHO all

SELECT start('retention', 'Channel retention', '2025-03-03',
	variants => '{today,fenced,strict}',
	intro => 'Workers change channel 7''s message retention under lock:retention, a 30-second lock, '
		'and carry a fencing token from a counter at 32. W1 takes the lock (token 33) and pauses past '
		'its expiry; W2 takes it over (token 34); then both write, W1 twice.',
	lesson => 'A fencing token only helps if the write checks it: the team''s WHERE fence <= $2 does, '
		'and so does the fence trigger, without any WHERE clause. With strict, a write must also carry '
		'the lease''s live token, so the stale W1 is refused even before W2 has written.');

SELECT setup($$
	CREATE TABLE channels (id int PRIMARY KEY, retention_days int NOT NULL, fence bigint NOT NULL);
	INSERT INTO channels VALUES (7, 60, 32);
$$);
SELECT setup($$ SELECT redis('SET lock:retention:fence 32') $$, '{today}');
SELECT setup($$ SELECT fence_protect('channels', column_name => 'fence') $$, '{fenced}');
SELECT setup($$ SELECT fence_protect('channels', column_name => 'fence',
									 lease => 'lock:retention', strict => true) $$, '{strict}');

INSERT INTO script (at, worker, action, today, fenced) VALUES
	('10:00:00', 'W1', 'takes the lock (then pauses)',
		$$SELECT redis('SET lock:retention W1 NX PX 30000')$$,
		$$SELECT set_token(fence_try_lease('lock:retention', '30 s'))$$),
	('10:00:00', 'W1', 'takes a token',
		$$SELECT set_token(redis('INCR lock:retention:fence'))$$,
		NULL),
	('10:00:31', 'W2', 'takes the lock (W1''s ran out at 10:00:30)',
		$$SELECT redis('SET lock:retention W2 NX PX 30000')$$,
		$$SELECT set_token(fence_try_lease('lock:retention', '30 s'))$$),
	('10:00:31', 'W2', 'takes a token',
		$$SELECT set_token(redis('INCR lock:retention:fence'))$$,
		NULL),
	('10:00:40', 'W1', 'writes 30 days',
		$$UPDATE channels SET retention_days = 30, fence = my_token() WHERE id = 7 AND fence <= my_token()$$,
		$$UPDATE channels SET retention_days = 30 WHERE id = 7$$),
	('10:00:40', 'observer', 'reads the row',
		$$SELECT retention_days || ' days, fence ' || fence FROM channels WHERE id = 7$$,
		$$SELECT retention_days || ' days, fence ' || fence FROM channels WHERE id = 7$$),
	('10:00:45', 'W2', 'writes 90 days',
		$$UPDATE channels SET retention_days = 90, fence = my_token() WHERE id = 7 AND fence <= my_token()$$,
		$$UPDATE channels SET retention_days = 90 WHERE id = 7$$),
	('10:00:45', 'observer', 'reads the row',
		$$SELECT retention_days || ' days, fence ' || fence FROM channels WHERE id = 7$$,
		$$SELECT retention_days || ' days, fence ' || fence FROM channels WHERE id = 7$$),
	('10:00:50', 'W1', 'writes 30 days again',
		$$UPDATE channels SET retention_days = 30, fence = my_token() WHERE id = 7 AND fence <= my_token()$$,
		$$UPDATE channels SET retention_days = 30 WHERE id = 7$$),
	('10:00:50', 'observer', 'reads the row',
		$$SELECT retention_days || ' days, fence ' || fence FROM channels WHERE id = 7$$,
		$$SELECT retention_days || ' days, fence ' || fence FROM channels WHERE id = 7$$);


-- When a worker is frozen (for the pictures; the script leaves the gap).
SELECT pause('W1', '10:00:00', '10:00:40', 'paused 40 s');

SELECT * FROM play();
SELECT * FROM results('strict');

-- The row at the end, and the outcomes doc/incidents.md states.
SELECT * FROM rows('SELECT id, retention_days, fence FROM channels');

INSERT INTO verdict (side, claim, ok) VALUES
	('today', 'W1 gets token 33 at 10:00:00, W2 token 34 at 10:00:31',
		outcome('today', '10:00:00', 'W1', '%token') = '33'
		AND outcome('today', '10:00:31', 'W2', '%token') = '34'),
	('today', 'W1 writes 30 days at 10:00:40 (fence 33)',
		outcome('today', '10:00:40', 'W1') = 'UPDATE 1'
		AND outcome('today', '10:00:40', 'observer') = '30 days, fence 33'),
	('today', 'W2 writes 90 days at 10:00:45 (fence 34)',
		outcome('today', '10:00:45', 'W2') = 'UPDATE 1'
		AND outcome('today', '10:00:45', 'observer') = '90 days, fence 34'),
	('today', 'W1''s write at 10:00:50 matches 0 rows; the row ends at 90 days, fence 34',
		outcome('today', '10:00:50', 'W1') = 'UPDATE 0'
		AND outcome('today', '10:00:50', 'observer') = '90 days, fence 34'),
	('with fence', 'W1 gets token 33 at 10:00:00, W2 token 34 at 10:00:31',
		outcome('fenced', '10:00:00', 'W1', 'takes the lock%') = '33'
		AND outcome('fenced', '10:00:31', 'W2', 'takes the lock%') = '34'),
	('with fence', 'without the WHERE clause, the trigger gives the same: 30 days (fence 33), then 90 (34)',
		outcome('fenced', '10:00:40', 'observer') = '30 days, fence 33'
		AND outcome('fenced', '10:00:45', 'observer') = '90 days, fence 34'),
	('with fence', 'the trigger rejects W1''s write at 10:00:50 (LF001); the row ends at 90 days, fence 34',
		outcome('fenced', '10:00:50', 'W1') LIKE 'ERROR LF001:%'
		AND outcome('fenced', '10:00:50', 'observer') = '90 days, fence 34'),
	('with fence', 'strict also rejects W1 at 10:00:40 (LF002): the row keeps 60 days, fence 32',
		outcome('strict', '10:00:40', 'W1') LIKE 'ERROR LF002:%'
		AND outcome('strict', '10:00:40', 'observer') = '60 days, fence 32'),
	('with fence', 'strict: W2''s write is taken, W1''s at 10:00:50 rejected (LF001); ends at 90 days, fence 34',
		outcome('strict', '10:00:45', 'W2') = 'UPDATE 1'
		AND outcome('strict', '10:00:50', 'W1') LIKE 'ERROR LF001:%'
		AND outcome('strict', '10:00:50', 'observer') = '90 days, fence 34');

SELECT side, claim, ok FROM verdict ORDER BY n;

SELECT finish();
