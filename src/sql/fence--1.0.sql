-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION fence VERSION '1.0'" to load this file. \quit

-- fence_token: a non-negative 64-bit fencing token (src/token.c).
--
-- Stored and sent like int8, but only compared, never computed with: there
-- are comparison operators with itself and with int8/int4 on either side,
-- btree and hash operator classes, min/max, implicit casts from int8/int4
-- (a negative value is an error) and an explicit cast to int8; no
-- arithmetic operators, and no implicit cast to any integer type that would
-- let int8's arithmetic apply.

CREATE TYPE @extschema@.fence_token;

CREATE FUNCTION @extschema@.fence_token_in(pg_catalog.cstring) RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION @extschema@.fence_token_out(@extschema@.fence_token) RETURNS pg_catalog.cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION @extschema@.fence_token_recv(pg_catalog.internal) RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION @extschema@.fence_token_send(@extschema@.fence_token) RETURNS pg_catalog.bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Category N (numeric, not preferred), like oid: then a fence_token and an
-- integer resolve to fence_token in COALESCE, CASE, UNION and IN lists
-- instead of failing with "cannot be matched".
CREATE TYPE @extschema@.fence_token (
	INPUT = @extschema@.fence_token_in,
	OUTPUT = @extschema@.fence_token_out,
	RECEIVE = @extschema@.fence_token_recv,
	SEND = @extschema@.fence_token_send,
	INTERNALLENGTH = 8,
	PASSEDBYVALUE,
	ALIGNMENT = double,
	STORAGE = plain,
	CATEGORY = 'N'
);

-- Casts.  From int8/int4 implicit, so integer parameters and literals just
-- work where a token is expected (a negative value raises 22003).  To int8
-- explicit only: an implicit one would make "token + 1" resolve to int8
-- arithmetic.  Every token is a valid int8, so that cast needs no function.
CREATE FUNCTION @extschema@.fence_token(pg_catalog.int8) RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_token_from_int8'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION @extschema@.fence_token(pg_catalog.int4) RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_token_from_int4'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (pg_catalog.int8 AS @extschema@.fence_token)
	WITH FUNCTION @extschema@.fence_token(pg_catalog.int8) AS IMPLICIT;
CREATE CAST (pg_catalog.int4 AS @extschema@.fence_token)
	WITH FUNCTION @extschema@.fence_token(pg_catalog.int4) AS IMPLICIT;
CREATE CAST (@extschema@.fence_token AS pg_catalog.int8) WITHOUT FUNCTION;

-- Comparison operators, one set per pair of argument types.  Those with an
-- integer on one side compare the integer as it is (a negative one is less
-- than every token); they are what "fence <= $2" with an integer $2 uses.
-- The comparisons cannot fail, hence LEAKPROOF (usable under row security).
-- Only fence_token = fence_token MERGES: a merge join sorts each side with
-- the operator family's "<" for that side's type, and the family has no
-- int8 < int8 or int4 < int4 (see the btree family below).  The cross-type
-- = operators still HASHES and are indexable.

