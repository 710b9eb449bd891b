-- Incident 6 of doc/incidents.md: the seat map.
--
-- A nightly job rebuilds event 12's seat-map snapshot.  A worker takes
-- SET lock:seatmap <worker> NX PX 30000 and a token from INCR
-- lock:seatmap:fence, reads the row, builds, and writes with
--     UPDATE seatmaps SET status = 'ready', snapshot = $1 WHERE id = 12
-- The row's fence and the counter are at 32.  W1 takes the lock at 02:00:00
-- (token 33) and reads status 'building'; after its last read at 02:00:05 it
-- freezes for 60 s before its write arrives.  W2 gets the lock at 02:00:31
-- (token 34), reads 'building' and writes at 02:00:40.  At 02:00:50 an admin
-- starts a manual rebuild, which sets the status back to 'building'.  W1's
-- write arrives at 02:01:05.  The team wants W2's write to change the row and
-- W1's not to.
--
-- today:      the incident's design: Redis lock and INCR counter (modelled by
--             redis() in test/lib/timeline.sql, PX expiry read from the lease
--             clock).  The token is taken but the UPDATE never checks it.
-- with fence: fence_try_lease('lock:seatmap', '30 s') and the trigger on the
--             row's fence column; the workers' UPDATE is the incident's, unchanged.
--             The admin takes no lease, so its write carries no token and is
--             allowed (an operator's manual fix) without touching the fence.
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

SELECT start('seatmap', 'The seat map', '2025-03-03',
	intro => 'A nightly job rebuilds event 12''s seat-map snapshot under lock:seatmap, a 30-second lock '
		'with a fencing token. W1 reads the row, then freezes for a minute before its write arrives; '
		'meanwhile W2 does the rebuild and an admin starts a manual one.',
	lesson => 'Taking a token is not enough: today nobody checks it, so W1''s late write overwrites W2''s '
		'snapshot and the admin''s status. The trigger checks every write against the row''s fence, so '
		'the same UPDATE from W1 is rejected and both later writes stay.');

SELECT setup($$
	CREATE TABLE seatmaps (id int PRIMARY KEY, status text NOT NULL, snapshot text, fence bigint NOT NULL);
	INSERT INTO seatmaps VALUES (12, 'building', 'last night''s snapshot', 32);
$$);
SELECT setup($$ SELECT redis('SET lock:seatmap:fence 32') $$, '{today}');
SELECT setup($$ SELECT fence_protect('seatmaps', column_name => 'fence') $$, '{fenced}');

INSERT INTO script (at, worker, action, today, fenced) VALUES
	('02:00:00', 'W1', 'takes the lock',
		$$SELECT redis('SET lock:seatmap W1 NX PX 30000')$$,
		$$SELECT fence_try_lease('lock:seatmap', '30 s')$$),
	('02:00:00', 'W1', 'takes a token',
		$$SELECT redis('INCR lock:seatmap:fence')$$,
		NULL),
	('02:00:05', 'W1', 'reads the status (then freezes 60 s)',
		$$SELECT status FROM seatmaps WHERE id = 12$$,
		$$SELECT status FROM seatmaps WHERE id = 12$$),
	('02:00:31', 'W2', 'takes the lock (W1''s ran out at 02:00:30)',
		$$SELECT redis('SET lock:seatmap W2 NX PX 30000')$$,
		$$SELECT fence_try_lease('lock:seatmap', '30 s')$$),
	('02:00:31', 'W2', 'takes a token',
		$$SELECT redis('INCR lock:seatmap:fence')$$,
		NULL),
	('02:00:31', 'W2', 'reads the status',
		$$SELECT status FROM seatmaps WHERE id = 12$$,
		$$SELECT status FROM seatmaps WHERE id = 12$$),
	('02:00:40', 'W2', 'writes its snapshot',
		$$UPDATE seatmaps SET status = 'ready', snapshot = 'W2''s snapshot' WHERE id = 12$$,
		$$UPDATE seatmaps SET status = 'ready', snapshot = 'W2''s snapshot' WHERE id = 12$$),
	('02:00:50', 'admin', 'starts a manual rebuild',
		$$UPDATE seatmaps SET status = 'building' WHERE id = 12$$,
		$$UPDATE seatmaps SET status = 'building' WHERE id = 12$$),
	('02:01:05', 'W1', 'its write arrives',
		$$UPDATE seatmaps SET status = 'ready', snapshot = 'W1''s snapshot' WHERE id = 12$$,
		$$UPDATE seatmaps SET status = 'ready', snapshot = 'W1''s snapshot' WHERE id = 12$$);


-- When a worker is frozen (for the pictures; the script leaves the gap).
SELECT pause('W1', '02:00:05', '02:01:05', 'frozen 60 s');

SELECT * FROM play();

-- The row at the end, and the outcomes doc/incidents.md states.
SELECT * FROM rows('SELECT id, status, snapshot, fence FROM seatmaps');

INSERT INTO verdict (side, claim, ok) VALUES
	('today', 'W1 gets token 33 at 02:00:00, W2 token 34 at 02:00:31',
		outcome('today', '02:00:00', 'W1', '%token') = '33'
		AND outcome('today', '02:00:31', 'W2', '%token') = '34'),
	('today', 'W2''s write at 02:00:40 and the admin''s at 02:00:50 change the row',
		outcome('today', '02:00:40', 'W2') = 'UPDATE 1'
		AND outcome('today', '02:00:50', 'admin') = 'UPDATE 1'),
	('today', 'W1''s write at 02:01:05 overwrites W2''s snapshot and the admin''s ''building''',
		outcome('today', '02:01:05', 'W1') = 'UPDATE 1'
		AND ask('today', $$SELECT status || ', ' || snapshot FROM seatmaps$$) = 'ready, W1''s snapshot'),
	('with fence', 'W1 gets token 33 at 02:00:00, W2 token 34 at 02:00:31',
		outcome('fenced', '02:00:00', 'W1', 'takes the lock%') = '33'
		AND outcome('fenced', '02:00:31', 'W2', 'takes the lock%') = '34'),
	('with fence', 'W2''s write and the admin''s (no token) change the row',
		outcome('fenced', '02:00:40', 'W2') = 'UPDATE 1'
		AND outcome('fenced', '02:00:50', 'admin') = 'UPDATE 1'),
	('with fence', 'the trigger rejects W1''s write at 02:01:05 (LF001)',
		outcome('fenced', '02:01:05', 'W1') LIKE 'ERROR LF001:%'),
	('with fence', 'W2''s snapshot and the admin''s status stay; the fence is 34',
		ask('fenced', $$SELECT status || ', ' || snapshot || ', fence ' || fence FROM seatmaps$$)
			= 'building, W2''s snapshot, fence 34');

SELECT side, claim, ok FROM verdict ORDER BY n;

SELECT finish();
