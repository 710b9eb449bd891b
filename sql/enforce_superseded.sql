-- A table protected with a lease name but not strict: a token below the
-- latest one the lease table knows for the row's lease (a newer holder took
-- it over) is stale, for a new row too, which has no fence of its own to
-- compare with.  Tokens of real leases are compared, never printed; where a
-- message would show one, only its SQLSTATE is shown (VERBOSITY sqlstate).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;

CREATE TEMP VIEW enf_counts AS
  SELECT coalesce(sum(rejected_stale), 0) AS rejected_stale,
         coalesce(sum(writes_skipped), 0) AS writes_skipped
    FROM fence_stats WHERE database = current_database();
SELECT rejected_stale AS stale0, writes_skipped AS skip0 FROM enf_counts \gset

CREATE TABLE enf_ss (id int PRIMARY KEY, v text, fence bigint NOT NULL DEFAULT 0);
SELECT fence_protect('enf_ss', lease => 'enfss:jobs');

-- Holder 1 (this session) writes, then pauses past its lease; holder 2 (a
-- detached lease, taken in another session) takes it over.
SELECT fence_try_lease('enfss:jobs', '30 seconds')::bigint AS t1 \gset
INSERT INTO enf_ss VALUES (1, 'by 1') RETURNING fence = :t1 AS stamped;
SELECT fence_advance_clock('31 seconds') IS NOT NULL AS clock_moved;
SELECT dblink_connect('enf_w2', 'dbname=' || current_database());
SELECT dblink_connect('enf_w3', 'dbname=' || current_database());  -- takes no lease
SELECT t2 FROM dblink('enf_w2',
  'SELECT fence_try_lease(''enfss:jobs'', ''30 seconds'', ''worker-2'')::bigint')
  AS t(t2 bigint) \gset
SELECT :t2 > :t1 AS newer, fence_lease_status('enfss:jobs', :t1) AS status_1;

-- Holder 1 resumes with its token still in effect: each way of writing a
-- new row is stale, as an UPDATE of a row holder 2 wrote would be.
SELECT fence_current_token('enfss:jobs') = :t1 AS token_1_in_effect;
\set VERBOSITY sqlstate
INSERT INTO enf_ss VALUES (2, 'insert');
INSERT INTO enf_ss SELECT 3, 'insert select';
COPY enf_ss (id, v) FROM stdin;
4	copy
\.
MERGE INTO enf_ss s USING (VALUES (5, 'merge')) AS m(id, v) ON s.id = m.id
  WHEN NOT MATCHED THEN INSERT (id, v) VALUES (m.id, m.v);
INSERT INTO enf_ss VALUES (6, 'upsert') ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v;
INSERT INTO enf_ss VALUES (1, 'upsert') ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v;
-- And the row holder 1 wrote itself, which holder 2 has not written yet:
-- its fence equals the token, but the lease table knows better.
UPDATE enf_ss SET v = 'update' WHERE id = 1;
DELETE FROM enf_ss WHERE id = 1;
\set VERBOSITY default
SELECT id, v, fence = :t1 AS fence_1 FROM enf_ss ORDER BY id;

