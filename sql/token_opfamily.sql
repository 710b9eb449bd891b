-- fence_token's operator classes and families keep the rules PostgreSQL's
-- own regression suite (opr_sanity) checks for every type, here for fence's
-- objects only; then the plans those rules are for.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

CREATE SCHEMA token_opfamily;
SET search_path = token_opfamily, public;

CREATE VIEW fence_opclass AS
	SELECT c.* FROM pg_opclass c
	  JOIN pg_depend d ON d.classid = 'pg_opclass'::regclass AND d.objid = c.oid
	 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fence');
CREATE VIEW fence_opfamily AS
	SELECT f.* FROM pg_opfamily f
	  JOIN pg_depend d ON d.classid = 'pg_opfamily'::regclass AND d.objid = f.oid
	 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fence');
CREATE VIEW fence_operator AS
	SELECT o.* FROM pg_operator o
	  JOIN pg_depend d ON d.classid = 'pg_operator'::regclass AND d.objid = o.oid
	 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fence');

-- The access methods' own validation (btree: every type pair of the family
-- has all five operators and a comparison function, and every pair of the
-- family's types is there; hash: likewise with = and the hash functions).
-- A failure prints INFO lines naming what is missing.
SELECT c.opcname, a.amname, c.opcintype::regtype AS type, c.opcdefault AS default,
       amvalidate(c.oid) AS valid
  FROM fence_opclass c JOIN pg_am a ON a.oid = c.opcmethod
 ORDER BY a.amname, c.opcdefault DESC, c.opcintype::regtype::text COLLATE "C";

-- Every family has an operator class, and every operator of a family an
-- operator class of its left type in that family (else no index can use it).
SELECT f.opfname FROM fence_opfamily f
 WHERE NOT EXISTS (SELECT 1 FROM pg_opclass c WHERE c.opcfamily = f.oid);
SELECT f.opfname, a.amopstrategy, a.amopopr::regoperator
  FROM fence_opfamily f JOIN pg_amop a ON a.amopfamily = f.oid
 WHERE NOT EXISTS (SELECT 1 FROM pg_opclass c
                    WHERE c.opcfamily = a.amopfamily AND c.opcintype = a.amoplefttype)
 ORDER BY f.opfname, a.amopstrategy, a.amopopr::regoperator::text COLLATE "C";

-- The equality of a btree family merges, and an operator that merges is the
-- equality of a btree family; likewise hashing and hash families; and an
-- operator and its commutator agree.
SELECT o.oid::regoperator AS btree_equality_not_merges
  FROM pg_amop a JOIN fence_opfamily f ON f.oid = a.amopfamily
  JOIN pg_operator o ON o.oid = a.amopopr
 WHERE a.amopmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')
   AND a.amopstrategy = 3 AND NOT o.oprcanmerge
 ORDER BY o.oid::regoperator::text COLLATE "C";
SELECT o.oid::regoperator AS merges_outside_btree
  FROM fence_operator o
 WHERE o.oprcanmerge AND NOT EXISTS
       (SELECT 1 FROM pg_amop
         WHERE amopmethod = (SELECT oid FROM pg_am WHERE amname = 'btree')
           AND amopopr = o.oid AND amopstrategy = 3)
 ORDER BY o.oid::regoperator::text COLLATE "C";
SELECT o.oid::regoperator AS hash_member_not_hashes
  FROM pg_amop a JOIN fence_opfamily f ON f.oid = a.amopfamily
  JOIN pg_operator o ON o.oid = a.amopopr
 WHERE a.amopmethod = (SELECT oid FROM pg_am WHERE amname = 'hash')
   AND NOT o.oprcanhash
 ORDER BY o.oid::regoperator::text COLLATE "C";
SELECT o.oid::regoperator AS hashes_outside_hash
  FROM fence_operator o
 WHERE o.oprcanhash AND NOT EXISTS
       (SELECT 1 FROM pg_amop
         WHERE amopmethod = (SELECT oid FROM pg_am WHERE amname = 'hash')
           AND amopopr = o.oid AND amopstrategy = 1)
 ORDER BY o.oid::regoperator::text COLLATE "C";
