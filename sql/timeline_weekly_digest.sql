-- Incident 4 of doc/incidents.md: the weekly digest.
--
-- Any worker may run channel 9's weekly digest job: BEGIN; SELECT
-- pg_try_advisory_xact_lock(9), stopping with ROLLBACK if false; SELECT status
-- FROM digests WHERE channel_id = 9, stopping with COMMIT unless 'pending';
-- COMMIT; then it sends the digest and runs UPDATE digests SET status = 'sent'
-- WHERE channel_id = 9.  At 08:00:00 W1 starts and pauses 2 minutes right after
-- its COMMIT.  At 08:00:30 W2 starts and pauses 2 minutes right after its
-- status read, before its COMMIT.  At 08:01:00 W3 starts and does not pause.
--
-- today:      the incident's job as written, with PostgreSQL's own transaction-level
--             advisory lock.  The lock ends at W1's COMMIT, but the work it
--             guards (send, mark sent) comes after it: two digests go out.
-- with fence: the fix is where the claim is made, not which lock: the claim
--             (status 'sending') is written inside the locked transaction, so
--             the lock's scope is the transaction's scope.  The lock is fence's
--             transaction lease on the same key, fence_try_xact_lease(9, ...),
--             and the digests row is fenced, so the claim records W1's token.
--             One digest goes out.
--
-- How it is replayed (fresh database per variant, one session per worker,
-- virtual clock): test/lib/timeline.sql.  A "-" in the story: the step does not
-- happen in that design (the job stops when refused or not 'pending').
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
\i :abs_srcdir/test/lib/timeline.sql
\set ECHO all

SELECT start('weekly_digest', 'The weekly digest', '2025-03-03',
	intro => 'Channel 9''s weekly digest is sent by whichever worker runs the job first: it takes a '
		'transaction-level advisory lock, checks that the digest is still pending, commits, and only '
		'then sends it and marks it sent. W1 pauses right after its COMMIT, W2 right after its check.',
	lesson => 'A transaction-level lock protects only what happens inside the transaction: today the '
		'send and the mark come after COMMIT, so W2 finds the digest still pending and it goes out twice. '
		'Claim the row inside the locked transaction (lock scope = transaction scope) and it goes out once.');

SELECT setup($$
	CREATE TABLE digests (channel_id int PRIMARY KEY, status text NOT NULL, fence bigint NOT NULL);
	INSERT INTO digests VALUES (9, 'pending', 32);
$$);
SELECT setup($$ SELECT fence_protect('digests', column_name => 'fence') $$, '{fenced}');

INSERT INTO script (at, worker, action, today, fenced) VALUES
	('08:00:00', 'W1', 'BEGIN',
		$$BEGIN$$, $$BEGIN$$),
	('08:00:00', 'W1', 'takes the transaction lock on key 9',
		$$SELECT pg_try_advisory_xact_lock(9)$$,
		$$SELECT fence_try_xact_lease(9, '5 min')$$),
	('08:00:00', 'W1', 'reads the status',
		$$SELECT status FROM digests WHERE channel_id = 9$$,
		$$SELECT status FROM digests WHERE channel_id = 9$$),
	('08:00:00', 'W1', 'claims the digest',
		NULL,
		$$UPDATE digests SET status = 'sending' WHERE channel_id = 9$$),
	('08:00:00', 'W1', 'COMMIT (then pauses 2 min)',
		$$COMMIT$$, $$COMMIT$$),
	('08:00:30', 'W2', 'BEGIN',
		$$BEGIN$$, $$BEGIN$$),
	('08:00:30', 'W2', 'takes the transaction lock on key 9',
		$$SELECT pg_try_advisory_xact_lock(9)$$,
		$$SELECT fence_try_xact_lease(9, '5 min')$$),
	('08:00:30', 'W2', 'reads the status (then pauses 2 min)',
		$$SELECT status FROM digests WHERE channel_id = 9$$,
		$$SELECT status FROM digests WHERE channel_id = 9$$),
	('08:01:00', 'W3', 'BEGIN',
		$$BEGIN$$, $$BEGIN$$),
	('08:01:00', 'W3', 'takes the transaction lock on key 9',
		$$SELECT pg_try_advisory_xact_lock(9)$$,
		$$SELECT fence_try_xact_lease(9, '5 min')$$),
	('08:01:00', 'W3', 'ROLLBACK (refused)',
		$$ROLLBACK$$, $$ROLLBACK$$),
	('08:02:00', 'W1', 'sends the digest',
		$$SELECT send('weekly digest of channel 9')$$,
		$$SELECT send('weekly digest of channel 9')$$),
	('08:02:00', 'W1', 'marks it sent',
		$$UPDATE digests SET status = 'sent' WHERE channel_id = 9$$,
		$$UPDATE digests SET status = 'sent' WHERE channel_id = 9$$),
	('08:02:30', 'W2', 'COMMIT',
		$$COMMIT$$, $$COMMIT$$),
	('08:02:30', 'W2', 'sends the digest',
		$$SELECT send('weekly digest of channel 9')$$,
		NULL),
	('08:02:30', 'W2', 'marks it sent',
		$$UPDATE digests SET status = 'sent' WHERE channel_id = 9$$,
		NULL);


-- When a worker is frozen (for the pictures; the script leaves the gap).
SELECT pause('W1', '08:00:00', '08:02:00', 'paused 2 min');
SELECT pause('W2', '08:00:30', '08:02:30', 'paused 2 min');

SELECT * FROM play();

-- The digests that went out, the row at the end, and the outcomes doc/incidents.md states.
SELECT * FROM rows('SELECT at, worker, what FROM sent ORDER BY n');
SELECT * FROM rows('SELECT channel_id, status, fence FROM digests');

INSERT INTO verdict (side, claim, ok) VALUES
	('today', 'W1''s lock ends at its COMMIT: W2 takes it at 08:00:30 and reads ''pending''',
		outcome('today', '08:00:30', 'W2', 'takes%') = 't'
		AND outcome('today', '08:00:30', 'W2', 'reads%') = 'pending'),
	('today', 'W3 is refused at 08:01:00',
		outcome('today', '08:01:00', 'W3', 'takes%') = 'f'),
	('today', 'W1 sends at 08:02:00 and W2 at 08:02:30: two digests',
		ask('today', $$SELECT string_agg(at || ' ' || worker, ', ' ORDER BY n) FROM sent$$)
			= '08:02:00 W1, 08:02:30 W2'),
	('with fence', 'W1 claims the digest inside its locked transaction (token 33)',
		outcome('fenced', '08:00:00', 'W1', 'takes%') = '33'
		AND outcome('fenced', '08:00:00', 'W1', 'claims%') = 'UPDATE 1'),
	('with fence', 'W2 takes the lease at 08:00:30 (token 34) and finds the digest claimed',
		outcome('fenced', '08:00:30', 'W2', 'takes%') = '34'
		AND outcome('fenced', '08:00:30', 'W2', 'reads%') = 'sending'),
	('with fence', 'W3 is refused at 08:01:00',
		outcome('fenced', '08:01:00', 'W3', 'takes%') = 'NULL'),
	('with fence', 'one digest: W1''s at 08:02:00; the row ends ''sent''',
		ask('fenced', $$SELECT string_agg(at || ' ' || worker, ', ' ORDER BY n) FROM sent$$) = '08:02:00 W1'
		AND ask('fenced', 'SELECT status FROM digests') = 'sent');

SELECT side, claim, ok FROM verdict ORDER BY n;

SELECT finish();
