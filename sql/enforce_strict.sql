-- strict: the write's token must be the current live token of the trigger's
-- lease, at the write and again at COMMIT.  Tokens of real leases are
-- compared, never printed; where a message would show one, only its
-- SQLSTATE is shown (VERBOSITY sqlstate).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

CREATE TEMP VIEW enf_counts AS
  SELECT coalesce(sum(writes_accepted), 0) AS writes_accepted,
         coalesce(sum(writes_rejected), 0) AS writes_rejected,
         coalesce(sum(writes_skipped), 0) AS writes_skipped,
         coalesce(sum(commits_aborted), 0) AS commits_aborted
    FROM fence_stats WHERE database = current_database();
SELECT writes_accepted AS acc0, writes_rejected AS rej0, writes_skipped AS skip0,
       commits_aborted AS abort0
  FROM enf_counts \gset

CREATE TABLE enf_s (id int PRIMARY KEY, v text, fence bigint NOT NULL DEFAULT 0);
INSERT INTO enf_s VALUES (1, 'a', 0), (2, 'b', 0);
SELECT fence_protect('enf_s', lease => 'enfs:retention', strict => true);

-- Holding the lease: accepted and stamped.
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t1 \gset
UPDATE enf_s SET v = 'w1' WHERE id = 1 RETURNING fence = :t1 AS stamped;
-- The lease runs out: the same token is rejected before anyone else wrote.
SELECT fence_advance_clock('31 seconds') IS NOT NULL AS clock_moved;
SELECT fence_lease_status('enfs:retention', :t1);
\set VERBOSITY sqlstate
UPDATE enf_s SET v = 'w1 late' WHERE id = 1;
DELETE FROM enf_s WHERE id = 2;
INSERT INTO enf_s VALUES (3, 'c', 0);
\set VERBOSITY default
-- The whole message, on a table whose lease nobody ever took (so its
-- status is "released"), with a token of our own choosing.
CREATE TABLE enf_msg (id int, fence bigint);
SELECT fence_protect('enf_msg', lease => 'enfs:never-taken', strict => true);
BEGIN;
SELECT fence_use_token(5);
INSERT INTO enf_msg VALUES (1, 0);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- Taken again: a new token, accepted.
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t2 \gset
SELECT :t2 > :t1 AS newer;
UPDATE enf_s SET v = 'w2' WHERE id = 1 RETURNING fence = :t2 AS stamped;
-- A value set in the fence column is checked too (one above every token
-- this database issued is refused before that: 22023).
\set VERBOSITY sqlstate
UPDATE enf_s SET v = 'old', fence = :t1 WHERE id = 2;
UPDATE enf_s SET v = 'higher', fence = :t2 + 1 WHERE id = 2;
\set VERBOSITY default
UPDATE enf_s SET v = 'mine', fence = :t2 WHERE id = 2 RETURNING fence = :t2 AS stamped;
-- No token is still allowed without require_token.
SELECT fence_release('enfs:retention', :t2);
SELECT fence_current_token() IS NULL AS no_token;
UPDATE enf_s SET v = 'manual' WHERE id = 1 RETURNING fence = :t2 AS unchanged;

