-- Incident 3 of doc/incidents.md: the channel export.
--
-- The interviewer: "The job reads channel 7's export row in Postgres, sends the
-- export, then marks the row done.  Any worker can pause for 6 minutes.  What
-- stops a second export?"  W1 starts at 12:00:00 and pauses for 6 minutes just
-- before it sends; W2 starts at 12:00:10 and, when refused, retries each
-- minute.  The lock: SET lock:export-7 <worker> NX PX 30000, and a token from
-- INCR lock:export-7:fence; the row's fence and the counter start at 32.
--
-- today:      the incident's design: Redis lock and INCR counter (modelled by
--             redis() in test/lib/timeline.sql, PX expiry read from the lease
--             clock); mark-done checks the token in its WHERE clause.  The
--             export provider is modelled by export_send(): every call is an
--             export sent (the table sent), and the provider table lists the
--             exports it performed.
-- with fence: fence_try_lease('lock:export-7', '30 s'), the trigger on the
--             export row, and fence_assert_current right before the send.
--             The honest answer to the interviewer: none of these can stop
--             W1's send at 12:06.  W1's check passed at 12:00:00; its pause
--             falls between that check and the send, and nothing in
--             PostgreSQL sits between W1 and the provider.  The fence rejects
--             W1's mark-done, which is too late for the export itself.  What
--             stops a second export is the provider: the send carries an
--             idempotency key that names the work (the export request, not
--             the worker or its token), and the provider performs each key
--             once (modelled by a unique key on the provider table).  An
--             outbox row written under the fence in the mark-done transaction,
--             and sent once by a relay, would work as well.
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

SELECT start('channel_export', 'Channel export', '2025-03-03',
	intro => 'A job reads channel 7''s export row, sends the export to a provider, then marks the row '
		'done, under lock:export-7, a 30-second lock with a fencing token. W1 checks its lock and pauses '
		'6 minutes just before sending; W2 gets the lock once W1''s runs out and does the export.',
	lesson => 'No lock or fence can stop a send that is already past its last check: W1''s export at '
		'12:06 reaches the provider with or without fence, and the fence only rejects its mark-done. '
		'What stops the second export is an idempotency key the provider dedupes on (or an outbox '
		'written under the fence): the lease avoids duplicate work, the key rejects the duplicate effect.');

SELECT setup($$
	CREATE TABLE exports (channel_id int PRIMARY KEY, request text NOT NULL,
						  status text NOT NULL, fence bigint NOT NULL);
	INSERT INTO exports VALUES (7, 'export-7-2025-03-03', 'pending', 32);

	-- The export provider: what it performed.  An export sent with an
	-- idempotency key it has seen is acknowledged and not performed again.
	CREATE TABLE provider (n int GENERATED ALWAYS AS IDENTITY, channel_id int NOT NULL,
						   idempotency_key text UNIQUE, worker text NOT NULL, at time NOT NULL);
	CREATE FUNCTION export_send(channel int, key text DEFAULT NULL) RETURNS text
	LANGUAGE plpgsql AS $fn$
	BEGIN
		PERFORM send('export of channel ' || channel);
		INSERT INTO provider (channel_id, idempotency_key, worker, at)
			VALUES (channel, key, current_setting('application_name'),
					(fence_now() AT TIME ZONE 'UTC')::time)
			ON CONFLICT (idempotency_key) DO NOTHING;
		IF FOUND THEN
			RETURN 'exported';
		END IF;
		RETURN 'duplicate key: provider did nothing';
	END
	$fn$;
$$);
SELECT setup($$ SELECT redis('SET lock:export-7:fence 32') $$, '{today}');
SELECT setup($$ SELECT fence_protect('exports', column_name => 'fence') $$, '{fenced}');

