-- The trigger with the rest of PostgreSQL: partitioned tables, moves
-- between partitions, INSERT ... ON CONFLICT DO UPDATE, MERGE, and other
-- BEFORE triggers (firing order).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- Partitioned table: the trigger on the parent reaches every partition,
-- those there before, those created after, and those attached later, even
-- with another column layout.
CREATE TABLE enf_p (id int, region text, v text, fence bigint) PARTITION BY LIST (region);
CREATE TABLE enf_p_eu PARTITION OF enf_p FOR VALUES IN ('eu');
SELECT fence_protect('enf_p', require_token => true);
CREATE TABLE enf_p_us PARTITION OF enf_p FOR VALUES IN ('us');
CREATE TABLE enf_p_ap (dropped int, fence bigint, v text, region text, id int);
ALTER TABLE enf_p_ap DROP COLUMN dropped;
ALTER TABLE enf_p ATTACH PARTITION enf_p_ap FOR VALUES IN ('ap');
SELECT tgrelid::regclass AS rel, tgname, tgparentid <> 0 AS from_parent
  FROM pg_trigger WHERE tgname = 'zz_fence_enforce' ORDER BY 1::text;
INSERT INTO enf_p VALUES (1, 'eu', 'a', 32), (2, 'us', 'a', 32), (3, 'ap', 'a', 32);
UPDATE enf_p SET v = 'b', fence = 33 RETURNING tableoid::regclass, *;
-- Stale in one partition: the message names the partition.
UPDATE enf_p SET v = 'c', fence = 32 WHERE region = 'ap';
\echo :LAST_ERROR_SQLSTATE
-- The partition with the other layout sees which columns the UPDATE set:
-- not the fence here, so no token (require_token).
UPDATE enf_p SET v = 'c' WHERE region = 'ap';
\echo :LAST_ERROR_SQLSTATE
-- Directly on a partition too.
UPDATE enf_p_ap SET v = 'd', fence = 34 RETURNING *;
UPDATE enf_p_ap SET v = 'e', fence = 33;
\echo :LAST_ERROR_SQLSTATE
-- A move to another partition runs as a DELETE from the old partition and
-- an INSERT into the new one: both halves carry the UPDATE's token.
UPDATE enf_p SET region = 'us', v = 'moved', fence = 35 WHERE id = 1
  RETURNING tableoid::regclass, *;
-- A stale move is refused before anything moves.
UPDATE enf_p SET region = 'eu', v = 'back', fence = 34 WHERE id = 1;
\echo :LAST_ERROR_SQLSTATE
SELECT tableoid::regclass, * FROM enf_p ORDER BY id;
-- A partition's trigger belongs to the parent's: it is changed or dropped
-- there.
SELECT fence_unprotect('enf_p_us');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_protect('enf_p_us', on_stale => 'skip');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_unprotect('enf_p');
SELECT count(*) AS triggers_left FROM pg_trigger WHERE tgname = 'zz_fence_enforce';
-- A partition may be protected on its own (here with skip).  Now only
-- enf_p_eu is: its row 4 (fence 40) is skipped, the others are not checked.
SELECT fence_protect('enf_p_eu', on_stale => 'skip');
INSERT INTO enf_p VALUES (4, 'eu', 'a', 40);
UPDATE enf_p SET v = 'old', fence = 39 RETURNING *;
DROP TABLE enf_p;

-- INSERT ... ON CONFLICT DO UPDATE: the BEFORE INSERT trigger stamps the
-- proposed row (so EXCLUDED.fence is its token), the BEFORE UPDATE trigger
-- checks the existing row.
CREATE TABLE enf_u (id int PRIMARY KEY, v text, fence bigint);
SELECT fence_protect('enf_u');
INSERT INTO enf_u VALUES (1, 'w1', 33)
  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v, fence = EXCLUDED.fence RETURNING *;
INSERT INTO enf_u VALUES (1, 'w2', 34)
  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v, fence = EXCLUDED.fence RETURNING *;
INSERT INTO enf_u VALUES (1, 'w1 again', 33)
  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v, fence = EXCLUDED.fence RETURNING *;
\echo :LAST_ERROR_SQLSTATE
-- DO UPDATE that does not set the fence carries no token: allowed, and the
-- fence stays.
INSERT INTO enf_u VALUES (1, 'manual', 1)
  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v RETURNING *;
INSERT INTO enf_u VALUES (1, 'nothing', 1) ON CONFLICT DO NOTHING RETURNING *;
-- With skip, a stale upsert changes nothing and returns nothing.
SELECT fence_protect('enf_u', on_stale => 'skip');
INSERT INTO enf_u VALUES (1, 'w1 again', 33), (2, 'new', 33)
  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v, fence = EXCLUDED.fence RETURNING *;
SELECT * FROM enf_u ORDER BY id;
DROP TABLE enf_u;

