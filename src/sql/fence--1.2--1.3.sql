-- fence 1.2 to 1.3: every change since 1.2, one block per concern.  The
-- extension-update test (test/t/012_extension_update.pl) proves that an
-- installation updated with it has exactly the objects a fresh 1.3 install
-- has.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fence UPDATE TO '1.3'" to load this file. \quit

-- fence_token's operator families, complete as PostgreSQL requires of every
-- type (its own regression suite checks it: opr_sanity).  The cross-type =
-- operators MERGES, as the equality of a btree family must.  ALTER
-- OPERATOR ... SET (MERGES) exists from PostgreSQL 17 on only, and 1.3
-- runs on 15 and 16 too, so the flag is set in pg_operator directly (the
-- extension is installed by a superuser); a fresh install creates the
-- operators with it.
UPDATE pg_catalog.pg_operator AS op SET oprcanmerge = true
 WHERE op.oid IN (
	'@extschema@.=(@extschema@.fence_token,pg_catalog.int8)'::pg_catalog.regoperator,
	'@extschema@.=(pg_catalog.int8,@extschema@.fence_token)'::pg_catalog.regoperator,
	'@extschema@.=(@extschema@.fence_token,pg_catalog.int4)'::pg_catalog.regoperator,
	'@extschema@.=(pg_catalog.int4,@extschema@.fence_token)'::pg_catalog.regoperator,
	'@extschema@.=(@extschema@.fence_token,pg_catalog.int2)'::pg_catalog.regoperator,
	'@extschema@.=(pg_catalog.int2,@extschema@.fence_token)'::pg_catalog.regoperator);

-- The integers' comparison and hash functions were loose members of the
-- families; now the integer operator classes below hold them.
ALTER OPERATOR FAMILY @extschema@.fence_token_ops USING btree DROP
	FUNCTION 1 (pg_catalog.int8, pg_catalog.int8),
	FUNCTION 1 (pg_catalog.int4, pg_catalog.int4),
	FUNCTION 1 (pg_catalog.int2, pg_catalog.int2);
ALTER OPERATOR FAMILY @extschema@.fence_token_ops USING hash DROP
	FUNCTION 1 (pg_catalog.int8, pg_catalog.int8),
	FUNCTION 2 (pg_catalog.int8, pg_catalog.int8),
	FUNCTION 1 (pg_catalog.int4, pg_catalog.int4),
	FUNCTION 2 (pg_catalog.int4, pg_catalog.int4),
	FUNCTION 1 (pg_catalog.int2, pg_catalog.int2),
	FUNCTION 2 (pg_catalog.int2, pg_catalog.int2);

