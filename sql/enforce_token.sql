-- The fence_enforce trigger with the token in effect: set
-- by fence_use_token, or taken with a lease.  Tokens of real leases depend
-- on what ran before, so they are compared, never printed.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
-- The tokens below stand for those of leases on another server, chosen
-- freely: this database's counter never issued most of them.
SET fence.external_tokens = on;

CREATE TABLE enf_t (id int PRIMARY KEY, v text, fence bigint);
INSERT INTO enf_t VALUES (1, 'a', 32), (2, 'b', 32), (3, 'c', NULL);
SELECT fence_protect('enf_t');

-- fence_use_token: the token in effect for this transaction.  An UPDATE
-- that leaves the fence column alone carries it and is stamped with it.
BEGIN;
SELECT fence_use_token(33);
UPDATE enf_t SET v = 'w1' WHERE id = 1 RETURNING *;
-- The NULL fence counts as 0.
UPDATE enf_t SET v = 'w1' WHERE id = 3 RETURNING *;
-- INSERT: the token in effect wins over the value given.
INSERT INTO enf_t VALUES (4, 'd', 99) RETURNING *;
INSERT INTO enf_t VALUES (5, 'e', NULL) RETURNING *;
COMMIT;
-- It ended with the transaction: no token now.
SELECT fence_current_token() IS NULL AS no_token;
UPDATE enf_t SET v = 'manual' WHERE id = 1 RETURNING *;

-- A newer holder (34) writes; the old one (33) is stale, for UPDATE and
-- DELETE alike.
BEGIN;
SELECT fence_use_token(34);
UPDATE enf_t SET v = 'w2' WHERE id = 1 RETURNING *;
COMMIT;
BEGIN;
SELECT fence_use_token(33);
UPDATE enf_t SET v = 'w1 again' WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT fence_use_token(33);
DELETE FROM enf_t WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
-- A DELETE with a token at or above the fence goes through; the fence is
-- not stamped (the row is gone).
BEGIN;
SELECT fence_use_token(34);
DELETE FROM enf_t WHERE id = 1 RETURNING *;
ROLLBACK;

-- A value the statement sets in the fence column wins over the token in
-- effect.  Setting NULL carries no token, so the token in effect (33)
-- counts, and is stale against the 35 just written.
BEGIN;
SELECT fence_use_token(33);
UPDATE enf_t SET v = 'explicit', fence = 35 WHERE id = 1 RETURNING *;
UPDATE enf_t SET v = 'null is no token', fence = NULL WHERE id = 1 RETURNING *;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- Skip mode: the stale holder's DELETE and UPDATE leave the rows out.
SELECT fence_protect('enf_t', on_stale => 'skip');
BEGIN;
SELECT fence_use_token(33);
DELETE FROM enf_t WHERE id IN (1, 2) RETURNING *;
UPDATE enf_t SET v = 'skip' RETURNING *;
ROLLBACK;
SELECT * FROM enf_t ORDER BY id;
SELECT fence_protect('enf_t');

-- A token that does not fit an integer fence column is an error.
CREATE TABLE enf_t4 (id int PRIMARY KEY, fence integer);
SELECT fence_protect('enf_t4');
INSERT INTO enf_t4 VALUES (1, 5);
BEGIN;
SELECT fence_use_token(2147483647);
UPDATE enf_t4 SET id = 1 WHERE id = 1 RETURNING *;
SELECT fence_use_token(2147483648);
UPDATE enf_t4 SET id = 1 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT fence_use_token(2147483648);
INSERT INTO enf_t4 VALUES (2, 0);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;

-- Stamping rows of every shape: the fence after variable-width and NULL
-- columns, a NULL fence, a fence column added after the rows were written,
-- and an integer and a fence_token column.
CREATE TABLE enf_shape (id int PRIMARY KEY, t1 text, n1 int, t2 varchar, f fence_token, t3 text);
INSERT INTO enf_shape VALUES
  (1, 'x', 1, 'y', 1, 'z'),
  (2, NULL, NULL, repeat('long', 100), 1, NULL),
  (3, 'x', NULL, NULL, NULL, 'tail');
