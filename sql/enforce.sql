-- The fence_enforce trigger: the per-row rule, with the token the statement
-- carries in the fence column (this session takes no lease, so no token is
-- in effect).  Tokens in effect: enforce_token.sql; strict: enforce_strict.sql.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- The counters of this database, to compare before and after (zero while
-- the database has no row yet).
CREATE TEMP VIEW enf_counts AS
  SELECT coalesce(sum(writes_accepted), 0) AS writes_accepted,
         coalesce(sum(writes_rejected), 0) AS writes_rejected,
         coalesce(sum(writes_skipped), 0) AS writes_skipped,
         coalesce(sum(rejected_stale), 0) AS rejected_stale,
         coalesce(sum(rejected_not_held), 0) AS rejected_not_held,
         coalesce(sum(rejected_no_token), 0) AS rejected_no_token
    FROM fence_stats WHERE database = current_database();
SELECT writes_accepted AS acc0, writes_rejected AS rej0, writes_skipped AS skip0,
       rejected_stale AS lf001_0, rejected_not_held AS lf002_0, rejected_no_token AS lf003_0
  FROM enf_counts \gset

-- The seeds' retention timeline, with the seed's UPDATE minus its
-- "AND fence <= $2": the trigger is the fence.  Row fence 32.
CREATE TABLE enf_channels (id int PRIMARY KEY, retention_days int NOT NULL, fence bigint);
INSERT INTO enf_channels VALUES (7, 7, 32), (8, 7, 32);
SELECT fence_protect('enf_channels');
-- 10:00:40 W1 (token 33) writes 30 days: accepted, the row's fence is 33.
UPDATE enf_channels SET retention_days = 30, fence = 33 WHERE id = 7 RETURNING *;
-- 10:00:45 W2 (token 34) writes 90 days.
UPDATE enf_channels SET retention_days = 90, fence = 34 WHERE id = 7 RETURNING *;
-- 10:00:50 W1 writes 30 days again: stale.
UPDATE enf_channels SET retention_days = 30, fence = 33 WHERE id = 7;
\echo :LAST_ERROR_SQLSTATE
-- 90 days, fence 34.
SELECT * FROM enf_channels ORDER BY id;

-- A token equal to the fence is the same holder writing again: accepted.
UPDATE enf_channels SET retention_days = 91, fence = 34 WHERE id = 7 RETURNING *;
-- A higher token moves the fence up.
UPDATE enf_channels SET retention_days = 92, fence = 40 WHERE id = 7 RETURNING *;

-- One stale row fails the whole statement: row 8 (fence 32) is not written
-- either.
UPDATE enf_channels SET retention_days = 1, fence = 35;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM enf_channels ORDER BY id;

-- No token (the statement leaves the fence column alone, and none is in
-- effect): an operator's manual fix, allowed; the fence stays.
UPDATE enf_channels SET retention_days = 14 WHERE id = 7 RETURNING *;
-- Setting the fence to NULL carries no token either: the fence stays.
UPDATE enf_channels SET retention_days = 15, fence = NULL WHERE id = 7 RETURNING *;
-- A DELETE without a token is allowed too.
DELETE FROM enf_channels WHERE id = 8 RETURNING *;

-- A negative token is an error, not a small token.
UPDATE enf_channels SET fence = -1 WHERE id = 7;
\echo :LAST_ERROR_SQLSTATE

-- A stored NULL fence counts as 0 ("never fenced").  0 is never a token:
-- setting it is a write without one, which keeps the stored fence.
INSERT INTO enf_channels VALUES (9, 7, NULL);
UPDATE enf_channels SET retention_days = 8, fence = 0 WHERE id = 9 RETURNING *;
UPDATE enf_channels SET retention_days = 9, fence = 1 WHERE id = 9 RETURNING *;
UPDATE enf_channels SET retention_days = 10, fence = 0 WHERE id = 9 RETURNING *;

