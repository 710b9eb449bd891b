-- The token a row write carries, where the statement's SET list says less
-- than it seems: MERGE and CASE copy the stored fence, an ORM saves every
-- column back, and an UPDATE that moves a row to another partition runs as
-- three row writes.  Tokens of real leases are compared, never printed.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
-- The tokens below stand for those of leases on another server, chosen
-- freely: this database's counter never issued most of them.
SET fence.external_tokens = on;

CREATE TABLE enf_w (id int PRIMARY KEY, v text, fence bigint);
INSERT INTO enf_w VALUES (1, 'a', 50), (2, 'b', 50);
SELECT fence_protect('enf_w');

-- MERGE with two UPDATE actions, one setting the fence: PostgreSQL hands
-- every BEFORE UPDATE trigger the columns of all actions, so in the second
-- action the fence column looks set, to the stored 50.  A value equal to
-- the stored fence is not a token while one is in effect: the token in
-- effect (7) is stale.
BEGIN;
SELECT fence_use_token(7);
MERGE INTO enf_w t USING (VALUES (1, 'merged', NULL::bigint)) s(id, v, tok) ON t.id = s.id
  WHEN MATCHED AND s.tok IS NOT NULL THEN UPDATE SET v = s.v, fence = s.tok
  WHEN MATCHED THEN UPDATE SET v = s.v;
ROLLBACK;
-- The first action, with a token in the source, carries that token.
BEGIN;
SELECT fence_use_token(7);
MERGE INTO enf_w t USING (VALUES (1, 'merged', 60::bigint)) s(id, v, tok) ON t.id = s.id
  WHEN MATCHED AND s.tok IS NOT NULL THEN UPDATE SET v = s.v, fence = s.tok
  WHEN MATCHED THEN UPDATE SET v = s.v;
SELECT * FROM enf_w WHERE id = 1;
ROLLBACK;
-- The second action with a token in effect that is not stale: stamped
-- with it.
BEGIN;
SELECT fence_use_token(55);
MERGE INTO enf_w t USING (VALUES (1, 'merged', NULL::bigint)) s(id, v, tok) ON t.id = s.id
  WHEN MATCHED AND s.tok IS NOT NULL THEN UPDATE SET v = s.v, fence = s.tok
  WHEN MATCHED THEN UPDATE SET v = s.v;
SELECT * FROM enf_w WHERE id = 1;
ROLLBACK;

-- SET fence = CASE ... ELSE fence END: the same.
BEGIN;
SELECT fence_use_token(7);
UPDATE enf_w SET v = 'case', fence = CASE WHEN v = 'never' THEN 99 ELSE fence END WHERE id = 1;
ROLLBACK;

-- An ORM that saves every column: the worker whose token is 50 lost its
-- lease; the new holder (51) wrote the row; the old worker re-reads the
-- row and saves it whole, fence = 51 included.  Its token in effect is 50:
-- stale.
BEGIN;
SELECT fence_use_token(51);
UPDATE enf_w SET v = 'new holder' WHERE id = 1 RETURNING *;
COMMIT;
BEGIN;
SELECT fence_use_token(50);
SELECT id, v, fence FROM enf_w WHERE id = 1 \gset orm_
UPDATE enf_w SET id = :orm_id, v = 'old worker', fence = :orm_fence WHERE id = :orm_id;
ROLLBACK;
-- The new holder saving the row whole is the same holder writing again.
BEGIN;
SELECT fence_use_token(51);
UPDATE enf_w SET id = 1, v = 'new holder again', fence = 51 WHERE id = 1 RETURNING *;
COMMIT;

