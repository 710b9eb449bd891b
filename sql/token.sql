-- The fence_token type: text and binary I/O, bad input,
-- comparisons with itself and with int8/int4/int2, btree and hash operator
-- classes, min/max, casts, no arithmetic, and the seeds' UPDATE.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
-- The tokens below stand for those of leases on another server, chosen
-- freely: this database's counter never issued most of them.
SET fence.external_tokens = on;

-- Everything this file creates lives in its own schema.
CREATE SCHEMA token_test;
SET search_path = token_test, public;

--
-- Text input and output.
--
SELECT '0'::fence_token AS zero, '33'::fence_token AS t33,
       '9223372036854775807'::fence_token AS max;
-- int8's text forms are accepted within range: white space, a sign, leading
-- zeros; "-0" is 0.
SELECT ' 42 '::fence_token AS spaces, E'\t8\n'::fence_token AS tab_newline,
       '+5'::fence_token AS plus, '-0'::fence_token AS minus_zero,
       '007'::fence_token AS leading_zeros,
       '00000000000000000000000000009223372036854775807'::fence_token AS many_zeros;
SELECT NULL::fence_token IS NULL AS null_stays_null;
-- Output is plain decimal text.
SELECT '9223372036854775807'::fence_token::text AS as_text,
       pg_typeof('1'::fence_token) AS type;

-- Every bad input is an error that quotes the input.
SELECT '-1'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT 'abc'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT ''::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '1.5'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT ' '::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '9223372036854775808'::fence_token;
\echo :LAST_ERROR_SQLSTATE
-- 2^64: must not wrap around to 0.
SELECT '18446744073709551616'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '99999999999999999999999999'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '-9223372036854775808'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '-1.5'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '+'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '-'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '--1'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '- 1'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '1 2'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '1e3'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '0x10'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '1_000'::fence_token;
\echo :LAST_ERROR_SQLSTATE
-- Bad input in a table's data is an error too, never a silent value.  (The
-- COPY files of this test are in the throwaway instance's data directory,
-- which the server can write and no other test run shares.)
SELECT current_setting('data_directory') || '/fence_token_copy.txt' AS textfile,
       current_setting('data_directory') || '/fence_token_copy.bin' AS copyfile \gset
COPY (VALUES ('5'), ('-7')) TO :'textfile';
CREATE TABLE token_text (fence fence_token);
COPY token_text FROM :'textfile';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS rows_loaded FROM token_text;

--
-- Binary I/O: 8 bytes, big-endian, like int8.
--
SELECT fence_token_send('0') AS zero, fence_token_send('33') AS t33,
       fence_token_send('9223372036854775807') AS max;

-- A binary COPY round trip, with arrays (whose elements go through the same
-- receive function).
CREATE TABLE token_copy (id int, fence fence_token, history fence_token[]);
INSERT INTO token_copy VALUES
	(1, '0', '{0}'),
	(2, '33', '{32,33}'),
	(3, '9223372036854775807', '{1,9223372036854775807}'),
	(4, NULL, '{NULL,5}'),
	(5, '7', NULL);
COPY token_copy TO :'copyfile' WITH (FORMAT binary);
CREATE TABLE token_copy_back (LIKE token_copy);
COPY token_copy_back FROM :'copyfile' WITH (FORMAT binary);
SELECT * FROM token_copy_back ORDER BY id;
SELECT (SELECT count(*) FROM token_copy_back) AS rows_back,
       (SELECT count(*) FROM (TABLE token_copy EXCEPT TABLE token_copy_back) d) AS lost,
       (SELECT count(*) FROM (TABLE token_copy_back EXCEPT TABLE token_copy) d) AS gained;