INSERT INTO script (at, worker, action, today, fenced) VALUES
	('12:00:00', 'W1', 'takes the lock',
		$$SELECT redis('SET lock:export-7 W1 NX PX 30000')$$,
		$$SELECT set_token(fence_try_lease('lock:export-7', '30 s'))$$),
	('12:00:00', 'W1', 'takes a token',
		$$SELECT set_token(redis('INCR lock:export-7:fence'))$$,
		NULL),
	('12:00:00', 'W1', 'reads the export row',
		$$SELECT status FROM exports WHERE channel_id = 7$$,
		$$SELECT status FROM exports WHERE channel_id = 7$$),
	('12:00:00', 'W1', 'checks its lock, then pauses 6 min',
		NULL,
		$$SELECT fence_assert_current('lock:export-7', my_token())$$),
	('12:00:10', 'W2', 'takes the lock',
		$$SELECT redis('SET lock:export-7 W2 NX PX 30000')$$,
		$$SELECT set_token(fence_try_lease('lock:export-7', '30 s'))$$),
	('12:01:10', 'W2', 'retries the lock (W1''s ran out at 12:00:30)',
		$$SELECT redis('SET lock:export-7 W2 NX PX 30000')$$,
		$$SELECT set_token(fence_try_lease('lock:export-7', '30 s'))$$),
	('12:01:10', 'W2', 'takes a token',
		$$SELECT set_token(redis('INCR lock:export-7:fence'))$$,
		NULL),
	('12:01:10', 'W2', 'reads the export row',
		$$SELECT status FROM exports WHERE channel_id = 7$$,
		$$SELECT status FROM exports WHERE channel_id = 7$$),
	('12:01:10', 'W2', 'checks its lock',
		NULL,
		$$SELECT fence_assert_current('lock:export-7', my_token())$$),
	('12:01:10', 'W2', 'sends the export',
		$$SELECT export_send(7)$$,
		$$SELECT export_send(channel_id, request) FROM exports WHERE channel_id = 7$$),
	('12:01:10', 'W2', 'marks the row done',
		$$UPDATE exports SET status = 'done', fence = my_token() WHERE channel_id = 7 AND fence <= my_token()$$,
		$$UPDATE exports SET status = 'done' WHERE channel_id = 7$$),
	('12:06:00', 'W1', 'wakes, sends the export',
		$$SELECT export_send(7)$$,
		$$SELECT export_send(channel_id, request) FROM exports WHERE channel_id = 7$$),
	('12:06:00', 'W1', 'marks the row done',
		$$UPDATE exports SET status = 'done', fence = my_token() WHERE channel_id = 7 AND fence <= my_token()$$,
		$$UPDATE exports SET status = 'done' WHERE channel_id = 7$$);


-- When a worker is frozen (for the pictures; the script leaves the gap).
SELECT pause('W1', '12:00:00', '12:06:00', 'paused 6 min');

SELECT * FROM play();

-- What was sent, what the provider did, the row at the end, and the
-- outcomes doc/incidents.md states.
SELECT * FROM rows('SELECT at, worker, what FROM sent ORDER BY n');
SELECT * FROM rows('SELECT at, worker, idempotency_key FROM provider ORDER BY n');
SELECT * FROM rows('SELECT channel_id, status, fence FROM exports');

INSERT INTO verdict (side, claim, ok) VALUES
	('today', 'W2 is refused at 12:00:10 and gets the lock at 12:01:10 (token 34)',
		outcome('today', '12:00:10', 'W2') = 'NULL'
		AND outcome('today', '12:01:10', 'W2', 'retries%') = 'OK'
		AND outcome('today', '12:01:10', 'W2', '%token') = '34'),
	('today', 'W2 exports and marks the row done',
		outcome('today', '12:01:10', 'W2', 'sends%') = 'exported'
		AND outcome('today', '12:01:10', 'W2', 'marks%') = 'UPDATE 1'),
	('today', 'W1 exports again at 12:06: two exports performed',
		outcome('today', '12:06:00', 'W1', '%sends%') = 'exported'
		AND ask('today', 'SELECT count(*) FROM provider') = '2'),
	('today', 'W1''s mark-done with token 33 matches 0 rows',
		outcome('today', '12:06:00', 'W1', 'marks%') = 'UPDATE 0'),
	('with fence', 'W2 is refused at 12:00:10 and gets token 34 at 12:01:10',
		outcome('fenced', '12:00:10', 'W2') = 'NULL'
		AND outcome('fenced', '12:01:10', 'W2', 'retries%') = '34'),
	('with fence', 'W1''s check before its send passed at 12:00:00',
		outcome('fenced', '12:00:00', 'W1', 'checks%') = 'ok'),
	('with fence', 'the lease and the fence do not stop W1''s send at 12:06: it reaches the provider',
		ask('fenced', $$SELECT count(*) FROM sent WHERE worker = 'W1'$$) = '1'),
	('with fence', 'the provider''s idempotency key does: one export performed, by W2',
		outcome('fenced', '12:06:00', 'W1', '%sends%') = 'duplicate key: provider did nothing'
		AND ask('fenced', 'SELECT string_agg(worker, '','') FROM provider') = 'W2'),
	('with fence', 'W1''s mark-done with token 33 is rejected (LF001); the row is done, fence 34',
		outcome('fenced', '12:06:00', 'W1', 'marks%') LIKE 'ERROR LF001:%'
		AND ask('fenced', $$SELECT status || ', fence ' || fence FROM exports$$) = 'done, fence 34');

SELECT side, claim, ok FROM verdict ORDER BY n;

SELECT finish();