-- What stays as it was.  A value the statement sets that differs from the
-- stored fence is the write's token, over the token in effect.
BEGIN;
SELECT fence_use_token(7);
UPDATE enf_w SET v = 'explicit', fence = 52 WHERE id = 1 RETURNING *;
UPDATE enf_w SET v = 'explicit stale', fence = 40 WHERE id = 1;
ROLLBACK;
-- With no token in effect, a value set in the statement is the token,
-- also when it equals the stored fence (the same holder writing twice, the
-- token carried in the statement), under require_token too.
SELECT fence_protect('enf_w', require_token => true);
SELECT fence_current_token() IS NULL AS no_token;
UPDATE enf_w SET v = 'notes 1', fence = 53 WHERE id = 2 RETURNING *;
UPDATE enf_w SET v = 'notes 2', fence = 53 WHERE id = 2 RETURNING *;
UPDATE enf_w SET v = 'no token' WHERE id = 2;
-- ON CONFLICT DO UPDATE with a token in effect: the proposed row is
-- stamped with it, and EXCLUDED.fence carries it into the existing row.
BEGIN;
SELECT fence_use_token(54);
INSERT INTO enf_w VALUES (2, 'upsert', 0)
  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v, fence = EXCLUDED.fence RETURNING *;
SELECT fence_use_token(53);
INSERT INTO enf_w VALUES (2, 'upsert stale', 0)
  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v, fence = EXCLUDED.fence;
ROLLBACK;
-- COPY: each row is an INSERT.
BEGIN;
SELECT fence_use_token(56);
COPY enf_w FROM stdin;
3	copied	1
\.
SELECT * FROM enf_w WHERE id = 3;
ROLLBACK;
SELECT fence_protect('enf_w');

-- strict, with the lease held: a MERGE whose second action copies the
-- holder's own fence, from a writer whose token in effect is stale, is
-- rejected; its COMMIT would otherwise pass.
CREATE TABLE enf_ws (id int PRIMARY KEY, v text, fence bigint NOT NULL DEFAULT 0);
INSERT INTO enf_ws VALUES (1, 'a', 0);
SELECT fence_protect('enf_ws', lease => 'enfw:strict', strict => true);
SELECT fence_try_lease('enfw:strict', '1 minute')::bigint AS th \gset
UPDATE enf_ws SET v = 'holder' WHERE id = 1 RETURNING fence = :th AS stamped;
BEGIN;
SELECT fence_use_token(:th - 1, 'enfw:strict');
\set VERBOSITY sqlstate
MERGE INTO enf_ws t USING (VALUES (1, 'stale', NULL::bigint)) s(id, v, tok) ON t.id = s.id
  WHEN MATCHED AND s.tok IS NOT NULL THEN UPDATE SET v = s.v, fence = s.tok
  WHEN MATCHED THEN UPDATE SET v = s.v;
\set VERBOSITY default
ROLLBACK;
SELECT v, fence = :th AS holders_fence FROM enf_ws;
SELECT fence_release('enfw:strict', :th);

-- Moves between partitions.  The UPDATE runs on the old partition, then a
-- DELETE there and an INSERT into the new one: all three carry the
-- UPDATE's token.
CREATE TABLE enf_wp (id int, region text, v text, fence bigint) PARTITION BY LIST (region);
CREATE TABLE enf_wp_eu PARTITION OF enf_wp FOR VALUES IN ('eu');
CREATE TABLE enf_wp_us PARTITION OF enf_wp FOR VALUES IN ('us');
SELECT fence_protect('enf_wp');
INSERT INTO enf_wp VALUES (1, 'eu', 'a', 10), (2, 'eu', 'b', 10), (3, 'eu', 'c', 10),
                          (4, 'eu', 'd', 10);