-- The whole message, with a token of our own choosing, in the column and
-- in effect.  (0 is no token: a row given the column default 0 by a
-- session without one is an operator's write, as before.)
SELECT * FROM dblink('enf_w3', 'INSERT INTO enf_ss VALUES (9, ''no token'') RETURNING fence')
  AS t(fence bigint);
SELECT * FROM dblink('enf_w3', 'UPDATE enf_ss SET fence = 1 WHERE id = 9') AS t(x text);
SELECT * FROM dblink('enf_w3', 'DELETE FROM enf_ss WHERE id = 9') AS t(x text);
SELECT * FROM dblink('enf_w3', 'INSERT INTO enf_ss VALUES (7, ''given'', 1)') AS t(x text);
BEGIN;
SELECT fence_use_token(1, 'enfss:jobs');
INSERT INTO enf_ss VALUES (7, 'in effect');
ROLLBACK;

-- on_stale=skip leaves such rows out.
SELECT fence_protect('enf_ss', on_stale => 'skip', lease => 'enfss:jobs');
INSERT INTO enf_ss VALUES (2, 'skipped'), (3, 'skipped');
COPY enf_ss (id, v) FROM stdin;
4	skipped
\.
UPDATE enf_ss SET v = 'skipped' WHERE id = 1;
SELECT fence_protect('enf_ss', lease => 'enfss:jobs');

-- Holder 2's token is the latest: its rows go in, stamped.
SELECT * FROM dblink('enf_w2', 'BEGIN; SELECT fence_use_token(' || :t2 ||
  '); INSERT INTO enf_ss VALUES (2, ''by 2''); COMMIT') AS t(x text);
SELECT id, v, fence = :t2 AS fence_2 FROM enf_ss ORDER BY id;

-- A row moved into a partition protected on its own is a direct INSERT
-- there; under one protection, the UPDATE half decides, and is stale.
CREATE TABLE enf_sp (id int, part int, fence bigint NOT NULL DEFAULT 0)
  PARTITION BY LIST (part);
CREATE TABLE enf_sp1 PARTITION OF enf_sp FOR VALUES IN (1);
CREATE TABLE enf_sp2 PARTITION OF enf_sp FOR VALUES IN (2);
SELECT fence_protect('enf_sp', lease => 'enfss:jobs');
SELECT * FROM dblink('enf_w3', 'INSERT INTO enf_sp VALUES (1, 1)') AS t(x text);
\set VERBOSITY sqlstate
UPDATE enf_sp SET part = 2 WHERE id = 1;
\set VERBOSITY default
SELECT fence_unprotect('enf_sp');
SELECT fence_protect('enf_sp2', lease => 'enfss:jobs');
\set VERBOSITY sqlstate
UPDATE enf_sp SET part = 2 WHERE id = 1;
\set VERBOSITY default
SELECT tableoid::regclass AS partition, fence FROM enf_sp;

-- A lease with permits: a permit still held passes, though a newer permit
-- of the key was granted since; once released, it is stale like a lease.
SELECT fence_protect('enf_ss', lease => 'enfss:pool');
SELECT fence_try_permit('enfss:pool', 2, '30 seconds')::bigint AS p1 \gset
SELECT p2 FROM dblink('enf_w2',
  'SELECT fence_try_permit(''enfss:pool'', 2, ''30 seconds'', ''worker-2'')::bigint')
  AS t(p2 bigint) \gset
SELECT :p2 > :p1 AS newer, fence_lease_status('enfss:pool', :p1) AS status_p1;
INSERT INTO enf_ss VALUES (10, 'permit 1') RETURNING fence = :p1 AS fence_p1;
SELECT fence_release('enfss:pool', :p1);
SELECT fence_lease_status('enfss:pool', :p1) AS status_p1;
BEGIN;
SELECT fence_use_token(:p1, 'enfss:pool');
\set VERBOSITY sqlstate
INSERT INTO enf_ss VALUES (11, 'released permit 1');
\set VERBOSITY default
ROLLBACK;
SELECT released FROM dblink('enf_w2',
  'SELECT fence_release(''enfss:pool'', ' || :p2 || ')') AS t(released bool);
SELECT fence_protect('enf_ss', lease => 'enfss:jobs');

-- A token the lease table has no newer one of passes: a lease nobody took,
-- and, once holder 2 released it, this one (the table forgets a released
-- lease; strict mode refuses every token that is not the live one).
BEGIN;
SELECT fence_use_token(1, 'enfss:never-taken');
SELECT fence_protect('enf_ss', lease => 'enfss:never-taken');
INSERT INTO enf_ss VALUES (8, 'other lease') RETURNING fence;
ROLLBACK;
SELECT released FROM dblink('enf_w2',
  'SELECT fence_release(''enfss:jobs'', ' || :t2 || ')') AS t(released bool);
SELECT fence_lease_status('enfss:jobs', :t1) AS status_1;
INSERT INTO enf_ss VALUES (3, 'after release') RETURNING fence = :t1 AS fence_1;

SELECT rejected_stale - :stale0 AS rejected_stale,
       writes_skipped - :skip0 AS writes_skipped
  FROM enf_counts;

SELECT dblink_disconnect('enf_w2');
SELECT dblink_disconnect('enf_w3');
-- (Taken over: holder 1 has nothing left to release.)
SELECT fence_release('enfss:jobs', :t1) AS released_1;
DROP TABLE enf_ss, enf_sp;
