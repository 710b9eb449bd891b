-- require_token on the documented table shape (fence NOT NULL DEFAULT 0):
-- 0 means "never fenced" and is never a token, however a write comes by
-- it.  Each write below carries no token but 0, so each must fail with
-- LF003 and change nothing; the last block shows that real tokens still
-- pass.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

CREATE TABLE enf_rz (id int PRIMARY KEY, v text, fence fence_token NOT NULL DEFAULT 0);
INSERT INTO enf_rz VALUES (1, 'a', 0), (2, 'b', 0);
SELECT fence_protect('enf_rz', require_token => true);
CREATE TABLE enf_rz_src (id int, v text);
INSERT INTO enf_rz_src VALUES (3, 'c'), (1, 'z');
\set VERBOSITY default

-- INSERT with the column default, an explicit 0, INSERT ... SELECT, COPY.
INSERT INTO enf_rz (id, v) VALUES (3, 'c');
\echo :SQLSTATE
INSERT INTO enf_rz VALUES (3, 'c', 0);
\echo :SQLSTATE
INSERT INTO enf_rz (id, v) SELECT id, v FROM enf_rz_src WHERE id = 3;
\echo :SQLSTATE
COPY enf_rz (id, v, fence) FROM stdin;
3	c	0
\.
\echo :SQLSTATE
-- MERGE ... WHEN NOT MATCHED INSERT.
MERGE INTO enf_rz t USING enf_rz_src s ON t.id = s.id
  WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v);
\echo :SQLSTATE
-- ON CONFLICT: the conflicting row's update copies the proposed 0.
INSERT INTO enf_rz VALUES (1, 'oc', 0)
  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v, fence = EXCLUDED.fence;
\echo :SQLSTATE
-- UPDATE copying the stored 0, or setting 0.
UPDATE enf_rz SET v = 'x', fence = fence WHERE id = 1;
\echo :SQLSTATE
UPDATE enf_rz SET v = 'x', fence = 0 WHERE id = 1;
\echo :SQLSTATE
-- fence_use_token(0) is refused before any write.
BEGIN;
SELECT fence_use_token(0);
ROLLBACK;
SELECT fence_use_token(0, 'some-lease');
-- Nothing changed.
SELECT * FROM enf_rz ORDER BY id;

-- A row moved into a require_token partition carries the fence it had
-- (here 40): that is not the move's token.
CREATE TABLE enf_rzp (id int, region text, v text, fence fence_token NOT NULL DEFAULT 0)
  PARTITION BY LIST (region);
CREATE TABLE enf_rzp_cold PARTITION OF enf_rzp FOR VALUES IN ('cold');
CREATE TABLE enf_rzp_hot PARTITION OF enf_rzp FOR VALUES IN ('hot');
INSERT INTO enf_rzp SELECT g, 'cold', 'r' || g, 40 FROM generate_series(1, 6) g;
SELECT fence_protect('enf_rzp_cold');
SELECT fence_protect('enf_rzp_hot', require_token => true);
-- From a partition protected on its own, by UPDATE and by MERGE.
UPDATE enf_rzp SET region = 'hot' WHERE id = 1;
\echo :SQLSTATE
MERGE INTO enf_rzp t USING (VALUES (2)) s (id) ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET region = 'hot';
\echo :SQLSTATE
-- From a partition not protected.
SELECT fence_unprotect('enf_rzp_cold');
UPDATE enf_rzp SET region = 'hot' WHERE id = 3;
\echo :SQLSTATE
MERGE INTO enf_rzp t USING (VALUES (4)) s (id) ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET region = 'hot';
\echo :SQLSTATE
SELECT tableoid::regclass, * FROM enf_rzp ORDER BY id;
-- With this write's token, the row moves and is stamped with it: in
-- effect, or (into a partition's own protection from none) in effect only.
-- A MERGE that inserts is judged as an INSERT.
BEGIN;
SELECT fence_use_token(41);
UPDATE enf_rzp SET region = 'hot' WHERE id = 5;
COMMIT;
UPDATE enf_rzp SET region = 'hot', fence = 45 WHERE id = 6;
\echo :SQLSTATE
MERGE INTO enf_rzp t USING (VALUES (7)) s (id) ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET region = 'hot'
  WHEN NOT MATCHED THEN INSERT VALUES (7, 'hot', 'r7', 46);
SELECT tableoid::regclass, * FROM enf_rzp ORDER BY id;

-- A token below the fence a moved row carries is stale, and the row is
-- never left out, even with on_stale => 'skip': its DELETE half has run,
-- and skipping the INSERT would lose it.
SELECT fence_protect('enf_rzp_hot', require_token => true, on_stale => 'skip');
BEGIN;
SELECT fence_use_token(39);
UPDATE enf_rzp SET region = 'hot' WHERE id = 4;
ROLLBACK;
SELECT tableoid::regclass, id, fence FROM enf_rzp WHERE id = 4;

-- Real tokens still pass: in effect, or given in the statement.
BEGIN;
SELECT fence_use_token(42);
INSERT INTO enf_rz (id, v) VALUES (3, 'c');
COMMIT;
INSERT INTO enf_rz VALUES (4, 'd', 43);
COPY enf_rz (id, v, fence) FROM stdin;
5	e	43
\.
UPDATE enf_rz SET v = 'y', fence = 44 WHERE id = 1;
-- The holder writing again with its token in the statement.
UPDATE enf_rz SET v = 'y2', fence = 44 WHERE id = 1;
SELECT * FROM enf_rz ORDER BY id;

DROP TABLE enf_rz, enf_rz_src, enf_rzp;