-- Bad binary input is rejected: a negative value, and the wrong length.
CREATE TABLE token_bin (fence fence_token);
COPY (SELECT (-1)::bigint) TO :'copyfile' WITH (FORMAT binary);
COPY token_bin FROM :'copyfile' WITH (FORMAT binary);
\echo :LAST_ERROR_SQLSTATE
COPY (SELECT (-9223372036854775808)::bigint) TO :'copyfile' WITH (FORMAT binary);
COPY token_bin FROM :'copyfile' WITH (FORMAT binary);
\echo :LAST_ERROR_SQLSTATE
COPY (SELECT 7::int) TO :'copyfile' WITH (FORMAT binary);
COPY token_bin FROM :'copyfile' WITH (FORMAT binary);
\echo :LAST_ERROR_SQLSTATE
COPY (SELECT '\x00000000000000000000000000000007'::bytea) TO :'copyfile' WITH (FORMAT binary);
COPY token_bin FROM :'copyfile' WITH (FORMAT binary);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS rows_loaded FROM token_bin;

--
-- Casts: from int8, int4 and int2 implicit, to int8 explicit.
--
SELECT castsource::regtype, casttarget::regtype,
       CASE castcontext WHEN 'i' THEN 'implicit' WHEN 'a' THEN 'assignment'
            ELSE 'explicit' END AS context,
       castmethod
  FROM pg_cast
 WHERE castsource = 'fence_token'::regtype OR casttarget = 'fence_token'::regtype
 ORDER BY castsource::regtype::text, casttarget::regtype::text;
SELECT 33::fence_token AS from_int4, 9223372036854775807::fence_token AS from_int8,
       0::bigint::fence_token AS zero, fence_token(12) AS function_form,
       32767::smallint::fence_token AS from_int2;
SELECT '33'::fence_token::bigint AS to_int8,
       pg_typeof('33'::fence_token::bigint) AS type;