-- MERGE: its UPDATE, DELETE and INSERT actions fire the row triggers.
CREATE TABLE enf_mg (id int PRIMARY KEY, v text, fence bigint);
INSERT INTO enf_mg VALUES (1, 'a', 34), (2, 'b', 30);
SELECT fence_protect('enf_mg');
MERGE INTO enf_mg t USING (VALUES (2, 'w', 33), (3, 'new', 33)) AS s(id, v, tok) ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET v = s.v, fence = s.tok
  WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, s.tok);
MERGE INTO enf_mg t USING (VALUES (1, 'stale', 33)) AS s(id, v, tok) ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET v = s.v, fence = s.tok;
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM enf_mg ORDER BY id;
DROP TABLE enf_mg;

-- Beside other BEFORE triggers.  Row triggers of one kind fire in the order
-- of their names (byte order); fence_protect's is named zz_fence_enforce so
-- that it fires after the usual ones and checks the row they leave.  Here
-- a_touch sets the fence column to NULL behind the statement's back on rows
-- it marks; the statement carries no token, so the fence trigger keeps the
-- stored fence.  The AFTER trigger sees what is written.
CREATE TABLE enf_o (id int PRIMARY KEY, v text, fence bigint);
INSERT INTO enf_o VALUES (1, 'a', 32);
CREATE FUNCTION enf_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_NAME = 'a_touch' AND NEW.v = 'touch' THEN
    NEW.fence := NULL;
  END IF;
  IF TG_NAME = '~undo' AND NEW.v = 'undo' THEN
    NEW.fence := OLD.fence;
  END IF;
  RAISE NOTICE '% % sees v=%, fence=%', TG_WHEN, TG_NAME, NEW.v, coalesce(NEW.fence::text, 'NULL');
  RETURN NEW;
END $$;
CREATE TRIGGER a_touch BEFORE UPDATE ON enf_o FOR EACH ROW EXECUTE FUNCTION enf_note();
CREATE TRIGGER after_note AFTER UPDATE ON enf_o FOR EACH ROW EXECUTE FUNCTION enf_note();
SELECT fence_protect('enf_o');
UPDATE enf_o SET v = 'touch' RETURNING *;
UPDATE enf_o SET v = 'w', fence = 33 RETURNING *;
UPDATE enf_o SET v = 'stale', fence = 31;
\echo :LAST_ERROR_SQLSTATE
-- A BEFORE trigger whose name sorts after the fence trigger's ("~" and
-- non-ASCII names sort after "z") would fire after the check and could undo
-- the stamp: here it puts the old fence back, so a writer with token 33
-- would pass on a row a writer with 34 wrote.  fence_protect refuses such a
-- table, and a table that gets one later refuses writes until it is renamed.
CREATE TRIGGER "~undo" BEFORE UPDATE ON enf_o FOR EACH ROW EXECUTE FUNCTION enf_note();
UPDATE enf_o SET v = 'undo', fence = 34;
UPDATE enf_o SET v = 'stale', fence = 33 RETURNING *;
SELECT fence_protect('enf_o');
ALTER TRIGGER "~undo" ON enf_o RENAME TO undo;
UPDATE enf_o SET v = 'undo', fence = 34 RETURNING *;
-- A disabled one does not fire, and is no obstacle; enabled again, it is.
CREATE TRIGGER "änderungen" BEFORE INSERT ON enf_o FOR EACH ROW EXECUTE FUNCTION enf_note();
ALTER TABLE enf_o DISABLE TRIGGER "änderungen";
SELECT fence_protect('enf_o');
INSERT INTO enf_o VALUES (2, 'b', 0) RETURNING *;
ALTER TABLE enf_o ENABLE TRIGGER "änderungen";
INSERT INTO enf_o VALUES (3, 'c', 0);
SELECT fence_protect('enf_o');
DROP TRIGGER "änderungen" ON enf_o;
-- A second fence trigger (another column) may sort after it.
ALTER TABLE enf_o ADD COLUMN fence2 bigint;
CREATE TRIGGER zz_fence_enforce_2 BEFORE INSERT OR UPDATE OR DELETE ON enf_o
  FOR EACH ROW EXECUTE FUNCTION fence_enforce('fence2');
SELECT fence_protect('enf_o');
UPDATE enf_o SET v = 'two fences', fence = 35, fence2 = 1 WHERE id = 1 RETURNING *;
-- fence_protect on a partitioned table looks at its partitions too.
CREATE TABLE enf_op (id int, region text, v text, fence bigint) PARTITION BY LIST (region);
CREATE TABLE enf_op_eu PARTITION OF enf_op FOR VALUES IN ('eu');
CREATE TRIGGER "~audit" BEFORE DELETE ON enf_op_eu FOR EACH ROW EXECUTE FUNCTION enf_note();
SELECT fence_protect('enf_op');
SELECT count(*) AS fence_triggers FROM pg_trigger WHERE tgname = 'zz_fence_enforce'
  AND tgrelid IN ('enf_op'::regclass, 'enf_op_eu'::regclass);
DROP TABLE enf_op;
DROP TABLE enf_o;
DROP FUNCTION enf_note();
