-- Rows that move between partitions.  An UPDATE that moves a row runs as
-- three row writes (the UPDATE, then a DELETE from the old partition and an
-- INSERT into the new one); the halves carry the UPDATE's decision only
-- within one protection (the parent's trigger and its clones).  A partition
-- protected on its own judges a row moved into it as a direct INSERT, and
-- an INSERT that is not the other half of its own row's move never takes
-- that move's decision.  Tokens of real leases are compared, never printed.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- Partitions protected one by one, the parent not: plain on a cold
-- partition, strict and require_token on the hot one.
CREATE TABLE enf_mv (id int, part text, v text, fence bigint NOT NULL DEFAULT 0)
  PARTITION BY LIST (part);
CREATE TABLE enf_mv_cold PARTITION OF enf_mv FOR VALUES IN ('cold');
CREATE TABLE enf_mv_hot PARTITION OF enf_mv FOR VALUES IN ('hot');
SELECT fence_protect('enf_mv_cold');
SELECT fence_protect('enf_mv_hot', lease => 'enfmv:hot', strict => true,
                     require_token => true);
INSERT INTO enf_mv VALUES (1, 'cold', 'a', 0), (2, 'cold', 'b', 0);

-- Without a token, a row cannot move in: an INSERT of fence 0 into the hot
-- partition is refused (0 is no token: require_token), and so is the
-- move.
\set VERBOSITY sqlstate
INSERT INTO enf_mv VALUES (3, 'hot', 'direct', 0);
UPDATE enf_mv SET part = 'hot', v = 'moved without token' WHERE id = 1;
\set VERBOSITY default

-- With a superseded token in effect: the hot partition's strict rule
-- refuses it, as it refuses a direct INSERT with that token.
-- This session held the lease with t1 and released it; another worker
-- holds it now, with t2.
SELECT fence_try_lease('enfmv:hot', '1 minute')::bigint AS t1 \gset
SELECT fence_release('enfmv:hot', :t1);
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;
SELECT dblink_connect('enf_w2', 'dbname=' || current_database());
SELECT t2 FROM dblink('enf_w2', 'SELECT fence_try_lease(''enfmv:hot'', ''1 minute'')::bigint')
  AS r(t2 bigint) \gset
SELECT :t2 > :t1 AS superseded;
BEGIN;
SELECT fence_use_token(:t1);
\set VERBOSITY sqlstate
UPDATE enf_mv SET part = 'hot', v = 'moved with old token' WHERE id = 2;
\set VERBOSITY default
ROLLBACK;
-- The same with the token in the statement.
\set VERBOSITY sqlstate
UPDATE enf_mv SET part = 'hot', v = 'moved with old token', fence = :t1 WHERE id = 2;
\set VERBOSITY default
SELECT id, part, v, fence = 0 AS untouched FROM enf_mv ORDER BY id;

-- With the live token, the row moves in and carries it.
BEGIN;
SELECT fence_use_token(:t2);
UPDATE enf_mv SET part = 'hot', v = 'moved by holder' WHERE id = 2
  RETURNING tableoid::regclass, id, v, fence = :t2 AS stamped;
COMMIT;

-- Out of the hot partition into the cold one: the hot partition judges the
-- UPDATE and its DELETE half, the cold one the INSERT half (no token
-- needed there, and the fence the row carries stays).
UPDATE enf_mv SET part = 'cold', v = 'moved out' WHERE id = 2;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SELECT fence_use_token(:t2);
UPDATE enf_mv SET part = 'cold', v = 'moved out' WHERE id = 2
  RETURNING tableoid::regclass, id, v, fence = :t2 AS kept;
COMMIT;
SELECT released FROM dblink('enf_w2', 'SELECT fence_release(''enfmv:hot'', ' || :t2 || ')')
  AS r(released bool);
SELECT dblink_disconnect('enf_w2');
DROP TABLE enf_mv;

-- A move whose INSERT half another BEFORE trigger vetoes (the row is
-- deleted, and not inserted): its decision is taken by nobody.  The next
-- INSERT of the same statement, into another protected table or into the
-- same one, is judged as the INSERT it is.
CREATE TABLE enf_va (id int, part text, v text, fence bigint NOT NULL DEFAULT 0)
  PARTITION BY LIST (part);
CREATE TABLE enf_va_1 PARTITION OF enf_va FOR VALUES IN ('1');
CREATE TABLE enf_va_2 PARTITION OF enf_va FOR VALUES IN ('2');
INSERT INTO enf_va VALUES (1, '1', 'a', 0);
SELECT fence_protect('enf_va', lease => 'enfva:{id}', strict => true);
CREATE FUNCTION enf_veto() RETURNS trigger LANGUAGE plpgsql
  AS $$BEGIN RETURN NULL; END$$;
CREATE TRIGGER a_veto BEFORE INSERT ON enf_va_2 FOR EACH ROW EXECUTE FUNCTION enf_veto();
CREATE TABLE enf_vb (id int, part text, v text, fence bigint NOT NULL DEFAULT 0)
  PARTITION BY LIST (part);
CREATE TABLE enf_vb_1 PARTITION OF enf_vb FOR VALUES IN ('1');
SELECT fence_protect('enf_vb', lease => 'enfvb', strict => true, require_token => true);
SELECT fence_try_lease('enfva:1', '1 minute')::bigint AS ta \gset

-- Into another protected table: strict and require_token apply (no lease
-- enfvb is held).  The messages name the lease each INSERT needs.
\set VERBOSITY terse
WITH m AS (UPDATE enf_va SET part = '2', fence = :ta WHERE id = 1 RETURNING 1),
     i AS (INSERT INTO enf_vb VALUES (1, '1', 'sneaked in', 0) RETURNING 1)
SELECT (SELECT count(*) FROM m) AS moved, (SELECT count(*) FROM i) AS inserted;
-- Into the same table, another row: its own lease (enfva:2) is not held.
DELETE FROM enf_va;
INSERT INTO enf_va VALUES (1, '1', 'a', 0);
WITH m AS (UPDATE enf_va SET part = '2', fence = :ta WHERE id = 1 RETURNING 1),
     i AS (INSERT INTO enf_va VALUES (2, '1', 'sneaked in', 0) RETURNING 1)
SELECT (SELECT count(*) FROM m) AS moved, (SELECT count(*) FROM i) AS inserted;
\set VERBOSITY default
SELECT count(*) AS sneaked FROM enf_vb;
SELECT id, part, v, fence = :ta AS holder FROM enf_va ORDER BY id;
-- The vetoed move alone: the row is gone (deleted, its INSERT vetoed), as
-- PostgreSQL does without fence.
DELETE FROM enf_va;
INSERT INTO enf_va VALUES (1, '1', 'a', 0);
WITH m AS (UPDATE enf_va SET part = '2', fence = :ta WHERE id = 1 RETURNING 1)
SELECT count(*) AS moved FROM m;
SELECT count(*) AS rows_left FROM enf_va;
SELECT fence_release('enfva:1', :ta);
DROP TABLE enf_va, enf_vb;
DROP FUNCTION enf_veto();

-- Within one protection the halves carry the UPDATE's decision, also an
-- UPDATE without a token (an operator's fix) of a strict table: a direct
-- INSERT with the row's old fence would be refused, the move is not.
CREATE TABLE enf_vs (id int, part text, v text, fence bigint NOT NULL DEFAULT 0)
  PARTITION BY LIST (part);
CREATE TABLE enf_vs_1 PARTITION OF enf_vs FOR VALUES IN ('1');
CREATE TABLE enf_vs_2 (fence bigint NOT NULL DEFAULT 0, v text, id int, part text);
ALTER TABLE enf_vs ATTACH PARTITION enf_vs_2 FOR VALUES IN ('2');
INSERT INTO enf_vs VALUES (1, '1', 'a', 7);
SELECT fence_protect('enf_vs', lease => 'enfvs:{id}', strict => true);
UPDATE enf_vs SET part = '2', v = 'fixed by operator' WHERE id = 1
  RETURNING tableoid::regclass, id, v, fence;
DROP TABLE enf_vs;