-- A negative integer is an error.
SELECT (-1)::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT (-1)::bigint::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT (-2147483648)::int::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT (-1)::smallint::fence_token;
\echo :LAST_ERROR_SQLSTATE
-- No other casts.
SELECT '33'::fence_token::int;
\echo :LAST_ERROR_SQLSTATE
SELECT 1.5::fence_token;
\echo :LAST_ERROR_SQLSTATE
-- Integers store into a fence_token column (implicit casts) ...
CREATE TABLE token_store (fence fence_token, big bigint);
INSERT INTO token_store (fence) VALUES (33), (5000000000::bigint), ('34');
INSERT INTO token_store (fence) VALUES (-1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence FROM token_store ORDER BY fence;
-- ... but a token does not silently become an int8: the cast is explicit.
INSERT INTO token_store (big) VALUES ('33'::fence_token);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO token_store (big) VALUES ('33'::fence_token::bigint);
SELECT big FROM token_store WHERE big IS NOT NULL;
-- fence_token and an integer resolve to fence_token where a common type is
-- needed.
SELECT COALESCE(NULL::fence_token, 0) AS coalesced,
       pg_typeof(COALESCE(NULL::fence_token, 0)) AS type,
       pg_typeof(CASE WHEN true THEN '1'::fence_token ELSE 2::bigint END) AS case_type,
       GREATEST('5'::fence_token, 7, 3::bigint) AS greatest;

--
-- No arithmetic: a token is compared, never computed.
--
SELECT '5'::fence_token + 1;
\echo :LAST_ERROR_SQLSTATE
SELECT 1 + '5'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '5'::fence_token + 1::bigint;
\echo :LAST_ERROR_SQLSTATE
SELECT '5'::fence_token - '1'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT '5'::fence_token * 2;
\echo :LAST_ERROR_SQLSTATE
SELECT -'5'::fence_token;
\echo :LAST_ERROR_SQLSTATE
SELECT sum(fence) FROM token_store;
\echo :LAST_ERROR_SQLSTATE
SELECT avg(fence) FROM token_store;
\echo :LAST_ERROR_SQLSTATE
-- With an explicit cast it is an int8, and arithmetic is int8's.
SELECT '5'::fence_token::bigint + 1 AS explicit;

--
-- Comparisons.
--
-- The operators, with their commutators, negators and estimators.
SELECT o.oprname, o.oprleft::regtype AS left, o.oprright::regtype AS right,
       c.oprname || '(' || c.oprleft::regtype || ',' || c.oprright::regtype || ')' AS commutator,
       n.oprname || '(' || n.oprleft::regtype || ',' || n.oprright::regtype || ')' AS negator,
       o.oprrest, o.oprjoin, o.oprcanmerge AS merges, o.oprcanhash AS hashes
  FROM pg_operator o
  JOIN pg_operator c ON c.oid = o.oprcom
  JOIN pg_operator n ON n.oid = o.oprnegate
 WHERE 'fence_token'::regtype IN (o.oprleft, o.oprright)
 ORDER BY o.oprleft::regtype::text, o.oprright::regtype::text,
          array_position(ARRAY['=', '<>', '<', '<=', '>', '>='], o.oprname::text);
SELECT count(*) AS operators_with_fence_token
  FROM pg_operator WHERE 'fence_token'::regtype IN (oprleft, oprright);

-- fence_token with fence_token.
SELECT a, b, a = b AS eq, a <> b AS ne, a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge
  FROM (VALUES ('0'::fence_token, '0'::fence_token), ('0', '1'), ('1', '0'),
               ('9223372036854775806', '9223372036854775807'),
               ('9223372036854775807', '9223372036854775807'),
               ('9223372036854775807', '0')) v(a, b);
-- fence_token with int8, and int8 with fence_token: a negative integer is
-- below every token.
SELECT a, b, a = b AS eq, a <> b AS ne, a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge
  FROM unnest('{0,1,9223372036854775807}'::fence_token[]) a,
       unnest('{-9223372036854775808,-1,0,1,9223372036854775807}'::bigint[]) b;
SELECT b, a, b = a AS eq, b <> a AS ne, b < a AS lt, b <= a AS le, b > a AS gt, b >= a AS ge
  FROM unnest('{0,1,9223372036854775807}'::fence_token[]) a,
       unnest('{-9223372036854775808,-1,0,1,9223372036854775807}'::bigint[]) b;
-- fence_token with int4, and int4 with fence_token.
SELECT a, b, a = b AS eq, a <> b AS ne, a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge
  FROM unnest('{0,1,2147483648,9223372036854775807}'::fence_token[]) a,
       unnest('{-2147483648,-1,0,1,2147483647}'::int[]) b;
SELECT b, a, b = a AS eq, b <> a AS ne, b < a AS lt, b <= a AS le, b > a AS gt, b >= a AS ge
  FROM unnest('{0,1,2147483648,9223372036854775807}'::fence_token[]) a,
       unnest('{-2147483648,-1,0,1,2147483647}'::int[]) b;
-- The same, checked against numeric comparison of the values: no row may
-- disagree.
SELECT count(*) AS disagreements
  FROM unnest('{0,1,2,2147483647,2147483648,9223372036854775806,9223372036854775807}'::fence_token[]) a,
       unnest('{-9223372036854775808,-2147483649,-2147483648,-1,0,1,2,2147483647,2147483648,9223372036854775807}'::bigint[]) b,
       LATERAL (SELECT a::bigint::numeric AS x, b::numeric AS y) n
 WHERE (a = b, a <> b, a < b, a <= b, a > b, a >= b,
        b = a, b <> a, b < a, b <= a, b > a, b >= a)
       IS DISTINCT FROM
       (x = y, x <> y, x < y, x <= y, x > y, x >= y,
        y = x, y <> x, y < x, y <= x, y > x, y >= x)
    OR (b BETWEEN -2147483648 AND 2147483647 AND
        (a = b::int, a <> b::int, a < b::int, a <= b::int, a > b::int, a >= b::int,
         b::int = a, b::int <> a, b::int < a, b::int <= a, b::int > a, b::int >= a)
        IS DISTINCT FROM
        (x = y, x <> y, x < y, x <= y, x > y, x >= y,
         y = x, y <> x, y < x, y <= x, y > x, y >= x));
-- An untyped literal is read as a token; an integer literal compares as an
-- integer (no cast, so a negative one is simply smaller).
SELECT '5'::fence_token = '5' AS literal, '5'::fence_token > -5 AS negative_literal,
       '5'::fence_token BETWEEN 1 AND 9 AS between_ints;
-- Comparing with numeric needs an explicit cast: there is no operator.
SELECT '5'::fence_token < 5.5;
\echo :LAST_ERROR_SQLSTATE
-- smallint has operators of its own (some drivers send small integers as
-- smallint); without them int4's and int8's would be equally good and the
-- comparison ambiguous.
SELECT '5'::fence_token = 5::smallint AS eq, 5::smallint = '5'::fence_token AS eq_left,
       '5'::fence_token <= 4::smallint AS le, (-1)::smallint < '0'::fence_token AS negative,
       '32768'::fence_token > 32767::smallint AS above_smallint;
SELECT a, b, a = b AS eq, a <> b AS ne, a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge
  FROM unnest('{0,1,32768}'::fence_token[]) a,
       unnest('{-32768,-1,0,1,32767}'::smallint[]) b;
SELECT count(*) AS smallint_disagreements
  FROM unnest('{0,1,2,32767,32768,9223372036854775807}'::fence_token[]) a,
       unnest('{-32768,-2,-1,0,1,2,32766,32767}'::smallint[]) b,
       LATERAL (SELECT a::bigint::numeric AS x, b::numeric AS y) n
 WHERE (a = b, a <> b, a < b, a <= b, a > b, a >= b,
        b = a, b <> a, b < a, b <= a, b > a, b >= a)
       IS DISTINCT FROM
       (x = y, x <> y, x < y, x <= y, x > y, x >= y,
        y = x, y <> x, y < x, y <= x, y > x, y >= x);
-- The smallint cast and operators make no literal or parameter of another
-- integer type ambiguous: each resolves to its own operator.
CREATE TABLE token_resolve (fence fence_token);
INSERT INTO token_resolve VALUES (5), (40000::int), (3000000000), (7::smallint);
SELECT count(*) FILTER (WHERE fence <= 5) AS le_int4_literal,
       count(*) FILTER (WHERE fence = 40000) AS eq_int4,
       count(*) FILTER (WHERE fence = 3000000000) AS eq_int8_literal,
       count(*) FILTER (WHERE fence >= 7::smallint) AS ge_int2,
       count(*) FILTER (WHERE fence = '7') AS eq_unknown
  FROM token_resolve;
-- Function arguments too: a token parameter takes every integer width.
BEGIN;
SELECT fence_use_token(33::smallint);
SELECT fence_current_token() AS from_smallint;
SELECT fence_use_token(40000);
SELECT fence_current_token() AS from_int4;
SELECT fence_use_token(3000000000);
SELECT fence_current_token() AS from_int8;
COMMIT;
SELECT fence_release('token:none', 33::smallint) AS int2_token,
       fence_release('token:none', 33) AS int4_token,
       fence_release('token:none', 3000000000) AS int8_token,
       fence_release(42, 33::smallint) AS int_key_int2_token;

--
-- btree and hash operator classes.
--
SELECT am.amname, f.opfname, o.opcname, o.opcdefault,
       l.amoplefttype::regtype AS left, l.amoprighttype::regtype AS right,
       count(*) AS operators
  FROM pg_opclass o
  JOIN pg_am am ON am.oid = o.opcmethod
  JOIN pg_opfamily f ON f.oid = o.opcfamily
  JOIN pg_amop l ON l.amopfamily = f.oid
 WHERE o.opcintype = 'fence_token'::regtype
 GROUP BY 1, 2, 3, 4, 5, 6
 ORDER BY am.amname, l.amoplefttype::regtype::text, l.amoprighttype::regtype::text;

CREATE TABLE token_sort (id int, fence fence_token);
INSERT INTO token_sort VALUES (1, '33'), (2, '9223372036854775807'), (3, '0'),
	(4, '33'), (5, NULL), (6, '4'), (7, '400'), (8, '0');
-- ORDER BY sorts numerically (not as text: 4 < 33 < 400).
SELECT id, fence FROM token_sort ORDER BY fence, id;
SELECT id, fence FROM token_sort ORDER BY fence DESC NULLS LAST, id;
-- DISTINCT and GROUP BY, by sorting and by hashing.
SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT fence, count(*) FROM token_sort GROUP BY fence;
SELECT fence, count(*) FROM token_sort GROUP BY fence ORDER BY fence;
RESET enable_hashagg;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT fence, count(*) FROM token_sort GROUP BY fence;
SELECT fence, count(*) FROM token_sort GROUP BY fence ORDER BY fence;
EXPLAIN (COSTS OFF) SELECT DISTINCT fence FROM token_sort;
SELECT count(*) AS distinct_fences FROM (SELECT DISTINCT fence FROM token_sort) d;
RESET enable_sort;
-- A token hashes like the equal int8, int4 and int2, which is what lets the hash
-- family hold the cross-type = operators.
SELECT fence_token_hash('5') = hashint8(5) AS like_int8,
       fence_token_hash('5') = hashint4(5) AS like_int4,
       fence_token_hash_extended('5', 42) = hashint8extended(5, 42) AS extended_like_int8,
       fence_token_hash_extended('5', 42) = hashint4extended(5, 42) AS extended_like_int4,
       fence_token_hash('9223372036854775807') = hashint8(9223372036854775807) AS max_like_int8,
       fence_token_hash('5') = hashint2(5::smallint) AS like_int2,
       fence_token_hash_extended('5', 42) = hashint2extended(5::smallint, 42) AS extended_like_int2;

-- A token can be a key.
CREATE TABLE token_key (fence fence_token PRIMARY KEY);
INSERT INTO token_key VALUES (1), (2), ('3');
INSERT INTO token_key VALUES (2::bigint);
\echo :LAST_ERROR_SQLSTATE

-- Index scans, with a fence_token compared with int4 and int8 parameters
-- (the generic plan, so the parameter stays a parameter).
CREATE TABLE token_idx (id int, fence fence_token);
INSERT INTO token_idx SELECT g, g * 10 FROM generate_series(1, 1000) g;
CREATE INDEX token_idx_fence ON token_idx (fence);
ANALYZE token_idx;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET plan_cache_mode = force_generic_plan;
PREPARE idx4(int) AS SELECT id FROM token_idx WHERE fence <= $1 ORDER BY fence;
EXPLAIN (COSTS OFF) EXECUTE idx4(30);
EXECUTE idx4(30);
EXECUTE idx4(-1);
PREPARE idx8(bigint) AS SELECT fence FROM token_idx WHERE fence > $1 AND fence < 9223372036854775807;
EXPLAIN (COSTS OFF) EXECUTE idx8(9970);
EXECUTE idx8(9970);
PREPARE idx2(smallint) AS SELECT id FROM token_idx WHERE fence < $1 ORDER BY fence;
EXPLAIN (COSTS OFF) EXECUTE idx2(30);
EXECUTE idx2(30);
SELECT count(*) AS all_rows FROM token_idx WHERE fence > (-9223372036854775808)::bigint;
-- Two bounds of different types on one index column; an int8 array.
SELECT id FROM token_idx WHERE fence > 5::bigint AND fence > 15 AND fence < '40' AND fence < 35::bigint;
EXPLAIN (COSTS OFF) SELECT id FROM token_idx WHERE fence = ANY ('{20,10,-5}'::bigint[]);
SELECT id FROM token_idx WHERE fence = ANY ('{20,10,-5}'::bigint[]) ORDER BY id;
SELECT id FROM token_idx WHERE fence IN (10, 30) ORDER BY id;
-- min and max read the index: an InitPlan each, a Limit over an index-only
-- scan, one forward and one backward.  PostgreSQL 17 stopped printing
-- "(returns $n)" after an InitPlan's name, so the plan is shown without it
-- and this file expects the same on every version.
CREATE FUNCTION explain_plan(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
		RETURN NEXT regexp_replace(line, '^(\s*InitPlan \d+) \(returns \$\d+\)$', '\1');
	END LOOP;
END
$$;
SELECT explain_plan('SELECT min(fence), max(fence) FROM token_idx') AS "QUERY PLAN";
SELECT min(fence), max(fence) FROM token_idx;
-- A hash index, probed with integers.
DROP INDEX token_idx_fence;
CREATE INDEX token_idx_hash ON token_idx USING hash (fence);
EXPLAIN (COSTS OFF) SELECT id FROM token_idx WHERE fence = 50;
SELECT id FROM token_idx WHERE fence = 50;
SELECT id FROM token_idx WHERE fence = 50::bigint;
SELECT id FROM token_idx WHERE fence = -50;
SELECT id FROM token_idx WHERE fence = 50::smallint;
RESET enable_bitmapscan;
RESET plan_cache_mode;
RESET enable_seqscan;

-- Joins on a fence_token and an integer column: a hash join (the hash
-- family), and, with hash joins off, a plan that still works (a merge
-- join, now that the btree family holds the integers' own comparisons:
-- sql/token_opfamily.sql).
CREATE TABLE token_ints (b bigint, i int);
INSERT INTO token_ints SELECT g * 20, g * 20 FROM generate_series(-5, 100) g;
ANALYZE token_ints;
SET enable_nestloop = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM token_idx t JOIN token_ints n ON t.fence = n.b;
SELECT count(*) FROM token_idx t JOIN token_ints n ON t.fence = n.b;
SELECT count(*) FROM token_idx t JOIN token_ints n ON n.i = t.fence;
RESET enable_mergejoin;
SET enable_hashjoin = off;
SELECT count(*) FROM token_idx t JOIN token_ints n ON t.fence = n.b AND t.fence = n.i;
RESET enable_hashjoin;
RESET enable_nestloop;

--
-- min and max.
--
SELECT min(fence), max(fence) FROM token_sort;
SELECT min(fence), max(fence) FROM token_sort WHERE fence < 0;
-- Numeric, not textual: 4 < 33.
SELECT min(fence), max(fence) FROM token_sort WHERE id IN (1, 6);
SELECT max(fence)::bigint AS max_as_int8 FROM token_sort;

--
-- The seeds' statement, verbatim, with integer parameters against a
-- fence_token column.
--
CREATE TABLE channels (id int PRIMARY KEY, retention_days int, fence fence_token);
INSERT INTO channels VALUES (7, 7, 32);
PREPARE w(int, int) AS UPDATE channels SET retention_days = $1, fence = $2 WHERE id = 7 AND fence <= $2;
-- W1 with token 33 over fence 32: written.
EXECUTE w(30, 33);
\echo updated :ROW_COUNT
SELECT * FROM channels;
-- A stale token 31: nothing written.
EXECUTE w(30, 31);
\echo updated :ROW_COUNT
SELECT * FROM channels;
-- The same with bigint parameters: token 34 writes, 33 is now stale.
PREPARE wb(bigint, bigint) AS UPDATE channels SET retention_days = $1, fence = $2 WHERE id = 7 AND fence <= $2;
EXECUTE wb(90, 34);
\echo updated :ROW_COUNT
EXECUTE wb(30, 33);
\echo updated :ROW_COUNT
SELECT * FROM channels;
EXECUTE wb(30, 9223372036854775807);
\echo updated :ROW_COUNT
SELECT * FROM channels;
-- smallint parameters, as psycopg 3 sends a small Python int.
UPDATE channels SET fence = 32;
PREPARE ws(smallint, smallint) AS UPDATE channels SET retention_days = $1, fence = $2 WHERE id = 7 AND fence <= $2;
EXECUTE ws(14, 33);
\echo updated :ROW_COUNT
EXECUTE ws(21, 31);
\echo updated :ROW_COUNT
SELECT * FROM channels;
DEALLOCATE ws;
-- The generic plan compares the column with the integer $2 as it is.
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE w(30, 33);
-- A negative token never writes: the generic plan finds no row, and a custom
-- plan fails while folding the cast of $2 to fence_token.
UPDATE channels SET fence = 40, retention_days = 90;
EXECUTE w(30, -1);
\echo updated :ROW_COUNT
SET plan_cache_mode = force_custom_plan;
EXECUTE w(30, -1);
\echo :LAST_ERROR_SQLSTATE
RESET plan_cache_mode;
SELECT * FROM channels;
DEALLOCATE w;
DEALLOCATE wb;

RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA token_test CASCADE;
RESET client_min_messages;