-- INSERT with no token in effect keeps the value given, NULL included; a
-- column default counts as given.  There is no stored row to be stale
-- against.
INSERT INTO enf_channels VALUES (10, 1, 5) RETURNING *;
INSERT INTO enf_channels VALUES (11, 1, NULL) RETURNING *;
INSERT INTO enf_channels VALUES (12, 1, -5);
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE enf_channels ALTER COLUMN fence SET DEFAULT 3;
INSERT INTO enf_channels (id, retention_days) VALUES (13, 1) RETURNING *;

-- The counters, counted as the trigger decides: 9 accepted writes with a
-- token (four UPDATEs of row 7; row 8's in the statement that row 7 then
-- failed; two of row 9; two INSERTs with a value), 3 stale UPDATEs
-- rejected.  Writes without a token are not fenced writes: not counted.
-- The rejections by SQLSTATE: all three are LF001.
SELECT writes_accepted - :acc0 AS accepted, writes_rejected - :rej0 AS rejected,
       writes_skipped - :skip0 AS skipped
  FROM enf_counts;
SELECT rejected_stale - :lf001_0 AS lf001, rejected_not_held - :lf002_0 AS lf002,
       rejected_no_token - :lf003_0 AS lf003
  FROM enf_counts;

-- on_stale => 'skip': stale rows are left out silently, like the seed's
-- "WHERE ... AND fence <= $2".  fence_protect replaces the trigger.
TRUNCATE enf_channels;
INSERT INTO enf_channels VALUES (1, 7, 30), (2, 7, 40), (3, 7, NULL), (4, 7, 35);
SELECT fence_protect('enf_channels', on_stale => 'skip');
SELECT writes_accepted AS acc0, writes_rejected AS rej0, writes_skipped AS skip0
  FROM enf_counts \gset
-- Token 35: rows 1, 3 and 4 are written, row 2 (fence 40) is skipped.
UPDATE enf_channels SET retention_days = 1, fence = 35 RETURNING *;
SELECT * FROM enf_channels ORDER BY id;
SELECT writes_accepted - :acc0 AS accepted, writes_rejected - :rej0 AS rejected,
       writes_skipped - :skip0 AS skipped
  FROM enf_counts;

-- require_token: every write must carry one (LF003).
TRUNCATE enf_channels;
SELECT fence_protect('enf_channels', require_token => true);
SELECT rejected_stale AS lf001_0, rejected_not_held AS lf002_0, rejected_no_token AS lf003_0
  FROM enf_counts \gset
INSERT INTO enf_channels VALUES (1, 7, 32) RETURNING *;
INSERT INTO enf_channels (id, retention_days, fence) VALUES (2, 7, NULL);
\echo :LAST_ERROR_SQLSTATE
UPDATE enf_channels SET retention_days = 8 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE enf_channels SET retention_days = 8, fence = NULL WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE enf_channels SET retention_days = 8, fence = 33 WHERE id = 1 RETURNING *;
DELETE FROM enf_channels WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
-- The default 3 is a given value, so it is a token.
INSERT INTO enf_channels (id, retention_days) VALUES (3, 1) RETURNING *;
-- A stale write is still LF001, even with require_token.
UPDATE enf_channels SET fence = 2 WHERE id = 3;
\echo :LAST_ERROR_SQLSTATE
-- Counted by SQLSTATE: four writes without a token (the INSERT, two
-- UPDATEs and the DELETE), one stale.
SELECT rejected_stale - :lf001_0 AS lf001, rejected_not_held - :lf002_0 AS lf002,
       rejected_no_token - :lf003_0 AS lf003
  FROM enf_counts;

-- fence_unprotect drops the trigger; after that nothing is checked.
SELECT fence_unprotect('enf_channels');
SELECT fence_unprotect('enf_channels');
UPDATE enf_channels SET fence = 1 WHERE id = 3 RETURNING *;

DROP TABLE enf_channels;