-- The integers' own members, which make both families complete the way
-- PostgreSQL's integer_ops is: a family that compares fence_token with
-- bigint, integer and smallint must also compare each of those types with
-- itself and with the others, with an operator class for each, or the
-- access methods' validation (amvalidate) rejects it; and a merge join of
-- a token with an integer sorts the integer side with the family's "<" for
-- that integer type.
--
-- The members cannot be the built-in integer operators: an operator in two
-- btree families changes how the planner groups integer equalities
-- (equivalence classes merge only when their operators have the same
-- families), which PostgreSQL's own equivclass test shows as changed
-- plans.  So the families have integer comparisons of their own, #<#,
-- #<=#, #=#, #>=# and #>#, implemented by the built-in integer functions
-- (so they agree with integer_ops wherever the two families meet).
-- Nobody needs to write them; the planner uses them.  The integer
-- operator classes are not default ones: an index on an integer column
-- keeps integer_ops.
CREATE OPERATOR @extschema@.#<# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int8lt,
	COMMUTATOR = OPERATOR(@extschema@.#>#),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.#<# (pg_catalog.int8, pg_catalog.int8) IS 'bigint < bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<=# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int8le,
	COMMUTATOR = OPERATOR(@extschema@.#>=#),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.#<=# (pg_catalog.int8, pg_catalog.int8) IS 'bigint <= bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#=# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int8eq,
	COMMUTATOR = OPERATOR(@extschema@.#=#),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES, MERGES
);
COMMENT ON OPERATOR @extschema@.#=# (pg_catalog.int8, pg_catalog.int8) IS 'bigint = bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#>=# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int8ge,
	COMMUTATOR = OPERATOR(@extschema@.#<=#),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.#>=# (pg_catalog.int8, pg_catalog.int8) IS 'bigint >= bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#># (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int8gt,
	COMMUTATOR = OPERATOR(@extschema@.#<#),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.#># (pg_catalog.int8, pg_catalog.int8) IS 'bigint > bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int84lt,
	COMMUTATOR = OPERATOR(@extschema@.#>#),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.#<# (pg_catalog.int8, pg_catalog.int4) IS 'bigint < integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<=# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int84le,
	COMMUTATOR = OPERATOR(@extschema@.#>=#),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.#<=# (pg_catalog.int8, pg_catalog.int4) IS 'bigint <= integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#=# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int84eq,
	COMMUTATOR = OPERATOR(@extschema@.#=#),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES, MERGES
);
COMMENT ON OPERATOR @extschema@.#=# (pg_catalog.int8, pg_catalog.int4) IS 'bigint = integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#>=# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int84ge,
	COMMUTATOR = OPERATOR(@extschema@.#<=#),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.#>=# (pg_catalog.int8, pg_catalog.int4) IS 'bigint >= integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#># (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int84gt,
	COMMUTATOR = OPERATOR(@extschema@.#<#),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.#># (pg_catalog.int8, pg_catalog.int4) IS 'bigint > integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int82lt,
	COMMUTATOR = OPERATOR(@extschema@.#>#),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.#<# (pg_catalog.int8, pg_catalog.int2) IS 'bigint < smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<=# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int82le,
	COMMUTATOR = OPERATOR(@extschema@.#>=#),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.#<=# (pg_catalog.int8, pg_catalog.int2) IS 'bigint <= smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#=# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int82eq,
	COMMUTATOR = OPERATOR(@extschema@.#=#),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES, MERGES
);
COMMENT ON OPERATOR @extschema@.#=# (pg_catalog.int8, pg_catalog.int2) IS 'bigint = smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#>=# (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int82ge,
	COMMUTATOR = OPERATOR(@extschema@.#<=#),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.#>=# (pg_catalog.int8, pg_catalog.int2) IS 'bigint >= smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#># (
	LEFTARG = pg_catalog.int8, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int82gt,
	COMMUTATOR = OPERATOR(@extschema@.#<#),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.#># (pg_catalog.int8, pg_catalog.int2) IS 'bigint > smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int48lt,
	COMMUTATOR = OPERATOR(@extschema@.#>#),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.#<# (pg_catalog.int4, pg_catalog.int8) IS 'integer < bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<=# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int48le,
	COMMUTATOR = OPERATOR(@extschema@.#>=#),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.#<=# (pg_catalog.int4, pg_catalog.int8) IS 'integer <= bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#=# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int48eq,
	COMMUTATOR = OPERATOR(@extschema@.#=#),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES, MERGES
);
COMMENT ON OPERATOR @extschema@.#=# (pg_catalog.int4, pg_catalog.int8) IS 'integer = bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#>=# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int48ge,
	COMMUTATOR = OPERATOR(@extschema@.#<=#),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.#>=# (pg_catalog.int4, pg_catalog.int8) IS 'integer >= bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#># (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int48gt,
	COMMUTATOR = OPERATOR(@extschema@.#<#),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.#># (pg_catalog.int4, pg_catalog.int8) IS 'integer > bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int4lt,
	COMMUTATOR = OPERATOR(@extschema@.#>#),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.#<# (pg_catalog.int4, pg_catalog.int4) IS 'integer < integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<=# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int4le,
	COMMUTATOR = OPERATOR(@extschema@.#>=#),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.#<=# (pg_catalog.int4, pg_catalog.int4) IS 'integer <= integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#=# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int4eq,
	COMMUTATOR = OPERATOR(@extschema@.#=#),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES, MERGES
);
COMMENT ON OPERATOR @extschema@.#=# (pg_catalog.int4, pg_catalog.int4) IS 'integer = integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#>=# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int4ge,
	COMMUTATOR = OPERATOR(@extschema@.#<=#),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.#>=# (pg_catalog.int4, pg_catalog.int4) IS 'integer >= integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#># (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int4gt,
	COMMUTATOR = OPERATOR(@extschema@.#<#),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.#># (pg_catalog.int4, pg_catalog.int4) IS 'integer > integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int42lt,
	COMMUTATOR = OPERATOR(@extschema@.#>#),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.#<# (pg_catalog.int4, pg_catalog.int2) IS 'integer < smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<=# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int42le,
	COMMUTATOR = OPERATOR(@extschema@.#>=#),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.#<=# (pg_catalog.int4, pg_catalog.int2) IS 'integer <= smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#=# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int42eq,
	COMMUTATOR = OPERATOR(@extschema@.#=#),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES, MERGES
);
COMMENT ON OPERATOR @extschema@.#=# (pg_catalog.int4, pg_catalog.int2) IS 'integer = smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#>=# (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int42ge,
	COMMUTATOR = OPERATOR(@extschema@.#<=#),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.#>=# (pg_catalog.int4, pg_catalog.int2) IS 'integer >= smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#># (
	LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int42gt,
	COMMUTATOR = OPERATOR(@extschema@.#<#),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.#># (pg_catalog.int4, pg_catalog.int2) IS 'integer > smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int28lt,
	COMMUTATOR = OPERATOR(@extschema@.#>#),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.#<# (pg_catalog.int2, pg_catalog.int8) IS 'smallint < bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<=# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int28le,
	COMMUTATOR = OPERATOR(@extschema@.#>=#),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.#<=# (pg_catalog.int2, pg_catalog.int8) IS 'smallint <= bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#=# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int28eq,
	COMMUTATOR = OPERATOR(@extschema@.#=#),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES, MERGES
);
COMMENT ON OPERATOR @extschema@.#=# (pg_catalog.int2, pg_catalog.int8) IS 'smallint = bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#>=# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int28ge,
	COMMUTATOR = OPERATOR(@extschema@.#<=#),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.#>=# (pg_catalog.int2, pg_catalog.int8) IS 'smallint >= bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#># (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int8, FUNCTION = pg_catalog.int28gt,
	COMMUTATOR = OPERATOR(@extschema@.#<#),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.#># (pg_catalog.int2, pg_catalog.int8) IS 'smallint > bigint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int24lt,
	COMMUTATOR = OPERATOR(@extschema@.#>#),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.#<# (pg_catalog.int2, pg_catalog.int4) IS 'smallint < integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<=# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int24le,
	COMMUTATOR = OPERATOR(@extschema@.#>=#),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.#<=# (pg_catalog.int2, pg_catalog.int4) IS 'smallint <= integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#=# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int24eq,
	COMMUTATOR = OPERATOR(@extschema@.#=#),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES, MERGES
);
COMMENT ON OPERATOR @extschema@.#=# (pg_catalog.int2, pg_catalog.int4) IS 'smallint = integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#>=# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int24ge,
	COMMUTATOR = OPERATOR(@extschema@.#<=#),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.#>=# (pg_catalog.int2, pg_catalog.int4) IS 'smallint >= integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#># (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int4, FUNCTION = pg_catalog.int24gt,
	COMMUTATOR = OPERATOR(@extschema@.#<#),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.#># (pg_catalog.int2, pg_catalog.int4) IS 'smallint > integer, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int2lt,
	COMMUTATOR = OPERATOR(@extschema@.#>#),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.#<# (pg_catalog.int2, pg_catalog.int2) IS 'smallint < smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#<=# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int2le,
	COMMUTATOR = OPERATOR(@extschema@.#>=#),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.#<=# (pg_catalog.int2, pg_catalog.int2) IS 'smallint <= smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#=# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int2eq,
	COMMUTATOR = OPERATOR(@extschema@.#=#),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES, MERGES
);
COMMENT ON OPERATOR @extschema@.#=# (pg_catalog.int2, pg_catalog.int2) IS 'smallint = smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#>=# (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int2ge,
	COMMUTATOR = OPERATOR(@extschema@.#<=#),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.#>=# (pg_catalog.int2, pg_catalog.int2) IS 'smallint >= smallint, for the fence_token operator families';
CREATE OPERATOR @extschema@.#># (
	LEFTARG = pg_catalog.int2, RIGHTARG = pg_catalog.int2, FUNCTION = pg_catalog.int2gt,
	COMMUTATOR = OPERATOR(@extschema@.#<#),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.#># (pg_catalog.int2, pg_catalog.int2) IS 'smallint > smallint, for the fence_token operator families';

CREATE OPERATOR CLASS @extschema@.fence_token_int8_ops
	FOR TYPE pg_catalog.int8 USING btree FAMILY @extschema@.fence_token_ops AS
	OPERATOR 1 @extschema@.#<# (pg_catalog.int8, pg_catalog.int8),
	OPERATOR 2 @extschema@.#<=# (pg_catalog.int8, pg_catalog.int8),
	OPERATOR 3 @extschema@.#=# (pg_catalog.int8, pg_catalog.int8),
	OPERATOR 4 @extschema@.#>=# (pg_catalog.int8, pg_catalog.int8),
	OPERATOR 5 @extschema@.#># (pg_catalog.int8, pg_catalog.int8),
	FUNCTION 1 pg_catalog.btint8cmp(pg_catalog.int8, pg_catalog.int8),
	FUNCTION 2 pg_catalog.btint8sortsupport(pg_catalog.internal),
	FUNCTION 4 pg_catalog.btequalimage(pg_catalog.oid);
COMMENT ON OPERATOR CLASS @extschema@.fence_token_int8_ops USING btree IS 'bigint in the fence_token btree family, which must cover each of its types; bigint''s default class stays integer_ops';
CREATE OPERATOR CLASS @extschema@.fence_token_int4_ops
	FOR TYPE pg_catalog.int4 USING btree FAMILY @extschema@.fence_token_ops AS
	OPERATOR 1 @extschema@.#<# (pg_catalog.int4, pg_catalog.int4),
	OPERATOR 2 @extschema@.#<=# (pg_catalog.int4, pg_catalog.int4),
	OPERATOR 3 @extschema@.#=# (pg_catalog.int4, pg_catalog.int4),
	OPERATOR 4 @extschema@.#>=# (pg_catalog.int4, pg_catalog.int4),
	OPERATOR 5 @extschema@.#># (pg_catalog.int4, pg_catalog.int4),
	FUNCTION 1 pg_catalog.btint4cmp(pg_catalog.int4, pg_catalog.int4),
	FUNCTION 2 pg_catalog.btint4sortsupport(pg_catalog.internal),
	FUNCTION 4 pg_catalog.btequalimage(pg_catalog.oid);
COMMENT ON OPERATOR CLASS @extschema@.fence_token_int4_ops USING btree IS 'integer in the fence_token btree family, which must cover each of its types; integer''s default class stays integer_ops';
CREATE OPERATOR CLASS @extschema@.fence_token_int2_ops
	FOR TYPE pg_catalog.int2 USING btree FAMILY @extschema@.fence_token_ops AS
	OPERATOR 1 @extschema@.#<# (pg_catalog.int2, pg_catalog.int2),
	OPERATOR 2 @extschema@.#<=# (pg_catalog.int2, pg_catalog.int2),
	OPERATOR 3 @extschema@.#=# (pg_catalog.int2, pg_catalog.int2),
	OPERATOR 4 @extschema@.#>=# (pg_catalog.int2, pg_catalog.int2),
	OPERATOR 5 @extschema@.#># (pg_catalog.int2, pg_catalog.int2),
	FUNCTION 1 pg_catalog.btint2cmp(pg_catalog.int2, pg_catalog.int2),
	FUNCTION 2 pg_catalog.btint2sortsupport(pg_catalog.internal),
	FUNCTION 4 pg_catalog.btequalimage(pg_catalog.oid);
COMMENT ON OPERATOR CLASS @extschema@.fence_token_int2_ops USING btree IS 'smallint in the fence_token btree family, which must cover each of its types; smallint''s default class stays integer_ops';
ALTER OPERATOR FAMILY @extschema@.fence_token_ops USING btree ADD
	OPERATOR 1 @extschema@.#<# (pg_catalog.int8, pg_catalog.int4),
	OPERATOR 2 @extschema@.#<=# (pg_catalog.int8, pg_catalog.int4),
	OPERATOR 3 @extschema@.#=# (pg_catalog.int8, pg_catalog.int4),
	OPERATOR 4 @extschema@.#>=# (pg_catalog.int8, pg_catalog.int4),
	OPERATOR 5 @extschema@.#># (pg_catalog.int8, pg_catalog.int4),
	FUNCTION 1 pg_catalog.btint84cmp(pg_catalog.int8, pg_catalog.int4),
	OPERATOR 1 @extschema@.#<# (pg_catalog.int8, pg_catalog.int2),
	OPERATOR 2 @extschema@.#<=# (pg_catalog.int8, pg_catalog.int2),
	OPERATOR 3 @extschema@.#=# (pg_catalog.int8, pg_catalog.int2),
	OPERATOR 4 @extschema@.#>=# (pg_catalog.int8, pg_catalog.int2),
	OPERATOR 5 @extschema@.#># (pg_catalog.int8, pg_catalog.int2),
	FUNCTION 1 pg_catalog.btint82cmp(pg_catalog.int8, pg_catalog.int2),
	OPERATOR 1 @extschema@.#<# (pg_catalog.int4, pg_catalog.int8),
	OPERATOR 2 @extschema@.#<=# (pg_catalog.int4, pg_catalog.int8),
	OPERATOR 3 @extschema@.#=# (pg_catalog.int4, pg_catalog.int8),
	OPERATOR 4 @extschema@.#>=# (pg_catalog.int4, pg_catalog.int8),
	OPERATOR 5 @extschema@.#># (pg_catalog.int4, pg_catalog.int8),
	FUNCTION 1 pg_catalog.btint48cmp(pg_catalog.int4, pg_catalog.int8),
	OPERATOR 1 @extschema@.#<# (pg_catalog.int4, pg_catalog.int2),
	OPERATOR 2 @extschema@.#<=# (pg_catalog.int4, pg_catalog.int2),
	OPERATOR 3 @extschema@.#=# (pg_catalog.int4, pg_catalog.int2),
	OPERATOR 4 @extschema@.#>=# (pg_catalog.int4, pg_catalog.int2),
	OPERATOR 5 @extschema@.#># (pg_catalog.int4, pg_catalog.int2),
	FUNCTION 1 pg_catalog.btint42cmp(pg_catalog.int4, pg_catalog.int2),
	OPERATOR 1 @extschema@.#<# (pg_catalog.int2, pg_catalog.int8),
	OPERATOR 2 @extschema@.#<=# (pg_catalog.int2, pg_catalog.int8),
	OPERATOR 3 @extschema@.#=# (pg_catalog.int2, pg_catalog.int8),
	OPERATOR 4 @extschema@.#>=# (pg_catalog.int2, pg_catalog.int8),
	OPERATOR 5 @extschema@.#># (pg_catalog.int2, pg_catalog.int8),
	FUNCTION 1 pg_catalog.btint28cmp(pg_catalog.int2, pg_catalog.int8),
	OPERATOR 1 @extschema@.#<# (pg_catalog.int2, pg_catalog.int4),
	OPERATOR 2 @extschema@.#<=# (pg_catalog.int2, pg_catalog.int4),
	OPERATOR 3 @extschema@.#=# (pg_catalog.int2, pg_catalog.int4),
	OPERATOR 4 @extschema@.#>=# (pg_catalog.int2, pg_catalog.int4),
	OPERATOR 5 @extschema@.#># (pg_catalog.int2, pg_catalog.int4),
	FUNCTION 1 pg_catalog.btint24cmp(pg_catalog.int2, pg_catalog.int4);

CREATE OPERATOR CLASS @extschema@.fence_token_int8_ops
	FOR TYPE pg_catalog.int8 USING hash FAMILY @extschema@.fence_token_ops AS
	OPERATOR 1 @extschema@.#=# (pg_catalog.int8, pg_catalog.int8),
	FUNCTION 1 pg_catalog.hashint8(pg_catalog.int8),
	FUNCTION 2 pg_catalog.hashint8extended(pg_catalog.int8, pg_catalog.int8);
COMMENT ON OPERATOR CLASS @extschema@.fence_token_int8_ops USING hash IS 'bigint in the fence_token hash family, which must cover each of its types; bigint''s default class stays integer_ops';
CREATE OPERATOR CLASS @extschema@.fence_token_int4_ops
	FOR TYPE pg_catalog.int4 USING hash FAMILY @extschema@.fence_token_ops AS
	OPERATOR 1 @extschema@.#=# (pg_catalog.int4, pg_catalog.int4),
	FUNCTION 1 pg_catalog.hashint4(pg_catalog.int4),
	FUNCTION 2 pg_catalog.hashint4extended(pg_catalog.int4, pg_catalog.int8);
COMMENT ON OPERATOR CLASS @extschema@.fence_token_int4_ops USING hash IS 'integer in the fence_token hash family, which must cover each of its types; integer''s default class stays integer_ops';
CREATE OPERATOR CLASS @extschema@.fence_token_int2_ops
	FOR TYPE pg_catalog.int2 USING hash FAMILY @extschema@.fence_token_ops AS
	OPERATOR 1 @extschema@.#=# (pg_catalog.int2, pg_catalog.int2),
	FUNCTION 1 pg_catalog.hashint2(pg_catalog.int2),
	FUNCTION 2 pg_catalog.hashint2extended(pg_catalog.int2, pg_catalog.int8);
COMMENT ON OPERATOR CLASS @extschema@.fence_token_int2_ops USING hash IS 'smallint in the fence_token hash family, which must cover each of its types; smallint''s default class stays integer_ops';
ALTER OPERATOR FAMILY @extschema@.fence_token_ops USING hash ADD
	OPERATOR 1 @extschema@.#=# (pg_catalog.int8, pg_catalog.int4),
	OPERATOR 1 @extschema@.#=# (pg_catalog.int8, pg_catalog.int2),
	OPERATOR 1 @extschema@.#=# (pg_catalog.int4, pg_catalog.int8),
	OPERATOR 1 @extschema@.#=# (pg_catalog.int4, pg_catalog.int2),
	OPERATOR 1 @extschema@.#=# (pg_catalog.int2, pg_catalog.int8),
	OPERATOR 1 @extschema@.#=# (pg_catalog.int2, pg_catalog.int4);

COMMENT ON OPERATOR FAMILY @extschema@.fence_token_ops USING btree IS 'fence_token, compared with itself, bigint, integer and smallint, and those integers with each other';
COMMENT ON OPERATOR FAMILY @extschema@.fence_token_ops USING hash IS 'fence_token, equal to itself, bigint, integer and smallint, and those integers to each other';

-- lease.sql: one key's rows of fence_leases, read from the key's bucket.
CREATE FUNCTION @extschema@.fence_leases_of(lease_key pg_catalog.text,
	OUT database pg_catalog.name,
	OUT key pg_catalog.text,
	OUT token @extschema@.fence_token,
	OUT scope pg_catalog.text,
	OUT owner pg_catalog.text,
	OUT pid pg_catalog.int4,
	OUT granted_at pg_catalog.timestamptz,
	OUT expires_at pg_catalog.timestamptz,
	OUT live pg_catalog.bool,
	OUT waiters pg_catalog.int4,
	OUT permits pg_catalog.int4)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_leases_of' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
CREATE FUNCTION @extschema@.fence_leases_of(lease_key pg_catalog.int8,
	OUT database pg_catalog.name,
	OUT key pg_catalog.text,
	OUT token @extschema@.fence_token,
	OUT scope pg_catalog.text,
	OUT owner pg_catalog.text,
	OUT pid pg_catalog.int4,
	OUT granted_at pg_catalog.timestamptz,
	OUT expires_at pg_catalog.timestamptz,
	OUT live pg_catalog.bool,
	OUT waiters pg_catalog.int4,
	OUT permits pg_catalog.int4)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_leases_of_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
COMMENT ON FUNCTION @extschema@.fence_leases_of(pg_catalog.text) IS 'the rows of fence_leases for one key of this database, found without reading the whole table';
COMMENT ON FUNCTION @extschema@.fence_leases_of(pg_catalog.int8) IS 'the rows of fence_leases for one bigint key of this database, found without reading the whole table';

-- One wait on several leases: a process holding many leases needs one
-- watchdog connection for all of them.
CREATE FUNCTION @extschema@.fence_wait_leases_end(keys pg_catalog.text[], tokens @extschema@.fence_token[], timeout pg_catalog.interval DEFAULT NULL)
	RETURNS TABLE (key pg_catalog.text, token @extschema@.fence_token, status pg_catalog.text)
	AS 'MODULE_PATHNAME', 'fence_wait_leases_end' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
COMMENT ON FUNCTION @extschema@.fence_wait_leases_end(pg_catalog.text[], @extschema@.fence_token[], pg_catalog.interval) IS 'wait until any of the leases (keys[i], tokens[i]) is no longer held and return a row for each that has ended (expired, superseded or released), or no row after timeout';

-- lease.sql: one key's waiters and blockers, read from the key's bucket.
CREATE FUNCTION @extschema@.fence_lease_waiters_of(lease_key pg_catalog.text,
	OUT database pg_catalog.name,
	OUT key pg_catalog.text,
	OUT pid pg_catalog.int4,
	OUT role pg_catalog.name,
	OUT scope pg_catalog.text,
	OUT waiting_since pg_catalog.timestamptz,
	OUT queue_position pg_catalog.int4,
	OUT deadline pg_catalog.timestamptz)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_waiters_of' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
CREATE FUNCTION @extschema@.fence_lease_waiters_of(lease_key pg_catalog.int8,
	OUT database pg_catalog.name,
	OUT key pg_catalog.text,
	OUT pid pg_catalog.int4,
	OUT role pg_catalog.name,
	OUT scope pg_catalog.text,
	OUT waiting_since pg_catalog.timestamptz,
	OUT queue_position pg_catalog.int4,
	OUT deadline pg_catalog.timestamptz)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_waiters_of_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
CREATE FUNCTION @extschema@.fence_lease_blockers_of(lease_key pg_catalog.text,
	OUT blocking_pid pg_catalog.int4,
	OUT blocked_by pg_catalog.text,
	OUT owner pg_catalog.text,
	OUT queue_position pg_catalog.int4)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_blockers_of' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
CREATE FUNCTION @extschema@.fence_lease_blockers_of(lease_key pg_catalog.int8,
	OUT blocking_pid pg_catalog.int4,
	OUT blocked_by pg_catalog.text,
	OUT owner pg_catalog.text,
	OUT queue_position pg_catalog.int4)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_blockers_of_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
COMMENT ON FUNCTION @extschema@.fence_lease_waiters_of(pg_catalog.text) IS 'the rows of fence_lease_waiters for one key of this database, found without reading the whole table';
COMMENT ON FUNCTION @extschema@.fence_lease_waiters_of(pg_catalog.int8) IS 'the rows of fence_lease_waiters for one bigint key of this database, found without reading the whole table';
COMMENT ON FUNCTION @extschema@.fence_lease_blockers_of(pg_catalog.text) IS 'what a session asking for this key would wait for: its live holders and the sessions queued for it, as fence_blocking_pids shows them';
COMMENT ON FUNCTION @extschema@.fence_lease_blockers_of(pg_catalog.int8) IS 'what a session asking for this bigint key would wait for: its live holders and the sessions queued for it, as fence_blocking_pids shows them';

-- stats.sql: leases and permits held, per database, scope, kind and state, from counts
-- kept as the lease table changes (src/lease_counts.c): what monitoring
-- reads, at a cost that does not grow with the leases held.
CREATE FUNCTION @extschema@.fence_lease_counts_all(
	OUT database pg_catalog.name,
	OUT scope pg_catalog.text,
	OUT kind pg_catalog.text,
	OUT state pg_catalog.text,
	OUT held bigint)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_counts_all' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE VIEW @extschema@.fence_lease_counts AS
	SELECT * FROM @extschema@.fence_lease_counts_all();
GRANT SELECT ON @extschema@.fence_lease_counts TO PUBLIC;
COMMENT ON FUNCTION @extschema@.fence_lease_counts_all() IS 'leases and permits held per database, scope, kind and state, without reading the lease table (the fence_lease_counts view)';
COMMENT ON VIEW @extschema@.fence_lease_counts IS 'leases and permits held per database, scope (session, transaction, detached), kind (lease, permit) and state (live, expired): the counts of fence_leases'' rows, kept as leases change';

-- lease.sql: a grant on a pooled connection that the connection does not
-- keep as its token in effect.
CREATE FUNCTION @extschema@.fence_forget_token(key pg_catalog.text, token @extschema@.fence_token)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_forget_token' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_forget_token(key pg_catalog.int8, token @extschema@.fence_token)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_forget_token_int8' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.fence_forget_token(pg_catalog.text, @extschema@.fence_token) IS 'this session forgets the detached lease it took with token (its token is no longer in effect here); the lease stays held; returns token';
COMMENT ON FUNCTION @extschema@.fence_forget_token(pg_catalog.int8, @extschema@.fence_token) IS 'this session forgets the detached lease it took with token (its token is no longer in effect here); the lease stays held; returns token';