-- The COMMIT-time check.  Each transaction writes while it holds the lease,
-- then loses it before COMMIT.
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t3 \gset
-- Expired:
BEGIN;
UPDATE enf_s SET v = 'paused' WHERE id = 1;
SELECT fence_advance_clock('31 seconds') IS NOT NULL AS clock_moved;
\set VERBOSITY sqlstate
COMMIT;
\set VERBOSITY default
SELECT v FROM enf_s WHERE id = 1;
-- Released (by this session):
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t4 \gset
BEGIN;
UPDATE enf_s SET v = 'released' WHERE id = 1;
SELECT fence_release('enfs:retention', :t4);
\set VERBOSITY sqlstate
COMMIT;
\set VERBOSITY default
-- Broken by an admin:
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t5 \gset
BEGIN;
UPDATE enf_s SET v = 'broken' WHERE id = 1;
SELECT fence_break('enfs:retention') = :t5 AS broke_t5;
\set VERBOSITY sqlstate
COMMIT;
\set VERBOSITY default
SELECT v FROM enf_s WHERE id = 1;
-- The check at each row is exact, not only the one at COMMIT: on the
-- frozen virtual clock, within one transaction, the row written after a
-- break, or after a renewal that moved the end of the lease before now,
-- is rejected at once, though the row before it passed.  (Breaking its own
-- lease takes the token out of effect for this session, so the write
-- after the break carries the token in the fence column, as a worker that
-- was not told would.)
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t5b \gset
BEGIN;
UPDATE enf_s SET v = 'before break', fence = :t5b WHERE id = 1 RETURNING fence = :t5b AS stamped;
SELECT fence_break('enfs:retention') = :t5b AS broke_t5b;
\set VERBOSITY sqlstate
UPDATE enf_s SET v = 'after break', fence = :t5b WHERE id = 2;
\set VERBOSITY default
ROLLBACK;
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t5c \gset
BEGIN;
UPDATE enf_s SET v = 'before renewal' WHERE id = 1 RETURNING fence = :t5c AS stamped;
SELECT fence_renew('enfs:retention', :t5c, '1 second') AS renewed_shorter;
SELECT fence_advance_clock('2 seconds') IS NOT NULL AS clock_moved;
\set VERBOSITY sqlstate
UPDATE enf_s SET v = 'after renewal' WHERE id = 2;
\set VERBOSITY default
ROLLBACK;
SELECT v FROM enf_s ORDER BY id;
-- Superseded: the lease expired and was granted again (here to this
-- session, with a new token) before COMMIT.  The message names the lease
-- (its detail, not shown, names the token and its status).
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t6 \gset
BEGIN;
UPDATE enf_s SET v = 'superseded' WHERE id = 1;
SELECT fence_advance_clock('31 seconds') IS NOT NULL AS clock_moved;
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint > :t6 AS taken_over;
\set VERBOSITY terse
COMMIT;
\set VERBOSITY default
-- Still held at COMMIT: commits.
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t7 \gset
BEGIN;
UPDATE enf_s SET v = 'held' WHERE id = 1;
COMMIT;
SELECT v, fence = :t7 AS stamped FROM enf_s WHERE id = 1;
-- A write rolled back to a savepoint is not checked at COMMIT.
BEGIN;
SAVEPOINT s;
UPDATE enf_s SET v = 'rolled back' WHERE id = 1;
ROLLBACK TO SAVEPOINT s;
SELECT fence_release('enfs:retention', :t7);
COMMIT;
SELECT v FROM enf_s WHERE id = 1;
-- A released savepoint keeps its writes: checked.
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t8 \gset
BEGIN;
SAVEPOINT s;
UPDATE enf_s SET v = 'released savepoint' WHERE id = 1;
RELEASE SAVEPOINT s;
SELECT fence_release('enfs:retention', :t8);
\set VERBOSITY sqlstate
COMMIT;
\set VERBOSITY default
SELECT v FROM enf_s WHERE id = 1;
-- PREPARE TRANSACTION after a strict write is refused (0A000): nothing
-- checks the lease at COMMIT PREPARED, which may come long after the lease
-- passed on to another holder.
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t9 \gset
BEGIN;
UPDATE enf_s SET v = 'prepared' WHERE id = 1;
PREPARE TRANSACTION 'enf_held';
SELECT count(*) AS prepared FROM pg_prepared_xacts WHERE gid = 'enf_held';
SELECT fence_advance_clock('31 seconds') IS NOT NULL AS clock_moved;
SELECT fence_try_lease('enfs:retention', '30 seconds')::bigint AS t10 \gset
SELECT :t10 > :t9 AS taken_over;
\set VERBOSITY terse
COMMIT PREPARED 'enf_held';
\set VERBOSITY default
SELECT v FROM enf_s WHERE id = 1;
-- A strict write rolled back to a savepoint does not count.
BEGIN;
SAVEPOINT s;
UPDATE enf_s SET v = 'rolled back' WHERE id = 1;
ROLLBACK TO SAVEPOINT s;
PREPARE TRANSACTION 'enf_clean';
COMMIT PREPARED 'enf_clean';
SELECT v FROM enf_s WHERE id = 1;
-- A transaction-scoped lease is still held when the COMMIT check runs.
SELECT fence_release('enfs:retention', :t10);
BEGIN;
SELECT fence_try_xact_lease('enfs:retention', '30 seconds')::bigint AS tx \gset
UPDATE enf_s SET v = 'xact lease' WHERE id = 1;
COMMIT;
SELECT v, fence = :tx AS stamped FROM enf_s WHERE id = 1;
SELECT fence_lease_status('enfs:retention', :tx);

-- strict with on_stale=skip: writes under a lease not held are left out.
-- One lease per row: this session holds row 1's only.
CREATE TABLE enf_rows (id int PRIMARY KEY, v text, fence bigint NOT NULL DEFAULT 0);
INSERT INTO enf_rows SELECT g, 'x', 0 FROM generate_series(1, 3) g;
SELECT fence_protect('enf_rows', lease => 'enfs:row-{id}', strict => true, on_stale => 'skip');
SELECT fence_try_lease('enfs:row-1', '30 seconds')::bigint AS r1 \gset
UPDATE enf_rows SET v = 'mine' RETURNING id, fence = :r1 AS stamped;
-- With on_stale=error the first row not covered fails the statement.
SELECT fence_protect('enf_rows', lease => 'enfs:row-{id}', strict => true);
\set VERBOSITY sqlstate
UPDATE enf_rows SET v = 'all';
\set VERBOSITY default
-- Deleting row 1 under its lease.
DELETE FROM enf_rows WHERE id = 1 RETURNING id;
SELECT fence_release('enfs:row-1', :r1);
-- A NULL in the lease name's column.
CREATE TABLE enf_nul (id int, fence bigint);
SELECT fence_protect('enf_nul', lease => 'enfs:nul-{id}', strict => true);
INSERT INTO enf_nul VALUES (NULL, 0);
\echo :LAST_ERROR_SQLSTATE
-- A lease name that grows past 200 bytes with the row's value: at 200 it
-- is a lease name (not held by token 1: LF002), at 201 an error.
CREATE TABLE enf_long (name text, fence bigint);
SELECT fence_protect('enf_long', lease => 'enfs:{name}', strict => true);
INSERT INTO enf_long VALUES (repeat('n', 195), 1);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO enf_long VALUES (repeat('n', 196), 0);
\echo :LAST_ERROR_SQLSTATE
-- strict and require_token: a write without a token fails with LF003.
SELECT fence_protect('enf_s', lease => 'enfs:retention', strict => true, require_token => true);
UPDATE enf_s SET v = 'no token' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE

-- The counters.  Rejected: 3 writes after expiry, 1 under the lease never
-- taken, 2 with a token set in the fence column, 1 row whose lease is not
-- held, 1 at 200 bytes, 1 without a token.  Skipped: rows 2 and 3.  Commits
-- aborted: expired, released, broken, superseded, released savepoint.
SELECT writes_accepted - :acc0 > 0 AS some_accepted,
       writes_rejected - :rej0 AS rejected,
       writes_skipped - :skip0 AS skipped,
       commits_aborted - :abort0 AS commits_aborted
  FROM enf_counts;

DROP TABLE enf_s, enf_msg, enf_rows, enf_nul, enf_long;