ALTER TABLE enf_shape ADD COLUMN g bigint NOT NULL DEFAULT 7;
ALTER TABLE enf_shape ADD COLUMN h int;
SELECT fence_protect('enf_shape', column_name => 'f');
BEGIN;
SELECT fence_use_token(40);
UPDATE enf_shape SET n1 = coalesce(n1, 0) + 1;
SELECT id, t1, n1, length(t2) AS t2_len, f, t3, g FROM enf_shape ORDER BY id;
ROLLBACK;
SELECT fence_protect('enf_shape', column_name => 'g');
BEGIN;
SELECT fence_use_token(41);
UPDATE enf_shape SET n1 = 0;
SELECT id, t1, n1, length(t2) AS t2_len, f, t3, g FROM enf_shape ORDER BY id;
ROLLBACK;
SELECT fence_protect('enf_shape', column_name => 'h');
BEGIN;
SELECT fence_use_token(42);
UPDATE enf_shape SET n1 = 0;
UPDATE enf_shape SET n1 = 1;
SELECT id, t1, n1, length(t2) AS t2_len, f, t3, g, h FROM enf_shape ORDER BY id;
ROLLBACK;

-- Tokens of leases.  The session remembers the token of each lease it took;
-- the most recent one is in effect, and a trigger that names its lease
-- uses that lease's token.
CREATE TABLE enf_l (id int PRIMARY KEY, v text, fence bigint NOT NULL DEFAULT 0);
CREATE TABLE enf_l2 (LIKE enf_l INCLUDING ALL);
INSERT INTO enf_l VALUES (1, 'a', 0);
INSERT INTO enf_l2 VALUES (1, 'a', 0);
SELECT fence_protect('enf_l');
SELECT fence_protect('enf_l2', lease => 'enftok:a');
SELECT fence_try_lease('enftok:a', '1 minute')::bigint AS ta \gset
SELECT fence_try_lease('enftok:b', '1 minute')::bigint AS tb \gset
SELECT :tb > :ta AS b_is_newer;
UPDATE enf_l SET v = 'most recent' RETURNING fence = :tb AS fence_is_tb;
UPDATE enf_l2 SET v = 'named' RETURNING fence = :ta AS fence_is_ta;
-- fence_use_token with a key overrides that lease's token.
BEGIN;
SELECT fence_use_token(:tb + 100, 'enftok:a');
UPDATE enf_l2 SET v = 'x' RETURNING fence = :tb + 100 AS overridden;
ROLLBACK;
-- The token stays in effect after the lease expired: the old holder stays
-- fenced once a newer one took over and wrote.
SELECT fence_advance_clock('2 minutes') IS NOT NULL AS clock_moved;
SELECT fence_current_token() = :tb AS still_tb;
BEGIN;
SELECT fence_use_token(:tb + 1);
UPDATE enf_l SET v = 'newer holder' RETURNING fence = :tb + 1 AS fence_is_newer;
COMMIT;
\set VERBOSITY sqlstate
UPDATE enf_l SET v = 'old holder';
\set VERBOSITY default
-- Releasing a lease ends its token: back to the other lease's.
SELECT fence_release('enftok:b', :tb);
SELECT fence_current_token() = :ta AS back_to_ta;
SELECT fence_release('enftok:a', :ta);
SELECT fence_current_token() IS NULL AS no_token;
-- Transaction-scoped leases: their token ends with the transaction.
BEGIN;
SELECT fence_try_xact_lease('enftok:x', '1 minute')::bigint AS tx \gset
UPDATE enf_l SET v = 'xact' RETURNING fence = :tx AS fence_is_tx;
COMMIT;
SELECT fence_current_token() IS NULL AS no_token;

-- A lease name with {column}: each row gets its own lease's token.
CREATE TABLE enf_rows (id int PRIMARY KEY, fence bigint NOT NULL DEFAULT 0);
INSERT INTO enf_rows SELECT g, 0 FROM generate_series(1, 3) g;
SELECT fence_protect('enf_rows', lease => 'enftok:row-{id}');
BEGIN;
SELECT fence_use_token(51, 'enftok:row-1');
SELECT fence_use_token(53, 'enftok:row-3');
UPDATE enf_rows SET id = id RETURNING *;
ROLLBACK;

DROP TABLE enf_t, enf_t4, enf_shape, enf_l, enf_l2, enf_rows;