-- An explicit token (20), another token in effect (15): the moved row is
-- stamped 20, so 17 is stale on it, as it would be without the move.
BEGIN;
SELECT fence_use_token(15);
UPDATE enf_wp SET region = 'us', fence = 20 WHERE id = 1 RETURNING tableoid::regclass, *;
SELECT fence_use_token(17);
UPDATE enf_wp SET v = 'seventeen' WHERE id = 1;
ROLLBACK;
-- An explicit token (20) with a token in effect below the row's fence (5):
-- the move goes through with 20.
BEGIN;
SELECT fence_use_token(5);
UPDATE enf_wp SET region = 'us', fence = 20 WHERE id = 2 RETURNING tableoid::regclass, *;
COMMIT;
-- The token in effect (25), no fence in the statement: stamped 25.
BEGIN;
SELECT fence_use_token(25);
UPDATE enf_wp SET region = 'us' WHERE id = 3 RETURNING tableoid::regclass, *;
COMMIT;
-- No fence_use_token, but the session once leased an unrelated key: its
-- token is in effect and below the row's fence, the explicit one is not.
UPDATE enf_wp SET fence = 1000000000000 WHERE id = 4;
SELECT fence_try_lease('enfw:unrelated', '1 minute')::bigint AS tu \gset
SELECT :tu < 1000000000000 AS below_row;
UPDATE enf_wp SET region = 'us', fence = 1000000000001 WHERE id = 4 RETURNING tableoid::regclass, *;
SELECT fence_release('enfw:unrelated', :tu);
-- No token at all, require_token off: the move keeps the row's fence.
SELECT fence_current_token() IS NULL AS no_token;
UPDATE enf_wp SET region = 'eu' WHERE id = 2 RETURNING tableoid::regclass, *;
-- ... and with require_token it is refused.
SELECT fence_protect('enf_wp', require_token => true);
UPDATE enf_wp SET region = 'us' WHERE id = 2;
-- strict: a move without a token (an operator's fix) is no strict write,
-- in any of its three parts: the INSERT half does not take the fence the
-- row carries over for a token of its own.
SELECT fence_protect('enf_wp', lease => 'enfw:moves', strict => true);
UPDATE enf_wp SET region = 'us' WHERE id = 2 RETURNING tableoid::regclass, *;
SELECT fence_protect('enf_wp', require_token => true);
SELECT tableoid::regclass, * FROM enf_wp ORDER BY id;

-- The halves carry the UPDATE's decision also when BEFORE triggers that
-- fire between them write to other tables (each such write is a command
-- of its own).
CREATE TABLE enf_audit (op text);
CREATE FUNCTION enf_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO enf_audit VALUES (TG_OP);
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER a_audit BEFORE INSERT OR DELETE ON enf_wp FOR EACH ROW EXECUTE FUNCTION enf_audit();
BEGIN;
SELECT fence_use_token(15);
UPDATE enf_wp SET region = 'eu', fence = 30 WHERE id = 3 RETURNING tableoid::regclass, *;
SELECT fence_use_token(29);
UPDATE enf_wp SET v = 'twenty-nine' WHERE id = 3;
ROLLBACK;
BEGIN;
SELECT fence_use_token(5);
UPDATE enf_wp SET region = 'eu', fence = 30 WHERE id = 3 RETURNING tableoid::regclass, *;
SELECT op, count(*) FROM enf_audit GROUP BY op ORDER BY op;
ROLLBACK;
DROP TRIGGER a_audit ON enf_wp;
DROP FUNCTION enf_audit();
DROP TABLE enf_audit;

-- The memo that hands the UPDATE's decision to the halves of a move lasts
-- one row of one command.  Only a BEFORE trigger firing after the fence
-- trigger could veto an UPDATE the fence trigger accepted, and leave a memo
-- behind; such a trigger is refused (see enforce_compose.sql), so the
-- UPDATE fails, and a token-less DELETE of the row after it carries no
-- token (require_token: LF003).
CREATE FUNCTION enf_veto() RETURNS trigger LANGUAGE plpgsql AS
  $$BEGIN IF NEW.v = 'veto' THEN RETURN NULL; END IF; RETURN NEW; END$$;
CREATE TRIGGER zzz_veto BEFORE UPDATE ON enf_wp_eu FOR EACH ROW EXECUTE FUNCTION enf_veto();
BEGIN;
SAVEPOINT s;
UPDATE enf_wp SET v = 'veto', fence = 30 WHERE id = 1;
ROLLBACK TO SAVEPOINT s;
DROP TRIGGER zzz_veto ON enf_wp_eu;
DELETE FROM enf_wp WHERE id = 1 RETURNING *;
ROLLBACK;
DROP TRIGGER zzz_veto ON enf_wp_eu;
DROP FUNCTION enf_veto();

DROP TABLE enf_w, enf_ws, enf_wp;