-- (fence_token, fence_token)
CREATE FUNCTION @extschema@.fence_token_eq(@extschema@.fence_token, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_ne(@extschema@.fence_token, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_lt(@extschema@.fence_token, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_le(@extschema@.fence_token, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_gt(@extschema@.fence_token, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_ge(@extschema@.fence_token, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_cmp(@extschema@.fence_token, @extschema@.fence_token) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR @extschema@.= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.fence_token_eq,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES, MERGES
);
CREATE OPERATOR @extschema@.<> (
	LEFTARG = @extschema@.fence_token, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.fence_token_ne,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = pg_catalog.neqsel, JOIN = pg_catalog.neqjoinsel
);
CREATE OPERATOR @extschema@.< (
	LEFTARG = @extschema@.fence_token, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.fence_token_lt,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
CREATE OPERATOR @extschema@.<= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.fence_token_le,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
CREATE OPERATOR @extschema@.> (
	LEFTARG = @extschema@.fence_token, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.fence_token_gt,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
CREATE OPERATOR @extschema@.>= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.fence_token_ge,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);

-- (fence_token, int8)
CREATE FUNCTION @extschema@.fence_token_int8_eq(@extschema@.fence_token, pg_catalog.int8) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int8_ne(@extschema@.fence_token, pg_catalog.int8) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int8_lt(@extschema@.fence_token, pg_catalog.int8) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int8_le(@extschema@.fence_token, pg_catalog.int8) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int8_gt(@extschema@.fence_token, pg_catalog.int8) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int8_ge(@extschema@.fence_token, pg_catalog.int8) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int8_cmp(@extschema@.fence_token, pg_catalog.int8) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR @extschema@.= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.fence_token_int8_eq,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES
);
CREATE OPERATOR @extschema@.<> (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.fence_token_int8_ne,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = pg_catalog.neqsel, JOIN = pg_catalog.neqjoinsel
);
CREATE OPERATOR @extschema@.< (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.fence_token_int8_lt,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
CREATE OPERATOR @extschema@.<= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.fence_token_int8_le,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
CREATE OPERATOR @extschema@.> (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.fence_token_int8_gt,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
CREATE OPERATOR @extschema@.>= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.fence_token_int8_ge,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);

-- (int8, fence_token)
CREATE FUNCTION @extschema@.int8_fence_token_eq(pg_catalog.int8, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_fence_token_ne(pg_catalog.int8, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_fence_token_lt(pg_catalog.int8, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_fence_token_le(pg_catalog.int8, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_fence_token_gt(pg_catalog.int8, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_fence_token_ge(pg_catalog.int8, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_fence_token_cmp(pg_catalog.int8, @extschema@.fence_token) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR @extschema@.= (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int8_fence_token_eq,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES
);
CREATE OPERATOR @extschema@.<> (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int8_fence_token_ne,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = pg_catalog.neqsel, JOIN = pg_catalog.neqjoinsel
);
CREATE OPERATOR @extschema@.< (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int8_fence_token_lt,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
CREATE OPERATOR @extschema@.<= (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int8_fence_token_le,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
CREATE OPERATOR @extschema@.> (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int8_fence_token_gt,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
CREATE OPERATOR @extschema@.>= (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int8_fence_token_ge,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);

-- (fence_token, int4)
CREATE FUNCTION @extschema@.fence_token_int4_eq(@extschema@.fence_token, pg_catalog.int4) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int4_ne(@extschema@.fence_token, pg_catalog.int4) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int4_lt(@extschema@.fence_token, pg_catalog.int4) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int4_le(@extschema@.fence_token, pg_catalog.int4) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int4_gt(@extschema@.fence_token, pg_catalog.int4) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int4_ge(@extschema@.fence_token, pg_catalog.int4) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.fence_token_int4_cmp(@extschema@.fence_token, pg_catalog.int4) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR @extschema@.= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int4,
	FUNCTION = @extschema@.fence_token_int4_eq,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES
);
CREATE OPERATOR @extschema@.<> (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int4,
	FUNCTION = @extschema@.fence_token_int4_ne,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = pg_catalog.neqsel, JOIN = pg_catalog.neqjoinsel
);
CREATE OPERATOR @extschema@.< (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int4,
	FUNCTION = @extschema@.fence_token_int4_lt,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
CREATE OPERATOR @extschema@.<= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int4,
	FUNCTION = @extschema@.fence_token_int4_le,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
CREATE OPERATOR @extschema@.> (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int4,
	FUNCTION = @extschema@.fence_token_int4_gt,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
CREATE OPERATOR @extschema@.>= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int4,
	FUNCTION = @extschema@.fence_token_int4_ge,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);

-- (int4, fence_token)
CREATE FUNCTION @extschema@.int4_fence_token_eq(pg_catalog.int4, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int4_fence_token_ne(pg_catalog.int4, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int4_fence_token_lt(pg_catalog.int4, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int4_fence_token_le(pg_catalog.int4, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int4_fence_token_gt(pg_catalog.int4, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int4_fence_token_ge(pg_catalog.int4, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int4_fence_token_cmp(pg_catalog.int4, @extschema@.fence_token) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR @extschema@.= (
	LEFTARG = pg_catalog.int4, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int4_fence_token_eq,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES
);
CREATE OPERATOR @extschema@.<> (
	LEFTARG = pg_catalog.int4, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int4_fence_token_ne,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = pg_catalog.neqsel, JOIN = pg_catalog.neqjoinsel
);
CREATE OPERATOR @extschema@.< (
	LEFTARG = pg_catalog.int4, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int4_fence_token_lt,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
CREATE OPERATOR @extschema@.<= (
	LEFTARG = pg_catalog.int4, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int4_fence_token_le,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
CREATE OPERATOR @extschema@.> (
	LEFTARG = pg_catalog.int4, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int4_fence_token_gt,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
CREATE OPERATOR @extschema@.>= (
	LEFTARG = pg_catalog.int4, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int4_fence_token_ge,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);

-- btree: one operator family with the cross-type members, so an index on a
-- fence_token column serves "fence <= $2" for an int8 or int4 $2.  It holds
-- no operators between two integers: those belong to the built-in
-- integer_ops, and putting them in a second btree family would change how
-- the planner treats every integer sort.  It does hold int8's and int4's
-- comparison functions, which an index scan needs to sort the elements of
-- "fence = ANY ($1::int8[])".
CREATE FUNCTION @extschema@.fence_token_sortsupport(pg_catalog.internal) RETURNS pg_catalog.void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR CLASS @extschema@.fence_token_ops
	DEFAULT FOR TYPE @extschema@.fence_token USING btree AS
	OPERATOR 1 @extschema@.<,
	OPERATOR 2 @extschema@.<=,
	OPERATOR 3 @extschema@.=,
	OPERATOR 4 @extschema@.>=,
	OPERATOR 5 @extschema@.>,
	FUNCTION 1 @extschema@.fence_token_cmp(@extschema@.fence_token, @extschema@.fence_token),
	FUNCTION 2 @extschema@.fence_token_sortsupport(pg_catalog.internal),
	FUNCTION 4 pg_catalog.btequalimage(pg_catalog.oid);

ALTER OPERATOR FAMILY @extschema@.fence_token_ops USING btree ADD
	OPERATOR 1 @extschema@.< (@extschema@.fence_token, pg_catalog.int8),
	OPERATOR 2 @extschema@.<= (@extschema@.fence_token, pg_catalog.int8),
	OPERATOR 3 @extschema@.= (@extschema@.fence_token, pg_catalog.int8),
	OPERATOR 4 @extschema@.>= (@extschema@.fence_token, pg_catalog.int8),
	OPERATOR 5 @extschema@.> (@extschema@.fence_token, pg_catalog.int8),
	FUNCTION 1 @extschema@.fence_token_int8_cmp(@extschema@.fence_token, pg_catalog.int8),
	OPERATOR 1 @extschema@.< (pg_catalog.int8, @extschema@.fence_token),
	OPERATOR 2 @extschema@.<= (pg_catalog.int8, @extschema@.fence_token),
	OPERATOR 3 @extschema@.= (pg_catalog.int8, @extschema@.fence_token),
	OPERATOR 4 @extschema@.>= (pg_catalog.int8, @extschema@.fence_token),
	OPERATOR 5 @extschema@.> (pg_catalog.int8, @extschema@.fence_token),
	FUNCTION 1 @extschema@.int8_fence_token_cmp(pg_catalog.int8, @extschema@.fence_token),
	OPERATOR 1 @extschema@.< (@extschema@.fence_token, pg_catalog.int4),
	OPERATOR 2 @extschema@.<= (@extschema@.fence_token, pg_catalog.int4),
	OPERATOR 3 @extschema@.= (@extschema@.fence_token, pg_catalog.int4),
	OPERATOR 4 @extschema@.>= (@extschema@.fence_token, pg_catalog.int4),
	OPERATOR 5 @extschema@.> (@extschema@.fence_token, pg_catalog.int4),
	FUNCTION 1 @extschema@.fence_token_int4_cmp(@extschema@.fence_token, pg_catalog.int4),
	OPERATOR 1 @extschema@.< (pg_catalog.int4, @extschema@.fence_token),
	OPERATOR 2 @extschema@.<= (pg_catalog.int4, @extschema@.fence_token),
	OPERATOR 3 @extschema@.= (pg_catalog.int4, @extschema@.fence_token),
	OPERATOR 4 @extschema@.>= (pg_catalog.int4, @extschema@.fence_token),
	OPERATOR 5 @extschema@.> (pg_catalog.int4, @extschema@.fence_token),
	FUNCTION 1 @extschema@.int4_fence_token_cmp(pg_catalog.int4, @extschema@.fence_token),
	FUNCTION 1 pg_catalog.btint8cmp(pg_catalog.int8, pg_catalog.int8),
	FUNCTION 1 pg_catalog.btint4cmp(pg_catalog.int4, pg_catalog.int4);

-- hash: a token hashes exactly as the equal int8 does (src/token.c), and
-- int8's hash agrees with int4's for equal values, so the cross-type =
-- operators belong here too, with int8's and int4's own hash functions as
-- the support functions for those types (hash joins and hash index scans
-- with an integer on the other side).
CREATE FUNCTION @extschema@.fence_token_hash(@extschema@.fence_token) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION @extschema@.fence_token_hash_extended(@extschema@.fence_token, pg_catalog.int8)
	RETURNS pg_catalog.int8
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR CLASS @extschema@.fence_token_ops
	DEFAULT FOR TYPE @extschema@.fence_token USING hash AS
	OPERATOR 1 @extschema@.=,
	FUNCTION 1 @extschema@.fence_token_hash(@extschema@.fence_token),
	FUNCTION 2 @extschema@.fence_token_hash_extended(@extschema@.fence_token, pg_catalog.int8);

ALTER OPERATOR FAMILY @extschema@.fence_token_ops USING hash ADD
	OPERATOR 1 @extschema@.= (@extschema@.fence_token, pg_catalog.int8),
	OPERATOR 1 @extschema@.= (pg_catalog.int8, @extschema@.fence_token),
	OPERATOR 1 @extschema@.= (@extschema@.fence_token, pg_catalog.int4),
	OPERATOR 1 @extschema@.= (pg_catalog.int4, @extschema@.fence_token),
	FUNCTION 1 pg_catalog.hashint8(pg_catalog.int8),
	FUNCTION 2 pg_catalog.hashint8extended(pg_catalog.int8, pg_catalog.int8),
	FUNCTION 1 pg_catalog.hashint4(pg_catalog.int4),
	FUNCTION 2 pg_catalog.hashint4extended(pg_catalog.int4, pg_catalog.int8);

-- min() and max().
CREATE FUNCTION @extschema@.fence_token_smaller(@extschema@.fence_token, @extschema@.fence_token)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION @extschema@.fence_token_larger(@extschema@.fence_token, @extschema@.fence_token)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE @extschema@.min(@extschema@.fence_token) (
	SFUNC = @extschema@.fence_token_smaller,
	STYPE = @extschema@.fence_token,
	COMBINEFUNC = @extschema@.fence_token_smaller,
	SORTOP = OPERATOR(@extschema@.<),
	PARALLEL = SAFE
);
CREATE AGGREGATE @extschema@.max(@extschema@.fence_token) (
	SFUNC = @extschema@.fence_token_larger,
	STYPE = @extschema@.fence_token,
	COMBINEFUNC = @extschema@.fence_token_larger,
	SORTOP = OPERATOR(@extschema@.>),
	PARALLEL = SAFE
);

-- The durable token counter of this database (src/counter.c).  It is a
-- sequence marked as extension configuration, so pg_dump and pg_upgrade
-- carry its value.  Only fence's C code advances it; nobody else may use it.
-- Its value is the end of the last block of tokens reserved: each nextval
-- reserves the next INCREMENT tokens, handed out from shared memory.
CREATE SEQUENCE @extschema@.fence_token_counter AS bigint
	INCREMENT BY 1024 MINVALUE 0 START WITH 1024 NO CYCLE;
SELECT pg_catalog.pg_extension_config_dump('@extschema@.fence_token_counter', '');
REVOKE ALL ON SEQUENCE @extschema@.fence_token_counter FROM PUBLIC;

CREATE FUNCTION @extschema@.fence_advance_tokens(at_least bigint)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_advance_tokens(bigint) FROM PUBLIC;

-- The lease clock (src/clock.c; SQL face in src/lease_sql.c).  fence_now()
-- is what every lease decision reads: real time, or the virtual test clock.
CREATE FUNCTION @extschema@.fence_now()
	RETURNS pg_catalog.timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Test servers only (fence.test_clock = on), superusers only.  NULL puts the
-- clock back on real time.
CREATE FUNCTION @extschema@.fence_set_clock(pg_catalog.timestamptz)
	RETURNS pg_catalog.timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_set_clock(pg_catalog.timestamptz) FROM PUBLIC;

CREATE FUNCTION @extschema@.fence_advance_clock(pg_catalog.interval)
	RETURNS pg_catalog.timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_advance_clock(pg_catalog.interval) FROM PUBLIC;

-- Leases (src/lease_sql.c).  None of these functions is STRICT: a NULL key,
-- TTL or token is an error, never a quiet NULL.  Every function that takes
-- a key comes twice: with a text key, and with a bigint key, which names the
-- same lease as its decimal text.

-- Take the lease now, or NULL if another live holder has it.  With owner, a
-- detached lease (not tied to this connection).
CREATE FUNCTION @extschema@.fence_try_lease(key pg_catalog.text, ttl pg_catalog.interval, owner pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_try_lease' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_try_lease(key pg_catalog.int8, ttl pg_catalog.interval, owner pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_try_lease_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- The same, ending with the transaction (or the savepoint it was taken in).
CREATE FUNCTION @extschema@.fence_try_xact_lease(key pg_catalog.text, ttl pg_catalog.interval)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_try_xact_lease' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_try_xact_lease(key pg_catalog.int8, ttl pg_catalog.interval)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_try_xact_lease_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Wait until granted (first come, first served); timeout or lock_timeout
-- passing raises SQLSTATE 55P03.
CREATE FUNCTION @extschema@.fence_lease(key pg_catalog.text, ttl pg_catalog.interval, timeout pg_catalog.interval DEFAULT NULL, owner pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_lease' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_lease(key pg_catalog.int8, ttl pg_catalog.interval, timeout pg_catalog.interval DEFAULT NULL, owner pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_lease_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION @extschema@.fence_xact_lease(key pg_catalog.text, ttl pg_catalog.interval, timeout pg_catalog.interval DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_xact_lease' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_xact_lease(key pg_catalog.int8, ttl pg_catalog.interval, timeout pg_catalog.interval DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_xact_lease_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Compare-and-delete: frees the lease only if token is its current token.
CREATE FUNCTION @extschema@.fence_release(key pg_catalog.text, token @extschema@.fence_token)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'fence_release' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_release(key pg_catalog.int8, token @extschema@.fence_token)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'fence_release_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- expires_at := now + ttl, only if token is current and live.
CREATE FUNCTION @extschema@.fence_renew(key pg_catalog.text, token @extschema@.fence_token, ttl pg_catalog.interval)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'fence_renew' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_renew(key pg_catalog.int8, token @extschema@.fence_token, ttl pg_catalog.interval)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'fence_renew_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- held, expired, superseded or released.
CREATE FUNCTION @extschema@.fence_lease_status(key pg_catalog.text, token @extschema@.fence_token)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_lease_status' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_lease_status(key pg_catalog.int8, token @extschema@.fence_token)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_lease_status_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- SQLSTATE LF002 unless held: the check right before an external side effect.
CREATE FUNCTION @extschema@.fence_assert_current(key pg_catalog.text, token @extschema@.fence_token)
	RETURNS pg_catalog.void
	AS 'MODULE_PATHNAME', 'fence_assert_current' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_assert_current(key pg_catalog.int8, token @extschema@.fence_token)
	RETURNS pg_catalog.void
	AS 'MODULE_PATHNAME', 'fence_assert_current_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Admin: frees the lease whoever holds it; returns the token it ended.
CREATE FUNCTION @extschema@.fence_break(key pg_catalog.text)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_break' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_break(pg_catalog.text) FROM PUBLIC;
CREATE FUNCTION @extschema@.fence_break(key pg_catalog.int8)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_break_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_break(pg_catalog.int8) FROM PUBLIC;

-- The token in effect (what the fence_enforce trigger uses) and how to set it
-- for the rest of the transaction, e.g. behind a transaction pooler.
-- With a lease key: the token for a trigger that names that lease.
CREATE FUNCTION @extschema@.fence_current_token(lease pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_current_token' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_current_token(lease pg_catalog.int8)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_current_token_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_use_token(token @extschema@.fence_token, key pg_catalog.text DEFAULT NULL)
	RETURNS pg_catalog.void
	AS 'MODULE_PATHNAME', 'fence_use_token' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_use_token(token @extschema@.fence_token, key pg_catalog.int8)
	RETURNS pg_catalog.void
	AS 'MODULE_PATHNAME', 'fence_use_token_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Every held lease (live or expired) of the server.  The key and owner of a
-- lease taken by another role show as NULL unless you are a superuser, a
-- member of pg_read_all_stats, or a member of that role.
CREATE FUNCTION @extschema@.fence_leases_all(
	OUT database pg_catalog.name,
	OUT key pg_catalog.text,
	OUT token @extschema@.fence_token,
	OUT scope pg_catalog.text,
	OUT owner pg_catalog.text,
	OUT pid pg_catalog.int4,
	OUT granted_at pg_catalog.timestamptz,
	OUT expires_at pg_catalog.timestamptz,
	OUT live pg_catalog.bool,
	OUT waiters pg_catalog.int4)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_leases_all' LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW @extschema@.fence_leases AS
	SELECT * FROM @extschema@.fence_leases_all();
GRANT SELECT ON @extschema@.fence_leases TO PUBLIC;

-- Per-database statistics since server start (src/stats.c).
CREATE FUNCTION @extschema@.fence_stats_all(
	OUT database pg_catalog.name,
	OUT grants bigint,
	OUT refusals bigint,
	OUT takeovers bigint,
	OUT releases bigint,
	OUT refused_releases bigint,
	OUT renewals bigint,
	OUT failed_renewals bigint,
	OUT writes_accepted bigint,
	OUT writes_rejected bigint,
	OUT writes_skipped bigint,
	OUT commits_aborted bigint)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_stats' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE VIEW @extschema@.fence_stats AS
	SELECT * FROM @extschema@.fence_stats_all();
GRANT SELECT ON @extschema@.fence_stats TO PUBLIC;
-- The fence_enforce() trigger and the functions that install it (src/enforce.c).

-- BEFORE INSERT OR UPDATE OR DELETE ... FOR EACH ROW EXECUTE FUNCTION
-- fence_enforce('fence' [, 'on_stale=error|skip'] [, 'lease=NAME']
-- [, 'strict'] [, 'require_token']).
CREATE FUNCTION @extschema@.fence_enforce() RETURNS pg_catalog.trigger
	AS 'MODULE_PATHNAME' LANGUAGE C;

-- Creates (or replaces) the trigger "zz_fence_enforce" on tbl, after checking
-- the column and the options; returns the trigger's name.
CREATE FUNCTION @extschema@.fence_protect(
	tbl pg_catalog.regclass,
	column_name pg_catalog.name DEFAULT 'fence',
	on_stale pg_catalog.text DEFAULT 'error',
	lease pg_catalog.text DEFAULT NULL,
	strict pg_catalog.bool DEFAULT false,
	require_token pg_catalog.bool DEFAULT false)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Drops the trigger fence_protect() made; false if there was none.
CREATE FUNCTION @extschema@.fence_unprotect(tbl pg_catalog.regclass)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;