SELECT o1.oid::regoperator AS op, o2.oid::regoperator AS commutator
  FROM fence_operator o1 JOIN pg_operator o2 ON o2.oid = o1.oprcom
 WHERE o1.oprcanmerge <> o2.oprcanmerge OR o1.oprcanhash <> o2.oprcanhash
 ORDER BY o1.oid::regoperator::text COLLATE "C";
SELECT o.oid::regoperator, o.oprcanmerge AS merges, o.oprcanhash AS hashes
  FROM fence_operator o WHERE o.oprname = '=' ORDER BY o.oid::regoperator::text COLLATE "C";

-- A binary-coercible cast without a binary-coercible way back: one, on
-- purpose.  Every token is a valid bigint, but a bigint is a token only when
-- it is not negative, so the way back is a function that checks.
SELECT c.castsource::regtype, c.casttarget::regtype, c.castfunc, c.castcontext
  FROM pg_cast c
 WHERE c.castmethod = 'b'
   AND 'fence_token'::regtype IN (c.castsource, c.casttarget)
   AND NOT EXISTS (SELECT 1 FROM pg_cast k
                    WHERE k.castmethod = 'b' AND k.castsource = c.casttarget
                      AND k.casttarget = c.castsource);

--
-- What the families are for.
--
CREATE TABLE tok (id int, fence fence_token);
INSERT INTO tok SELECT g, (g * 10)::fence_token FROM generate_series(1, 1000) g;
CREATE INDEX tok_fence ON tok (fence);
CREATE TABLE ints (b bigint, i int, s smallint);
INSERT INTO ints SELECT g * 20, g * 20, g * 20 FROM generate_series(-5, 100) g;
CREATE INDEX ints_b ON ints (b);
ANALYZE tok, ints;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- An index on a fence_token column serves a comparison with an integer
-- literal of each width, and an array of them, compared as they are (the
-- negative one matches nothing and is no error).
EXPLAIN (COSTS OFF) SELECT id FROM tok WHERE fence = 50;
EXPLAIN (COSTS OFF) SELECT id FROM tok WHERE fence <= 50::bigint;
EXPLAIN (COSTS OFF) SELECT id FROM tok WHERE fence > 9950::smallint;
EXPLAIN (COSTS OFF) SELECT id FROM tok WHERE fence = ANY ('{30,10,-5}'::int[]);
SELECT id FROM tok WHERE fence = 50;
SELECT id FROM tok WHERE fence <= 50::bigint ORDER BY id;
SELECT id FROM tok WHERE fence > 9950::smallint ORDER BY id;
SELECT id FROM tok WHERE fence = ANY ('{30,10,-5}'::int[]) ORDER BY id;
SELECT count(*) FROM tok WHERE fence > -1 AND fence < 20;

-- A join of a fence_token column with an integer one merges, now that the
-- family can sort both sides; it finds what the hash join finds.
RESET enable_seqscan;
RESET enable_bitmapscan;
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tok t JOIN ints n ON t.fence = n.b;
SELECT count(*) FROM tok t JOIN ints n ON t.fence = n.b;
SELECT count(*) FROM tok t JOIN ints n ON n.i = t.fence;
SELECT count(*) FROM tok t JOIN ints n ON t.fence = n.s;
RESET enable_hashjoin;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tok t JOIN ints n ON t.fence = n.b;
SELECT count(*) FROM tok t JOIN ints n ON t.fence = n.b;
RESET enable_mergejoin;

-- The families compare integers with operators of their own, never with
-- the built-in ones, which stay in integer_ops alone: an operator in two
-- btree families would change how the planner groups integer equalities.
-- Integer sorts and merge joins are as they were: a bigint index gives
-- ORDER BY its order and a merge join its sorted input.
SELECT a.amopopr::regoperator AS builtin_member
  FROM pg_amop a JOIN fence_opfamily f ON f.oid = a.amopfamily
  JOIN pg_operator o ON o.oid = a.amopopr
 WHERE o.oprnamespace = 'pg_catalog'::regnamespace;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT b FROM ints ORDER BY b LIMIT 3;
SET enable_hashjoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ints a JOIN ints c ON a.b = c.b;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_seqscan;

SET client_min_messages = warning;
DROP SCHEMA token_opfamily CASCADE;
RESET client_min_messages;
