-- Fence column types: fence_token, bigint, integer.  The same rule on each;
-- bad stored values are errors, never a wrong comparison.  (Tokens in
-- effect, and a token too big for an integer column: enforce_token.sql.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
-- The tokens below stand for those of leases on another server, chosen
-- freely: this database's counter never issued most of them.
SET fence.external_tokens = on;

-- fence_token: the type made for it.
CREATE TABLE enf_tok (id int PRIMARY KEY, v text, fence fence_token);
SELECT fence_protect('enf_tok');
INSERT INTO enf_tok VALUES (1, 'a', '32'), (2, 'b', NULL);
UPDATE enf_tok SET v = 'w2', fence = 34 WHERE id = 1 RETURNING *;
UPDATE enf_tok SET v = 'w1', fence = 33 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE enf_tok SET v = 'w3', fence = '9223372036854775807' WHERE id = 1 RETURNING *;
UPDATE enf_tok SET v = 'w4', fence = 9223372036854775806 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
-- The stored NULL counts as 0; 0 is no token, so setting it changes nothing
-- but the other columns.
UPDATE enf_tok SET v = 'c', fence = 0 WHERE id = 2 RETURNING *;
UPDATE enf_tok SET v = 'c', fence = 1 WHERE id = 2 RETURNING *;
SELECT * FROM enf_tok ORDER BY id;

-- bigint.
CREATE TABLE enf_big (id int PRIMARY KEY, v text, fence bigint);
SELECT fence_protect('enf_big');
INSERT INTO enf_big VALUES (1, 'a', 32);
UPDATE enf_big SET v = 'w2', fence = 34 WHERE id = 1 RETURNING *;
UPDATE enf_big SET v = 'w1', fence = 33 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE enf_big SET v = 'max', fence = 9223372036854775807 WHERE id = 1 RETURNING *;
-- A negative fence already stored (written with the trigger off) is an
-- error for every write with a token to that row, not a fence of "less
-- than 0".
ALTER TABLE enf_big DISABLE TRIGGER zz_fence_enforce;
INSERT INTO enf_big VALUES (2, 'neg', -5);
ALTER TABLE enf_big ENABLE TRIGGER zz_fence_enforce;
UPDATE enf_big SET v = 'x', fence = 40 WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
-- A write without a token compares nothing: allowed, and the fence stays.
UPDATE enf_big SET v = 'x' WHERE id = 2 RETURNING *;
DELETE FROM enf_big WHERE id = 2 RETURNING *;
-- Other rows are not affected.
UPDATE enf_big SET v = 'fine' WHERE id = 1 RETURNING *;

-- integer.
CREATE TABLE enf_int (id int PRIMARY KEY, v text, fence integer NOT NULL DEFAULT 0);
SELECT fence_protect('enf_int');
INSERT INTO enf_int (id, v) VALUES (1, 'a') RETURNING *;
UPDATE enf_int SET v = 'w2', fence = 34 WHERE id = 1 RETURNING *;
UPDATE enf_int SET v = 'w1', fence = 33 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE enf_int SET v = 'w1', fence = -33 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE enf_int SET v = 'max', fence = 2147483647 WHERE id = 1 RETURNING *;
ALTER TABLE enf_int DISABLE TRIGGER zz_fence_enforce;
INSERT INTO enf_int VALUES (2, 'neg', -1);
ALTER TABLE enf_int ENABLE TRIGGER zz_fence_enforce;
UPDATE enf_int SET v = 'x', fence = 1 WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE

-- Other types are refused (here by fence_protect; the trigger says the same,
-- see enforce_misuse.sql).
CREATE TABLE enf_other (id int, f_small smallint, f_num numeric, f_text text,
                        f_ts timestamptz, f_dom int);
CREATE DOMAIN enf_posint AS bigint CHECK (VALUE >= 0);
ALTER TABLE enf_other ADD COLUMN f_domain enf_posint;
SELECT fence_protect('enf_other', column_name => 'f_small');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_other', column_name => 'f_num');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_other', column_name => 'f_text');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_other', column_name => 'f_ts');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_other', column_name => 'f_domain');
\echo :LAST_ERROR_SQLSTATE

-- A fence column added to a table that already has rows, with a default:
-- old rows do not hold the column physically, and still compare right.
CREATE TABLE enf_late (id int PRIMARY KEY, v text);
INSERT INTO enf_late VALUES (1, 'old');
ALTER TABLE enf_late ADD COLUMN fence bigint NOT NULL DEFAULT 32;
SELECT fence_protect('enf_late');
UPDATE enf_late SET v = 'w1', fence = 31 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
UPDATE enf_late SET v = 'w1', fence = 33 WHERE id = 1 RETURNING *;

DROP TABLE enf_tok, enf_big, enf_int, enf_other, enf_late;
DROP DOMAIN enf_posint;
