-- fence 1.2 as shipped: the install script make joined from the pieces in
-- src/sql/ for 1.2.  Never edit it; a change goes into the pieces and the
-- newest update script (see the Makefile).

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION fence VERSION '1.2'" to load this file. \quit

-- fence_token: a non-negative 64-bit fencing token (src/token.c).
--
-- Stored and sent like int8, but only compared, never computed with: there
-- are comparison operators with itself and with int8/int4/int2 on either
-- side, btree and hash operator classes, min/max, implicit casts from
-- int8/int4/int2
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

-- smallint.  Some drivers (psycopg 3) send an integer below 32768 as a
-- smallint, so a fence_token must take one wherever it takes an int4: an
-- implicit cast for assignments and function arguments, and comparison
-- operators with int2 on either side, without which "fence <= $1" with a
-- smallint $1 finds the int4 and the int8 operators equally good and fails.
CREATE FUNCTION @extschema@.fence_token(pg_catalog.int2) RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_token_from_int2'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION @extschema@.fence_token(pg_catalog.int2) IS 'convert smallint to fence_token; a negative value is an error';
CREATE CAST (pg_catalog.int2 AS @extschema@.fence_token)
	WITH FUNCTION @extschema@.fence_token(pg_catalog.int2) AS IMPLICIT;
COMMENT ON CAST (pg_catalog.int2 AS @extschema@.fence_token) IS 'implicit: an integer parameter or literal is accepted where a token is expected';

-- (fence_token, int2)
CREATE FUNCTION @extschema@.fence_token_int2_eq(@extschema@.fence_token, pg_catalog.int2) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.fence_token_int2_eq(@extschema@.fence_token, pg_catalog.int2) IS 'implementation of = operator';
CREATE FUNCTION @extschema@.fence_token_int2_ne(@extschema@.fence_token, pg_catalog.int2) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.fence_token_int2_ne(@extschema@.fence_token, pg_catalog.int2) IS 'implementation of <> operator';
CREATE FUNCTION @extschema@.fence_token_int2_lt(@extschema@.fence_token, pg_catalog.int2) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.fence_token_int2_lt(@extschema@.fence_token, pg_catalog.int2) IS 'implementation of < operator';
CREATE FUNCTION @extschema@.fence_token_int2_le(@extschema@.fence_token, pg_catalog.int2) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.fence_token_int2_le(@extschema@.fence_token, pg_catalog.int2) IS 'implementation of <= operator';
CREATE FUNCTION @extschema@.fence_token_int2_gt(@extschema@.fence_token, pg_catalog.int2) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.fence_token_int2_gt(@extschema@.fence_token, pg_catalog.int2) IS 'implementation of > operator';
CREATE FUNCTION @extschema@.fence_token_int2_ge(@extschema@.fence_token, pg_catalog.int2) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.fence_token_int2_ge(@extschema@.fence_token, pg_catalog.int2) IS 'implementation of >= operator';
CREATE FUNCTION @extschema@.fence_token_int2_cmp(@extschema@.fence_token, pg_catalog.int2) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.fence_token_int2_cmp(@extschema@.fence_token, pg_catalog.int2) IS 'less-equal-greater';

CREATE OPERATOR @extschema@.= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int2,
	FUNCTION = @extschema@.fence_token_int2_eq,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES
);
COMMENT ON OPERATOR @extschema@.= (@extschema@.fence_token, pg_catalog.int2) IS 'equal';
CREATE OPERATOR @extschema@.<> (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int2,
	FUNCTION = @extschema@.fence_token_int2_ne,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = pg_catalog.neqsel, JOIN = pg_catalog.neqjoinsel
);
COMMENT ON OPERATOR @extschema@.<> (@extschema@.fence_token, pg_catalog.int2) IS 'not equal';
CREATE OPERATOR @extschema@.< (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int2,
	FUNCTION = @extschema@.fence_token_int2_lt,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.< (@extschema@.fence_token, pg_catalog.int2) IS 'less than';
CREATE OPERATOR @extschema@.<= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int2,
	FUNCTION = @extschema@.fence_token_int2_le,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.<= (@extschema@.fence_token, pg_catalog.int2) IS 'less than or equal';
CREATE OPERATOR @extschema@.> (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int2,
	FUNCTION = @extschema@.fence_token_int2_gt,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.> (@extschema@.fence_token, pg_catalog.int2) IS 'greater than';
CREATE OPERATOR @extschema@.>= (
	LEFTARG = @extschema@.fence_token, RIGHTARG = pg_catalog.int2,
	FUNCTION = @extschema@.fence_token_int2_ge,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.>= (@extschema@.fence_token, pg_catalog.int2) IS 'greater than or equal';

-- (int2, fence_token)
CREATE FUNCTION @extschema@.int2_fence_token_eq(pg_catalog.int2, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.int2_fence_token_eq(pg_catalog.int2, @extschema@.fence_token) IS 'implementation of = operator';
CREATE FUNCTION @extschema@.int2_fence_token_ne(pg_catalog.int2, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.int2_fence_token_ne(pg_catalog.int2, @extschema@.fence_token) IS 'implementation of <> operator';
CREATE FUNCTION @extschema@.int2_fence_token_lt(pg_catalog.int2, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.int2_fence_token_lt(pg_catalog.int2, @extschema@.fence_token) IS 'implementation of < operator';
CREATE FUNCTION @extschema@.int2_fence_token_le(pg_catalog.int2, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.int2_fence_token_le(pg_catalog.int2, @extschema@.fence_token) IS 'implementation of <= operator';
CREATE FUNCTION @extschema@.int2_fence_token_gt(pg_catalog.int2, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.int2_fence_token_gt(pg_catalog.int2, @extschema@.fence_token) IS 'implementation of > operator';
CREATE FUNCTION @extschema@.int2_fence_token_ge(pg_catalog.int2, @extschema@.fence_token) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.int2_fence_token_ge(pg_catalog.int2, @extschema@.fence_token) IS 'implementation of >= operator';
CREATE FUNCTION @extschema@.int2_fence_token_cmp(pg_catalog.int2, @extschema@.fence_token) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION @extschema@.int2_fence_token_cmp(pg_catalog.int2, @extschema@.fence_token) IS 'less-equal-greater';

CREATE OPERATOR @extschema@.= (
	LEFTARG = pg_catalog.int2, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int2_fence_token_eq,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel,
	HASHES
);
COMMENT ON OPERATOR @extschema@.= (pg_catalog.int2, @extschema@.fence_token) IS 'equal';
CREATE OPERATOR @extschema@.<> (
	LEFTARG = pg_catalog.int2, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int2_fence_token_ne,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = pg_catalog.neqsel, JOIN = pg_catalog.neqjoinsel
);
COMMENT ON OPERATOR @extschema@.<> (pg_catalog.int2, @extschema@.fence_token) IS 'not equal';
CREATE OPERATOR @extschema@.< (
	LEFTARG = pg_catalog.int2, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int2_fence_token_lt,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
COMMENT ON OPERATOR @extschema@.< (pg_catalog.int2, @extschema@.fence_token) IS 'less than';
CREATE OPERATOR @extschema@.<= (
	LEFTARG = pg_catalog.int2, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int2_fence_token_le,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
COMMENT ON OPERATOR @extschema@.<= (pg_catalog.int2, @extschema@.fence_token) IS 'less than or equal';
CREATE OPERATOR @extschema@.> (
	LEFTARG = pg_catalog.int2, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int2_fence_token_gt,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
COMMENT ON OPERATOR @extschema@.> (pg_catalog.int2, @extschema@.fence_token) IS 'greater than';
CREATE OPERATOR @extschema@.>= (
	LEFTARG = pg_catalog.int2, RIGHTARG = @extschema@.fence_token,
	FUNCTION = @extschema@.int2_fence_token_ge,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);
COMMENT ON OPERATOR @extschema@.>= (pg_catalog.int2, @extschema@.fence_token) IS 'greater than or equal';

-- The smallint members of the btree and hash families, as for int8/int4
-- (int2's hash agrees with int8's for equal values).
ALTER OPERATOR FAMILY @extschema@.fence_token_ops USING btree ADD
	OPERATOR 1 @extschema@.< (@extschema@.fence_token, pg_catalog.int2),
	OPERATOR 2 @extschema@.<= (@extschema@.fence_token, pg_catalog.int2),
	OPERATOR 3 @extschema@.= (@extschema@.fence_token, pg_catalog.int2),
	OPERATOR 4 @extschema@.>= (@extschema@.fence_token, pg_catalog.int2),
	OPERATOR 5 @extschema@.> (@extschema@.fence_token, pg_catalog.int2),
	FUNCTION 1 @extschema@.fence_token_int2_cmp(@extschema@.fence_token, pg_catalog.int2),
	OPERATOR 1 @extschema@.< (pg_catalog.int2, @extschema@.fence_token),
	OPERATOR 2 @extschema@.<= (pg_catalog.int2, @extschema@.fence_token),
	OPERATOR 3 @extschema@.= (pg_catalog.int2, @extschema@.fence_token),
	OPERATOR 4 @extschema@.>= (pg_catalog.int2, @extschema@.fence_token),
	OPERATOR 5 @extschema@.> (pg_catalog.int2, @extschema@.fence_token),
	FUNCTION 1 @extschema@.int2_fence_token_cmp(pg_catalog.int2, @extschema@.fence_token),
	FUNCTION 1 pg_catalog.btint2cmp(pg_catalog.int2, pg_catalog.int2);

ALTER OPERATOR FAMILY @extschema@.fence_token_ops USING hash ADD
	OPERATOR 1 @extschema@.= (@extschema@.fence_token, pg_catalog.int2),
	OPERATOR 1 @extschema@.= (pg_catalog.int2, @extschema@.fence_token),
	FUNCTION 1 pg_catalog.hashint2(pg_catalog.int2),
	FUNCTION 2 pg_catalog.hashint2extended(pg_catalog.int2, pg_catalog.int8);

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

-- Wait until the lease with this token is no longer held: a holder's watchdog.
CREATE FUNCTION @extschema@.fence_wait_lease_end(key pg_catalog.text, token @extschema@.fence_token, timeout pg_catalog.interval DEFAULT NULL)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_wait_lease_end' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_wait_lease_end(key pg_catalog.int8, token @extschema@.fence_token, timeout pg_catalog.interval DEFAULT NULL)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_wait_lease_end_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;

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

-- Admin: frees the leases, breakers and per-database slots of every dropped
-- database, which fence_break cannot reach; returns how many leases it ended.
CREATE FUNCTION @extschema@.fence_break_dropped_databases()
	RETURNS pg_catalog.int8
	AS 'MODULE_PATHNAME', 'fence_break_dropped_databases' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_break_dropped_databases() FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.fence_break_dropped_databases() IS
	'Frees the leases, circuit breakers and per-database slots of dropped databases; returns how many leases it ended';

-- Leases with permits (bulkheads): at most "permits" live holders of a key at
-- once, each with a token of its own, released, renewed and checked by that
-- token with the functions above.
CREATE FUNCTION @extschema@.fence_try_permit(key pg_catalog.text, permits pg_catalog.int4, ttl pg_catalog.interval, owner pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_try_permit' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_try_permit(key pg_catalog.int8, permits pg_catalog.int4, ttl pg_catalog.interval, owner pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_try_permit_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_try_xact_permit(key pg_catalog.text, permits pg_catalog.int4, ttl pg_catalog.interval)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_try_xact_permit' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_try_xact_permit(key pg_catalog.int8, permits pg_catalog.int4, ttl pg_catalog.interval)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_try_xact_permit_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_permit(key pg_catalog.text, permits pg_catalog.int4, ttl pg_catalog.interval, timeout pg_catalog.interval DEFAULT NULL, owner pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_permit' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_permit(key pg_catalog.int8, permits pg_catalog.int4, ttl pg_catalog.interval, timeout pg_catalog.interval DEFAULT NULL, owner pg_catalog.text DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_permit_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_xact_permit(key pg_catalog.text, permits pg_catalog.int4, ttl pg_catalog.interval, timeout pg_catalog.interval DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_xact_permit' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_xact_permit(key pg_catalog.int8, permits pg_catalog.int4, ttl pg_catalog.interval, timeout pg_catalog.interval DEFAULT NULL)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_xact_permit_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fence_try_permit(pg_catalog.text, pg_catalog.int4, pg_catalog.interval, pg_catalog.text)
	IS 'take one of the lease''s permits now and return its token, or NULL if all are held; with owner, a detached permit';
COMMENT ON FUNCTION @extschema@.fence_try_permit(pg_catalog.int8, pg_catalog.int4, pg_catalog.interval, pg_catalog.text)
	IS 'take one of the lease''s permits now and return its token, or NULL if all are held; with owner, a detached permit';
COMMENT ON FUNCTION @extschema@.fence_try_xact_permit(pg_catalog.text, pg_catalog.int4, pg_catalog.interval)
	IS 'take one of the lease''s permits until the end of the transaction, or NULL if all are held';
COMMENT ON FUNCTION @extschema@.fence_try_xact_permit(pg_catalog.int8, pg_catalog.int4, pg_catalog.interval)
	IS 'take one of the lease''s permits until the end of the transaction, or NULL if all are held';
COMMENT ON FUNCTION @extschema@.fence_permit(pg_catalog.text, pg_catalog.int4, pg_catalog.interval, pg_catalog.interval, pg_catalog.text)
	IS 'wait for one of the lease''s permits (first come, first served) and return its token';
COMMENT ON FUNCTION @extschema@.fence_permit(pg_catalog.int8, pg_catalog.int4, pg_catalog.interval, pg_catalog.interval, pg_catalog.text)
	IS 'wait for one of the lease''s permits (first come, first served) and return its token';
COMMENT ON FUNCTION @extschema@.fence_xact_permit(pg_catalog.text, pg_catalog.int4, pg_catalog.interval, pg_catalog.interval)
	IS 'wait for one of the lease''s permits, until the end of the transaction';
COMMENT ON FUNCTION @extschema@.fence_xact_permit(pg_catalog.int8, pg_catalog.int4, pg_catalog.interval, pg_catalog.interval)
	IS 'wait for one of the lease''s permits, until the end of the transaction';

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

-- Every held lease (live or expired) of the server, and every permit of a
-- lease with permits (permits: how many the key has; NULL for a lease
-- without).  The key, owner and token of a lease taken by another role
-- show as NULL unless you are a superuser, a member of pg_read_all_stats,
-- or a member of that role.
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
	OUT waiters pg_catalog.int4,
	OUT permits pg_catalog.int4)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_leases_all' LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE VIEW @extschema@.fence_leases AS
	SELECT * FROM @extschema@.fence_leases_all();
GRANT SELECT ON @extschema@.fence_leases TO PUBLIC;

-- Sessions waiting for leases, one row each, in queue order per key; the
-- key of another role's wait is hidden as in fence_leases.
CREATE FUNCTION @extschema@.fence_lease_waiters_all(
	OUT database pg_catalog.name,
	OUT key pg_catalog.text,
	OUT pid pg_catalog.int4,
	OUT role pg_catalog.name,
	OUT scope pg_catalog.text,
	OUT waiting_since pg_catalog.timestamptz,
	OUT queue_position pg_catalog.int4,
	OUT deadline pg_catalog.timestamptz)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_waiters_all' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fence_lease_waiters_all() IS
	'Sessions waiting for leases (the rows of the fence_lease_waiters view)';

CREATE VIEW @extschema@.fence_lease_waiters AS
	SELECT * FROM @extschema@.fence_lease_waiters_all();
GRANT SELECT ON @extschema@.fence_lease_waiters TO PUBLIC;
COMMENT ON VIEW @extschema@.fence_lease_waiters IS
	'Sessions waiting for leases: key, pid, role, scope, since when, place in the queue, deadline';

-- What a waiting session waits for: the live holder (a pid, or NULL and the
-- owner for a detached holder) and the sessions queued ahead of it.
CREATE FUNCTION @extschema@.fence_blocking_pids(pid pg_catalog.int4,
	OUT blocking_pid pg_catalog.int4,
	OUT blocked_by pg_catalog.text,
	OUT owner pg_catalog.text,
	OUT queue_position pg_catalog.int4)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_blocking_pids' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fence_blocking_pids(pg_catalog.int4) IS
	'The holder and the sessions queued ahead of a session waiting for a lease';

-- Per-database statistics since server start (src/dbstate.c).
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
	OUT commits_aborted bigint,
	OUT rejected_stale bigint,
	OUT rejected_not_held bigint,
	OUT rejected_no_token bigint)
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
-- A comment on every object of the extension (what \dx+, \df+, \dT+ and
-- \do+ show), in the order of the pieces before this one.  The regression
-- test "extension" lists any object left without one.

-- token.sql
COMMENT ON TYPE @extschema@.fence_token IS 'fencing token: a whole number from 0 to 2^63-1, compared but never computed with';
COMMENT ON FUNCTION @extschema@.fence_token_in(pg_catalog.cstring) IS 'I/O';
COMMENT ON FUNCTION @extschema@.fence_token_out(@extschema@.fence_token) IS 'I/O';
COMMENT ON FUNCTION @extschema@.fence_token_recv(pg_catalog.internal) IS 'I/O';
COMMENT ON FUNCTION @extschema@.fence_token_send(@extschema@.fence_token) IS 'I/O';
COMMENT ON FUNCTION @extschema@.fence_token(pg_catalog.int8) IS 'convert bigint to fence_token; a negative value is an error';
COMMENT ON FUNCTION @extschema@.fence_token(pg_catalog.int4) IS 'convert integer to fence_token; a negative value is an error';
COMMENT ON CAST (pg_catalog.int8 AS @extschema@.fence_token) IS 'implicit: an integer parameter or literal is accepted where a token is expected';
COMMENT ON CAST (pg_catalog.int4 AS @extschema@.fence_token) IS 'implicit: an integer parameter or literal is accepted where a token is expected';
COMMENT ON CAST (@extschema@.fence_token AS pg_catalog.int8) IS 'explicit only, so that no integer arithmetic applies to a token';

-- (fence_token, fence_token)
COMMENT ON FUNCTION @extschema@.fence_token_eq(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.fence_token_ne(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.fence_token_lt(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of < operator';
COMMENT ON FUNCTION @extschema@.fence_token_le(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of <= operator';
COMMENT ON FUNCTION @extschema@.fence_token_gt(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of > operator';
COMMENT ON FUNCTION @extschema@.fence_token_ge(@extschema@.fence_token, @extschema@.fence_token) IS 'implementation of >= operator';
COMMENT ON FUNCTION @extschema@.fence_token_cmp(@extschema@.fence_token, @extschema@.fence_token) IS 'less-equal-greater';
COMMENT ON OPERATOR @extschema@.= (@extschema@.fence_token, @extschema@.fence_token) IS 'equal';
COMMENT ON OPERATOR @extschema@.<> (@extschema@.fence_token, @extschema@.fence_token) IS 'not equal';
COMMENT ON OPERATOR @extschema@.< (@extschema@.fence_token, @extschema@.fence_token) IS 'less than';
COMMENT ON OPERATOR @extschema@.<= (@extschema@.fence_token, @extschema@.fence_token) IS 'less than or equal';
COMMENT ON OPERATOR @extschema@.> (@extschema@.fence_token, @extschema@.fence_token) IS 'greater than';
COMMENT ON OPERATOR @extschema@.>= (@extschema@.fence_token, @extschema@.fence_token) IS 'greater than or equal';

-- (fence_token, bigint)
COMMENT ON FUNCTION @extschema@.fence_token_int8_eq(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_ne(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_lt(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of < operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_le(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of <= operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_gt(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of > operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_ge(@extschema@.fence_token, pg_catalog.int8) IS 'implementation of >= operator';
COMMENT ON FUNCTION @extschema@.fence_token_int8_cmp(@extschema@.fence_token, pg_catalog.int8) IS 'less-equal-greater';
COMMENT ON OPERATOR @extschema@.= (@extschema@.fence_token, pg_catalog.int8) IS 'equal';
COMMENT ON OPERATOR @extschema@.<> (@extschema@.fence_token, pg_catalog.int8) IS 'not equal';
COMMENT ON OPERATOR @extschema@.< (@extschema@.fence_token, pg_catalog.int8) IS 'less than';
COMMENT ON OPERATOR @extschema@.<= (@extschema@.fence_token, pg_catalog.int8) IS 'less than or equal';
COMMENT ON OPERATOR @extschema@.> (@extschema@.fence_token, pg_catalog.int8) IS 'greater than';
COMMENT ON OPERATOR @extschema@.>= (@extschema@.fence_token, pg_catalog.int8) IS 'greater than or equal';

-- (bigint, fence_token)
COMMENT ON FUNCTION @extschema@.int8_fence_token_eq(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_ne(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_lt(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of < operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_le(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of <= operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_gt(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of > operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_ge(pg_catalog.int8, @extschema@.fence_token) IS 'implementation of >= operator';
COMMENT ON FUNCTION @extschema@.int8_fence_token_cmp(pg_catalog.int8, @extschema@.fence_token) IS 'less-equal-greater';
COMMENT ON OPERATOR @extschema@.= (pg_catalog.int8, @extschema@.fence_token) IS 'equal';
COMMENT ON OPERATOR @extschema@.<> (pg_catalog.int8, @extschema@.fence_token) IS 'not equal';
COMMENT ON OPERATOR @extschema@.< (pg_catalog.int8, @extschema@.fence_token) IS 'less than';
COMMENT ON OPERATOR @extschema@.<= (pg_catalog.int8, @extschema@.fence_token) IS 'less than or equal';
COMMENT ON OPERATOR @extschema@.> (pg_catalog.int8, @extschema@.fence_token) IS 'greater than';
COMMENT ON OPERATOR @extschema@.>= (pg_catalog.int8, @extschema@.fence_token) IS 'greater than or equal';

-- (fence_token, integer)
COMMENT ON FUNCTION @extschema@.fence_token_int4_eq(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_ne(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_lt(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of < operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_le(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of <= operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_gt(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of > operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_ge(@extschema@.fence_token, pg_catalog.int4) IS 'implementation of >= operator';
COMMENT ON FUNCTION @extschema@.fence_token_int4_cmp(@extschema@.fence_token, pg_catalog.int4) IS 'less-equal-greater';
COMMENT ON OPERATOR @extschema@.= (@extschema@.fence_token, pg_catalog.int4) IS 'equal';
COMMENT ON OPERATOR @extschema@.<> (@extschema@.fence_token, pg_catalog.int4) IS 'not equal';
COMMENT ON OPERATOR @extschema@.< (@extschema@.fence_token, pg_catalog.int4) IS 'less than';
COMMENT ON OPERATOR @extschema@.<= (@extschema@.fence_token, pg_catalog.int4) IS 'less than or equal';
COMMENT ON OPERATOR @extschema@.> (@extschema@.fence_token, pg_catalog.int4) IS 'greater than';
COMMENT ON OPERATOR @extschema@.>= (@extschema@.fence_token, pg_catalog.int4) IS 'greater than or equal';

-- (integer, fence_token)
COMMENT ON FUNCTION @extschema@.int4_fence_token_eq(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of = operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_ne(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of <> operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_lt(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of < operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_le(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of <= operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_gt(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of > operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_ge(pg_catalog.int4, @extschema@.fence_token) IS 'implementation of >= operator';
COMMENT ON FUNCTION @extschema@.int4_fence_token_cmp(pg_catalog.int4, @extschema@.fence_token) IS 'less-equal-greater';
COMMENT ON OPERATOR @extschema@.= (pg_catalog.int4, @extschema@.fence_token) IS 'equal';
COMMENT ON OPERATOR @extschema@.<> (pg_catalog.int4, @extschema@.fence_token) IS 'not equal';
COMMENT ON OPERATOR @extschema@.< (pg_catalog.int4, @extschema@.fence_token) IS 'less than';
COMMENT ON OPERATOR @extschema@.<= (pg_catalog.int4, @extschema@.fence_token) IS 'less than or equal';
COMMENT ON OPERATOR @extschema@.> (pg_catalog.int4, @extschema@.fence_token) IS 'greater than';
COMMENT ON OPERATOR @extschema@.>= (pg_catalog.int4, @extschema@.fence_token) IS 'greater than or equal';

COMMENT ON FUNCTION @extschema@.fence_token_sortsupport(pg_catalog.internal) IS 'sort support';
COMMENT ON OPERATOR FAMILY @extschema@.fence_token_ops USING btree IS 'fence_token, compared with itself, bigint and integer';
COMMENT ON OPERATOR CLASS @extschema@.fence_token_ops USING btree IS 'default btree operator class for fence_token';
COMMENT ON FUNCTION @extschema@.fence_token_hash(@extschema@.fence_token) IS 'hash, the same as bigint''s for the equal value';
COMMENT ON FUNCTION @extschema@.fence_token_hash_extended(@extschema@.fence_token, pg_catalog.int8) IS 'hash, the same as bigint''s for the equal value';
COMMENT ON OPERATOR FAMILY @extschema@.fence_token_ops USING hash IS 'fence_token, equal to itself, bigint and integer';
COMMENT ON OPERATOR CLASS @extschema@.fence_token_ops USING hash IS 'default hash operator class for fence_token';
COMMENT ON FUNCTION @extschema@.fence_token_smaller(@extschema@.fence_token, @extschema@.fence_token) IS 'smaller of two';
COMMENT ON FUNCTION @extschema@.fence_token_larger(@extschema@.fence_token, @extschema@.fence_token) IS 'larger of two';
COMMENT ON AGGREGATE @extschema@.min(@extschema@.fence_token) IS 'minimum value of all fence_token input values';
COMMENT ON AGGREGATE @extschema@.max(@extschema@.fence_token) IS 'maximum value of all fence_token input values';

-- counter.sql
COMMENT ON SEQUENCE @extschema@.fence_token_counter IS 'the durable token counter of this database: the last token reserved; only fence advances it';
COMMENT ON FUNCTION @extschema@.fence_advance_tokens(bigint) IS 'admin: move the token counter so that every later token is above at_least; returns the last token handed out';

-- clock.sql
COMMENT ON FUNCTION @extschema@.fence_now() IS 'the lease clock: real time, or the virtual test clock when it is set';
COMMENT ON FUNCTION @extschema@.fence_set_clock(pg_catalog.timestamptz) IS 'test servers only: set the virtual lease clock; NULL returns to real time';
COMMENT ON FUNCTION @extschema@.fence_advance_clock(pg_catalog.interval) IS 'test servers only: move the virtual lease clock forward';

-- lease.sql
COMMENT ON FUNCTION @extschema@.fence_try_lease(pg_catalog.text, pg_catalog.interval, pg_catalog.text) IS 'take a lease now and return its token, or NULL if another live holder has it; with owner, a detached lease';
COMMENT ON FUNCTION @extschema@.fence_try_xact_lease(pg_catalog.text, pg_catalog.interval) IS 'take a lease until the end of the transaction, or NULL if another live holder has it';
COMMENT ON FUNCTION @extschema@.fence_lease(pg_catalog.text, pg_catalog.interval, pg_catalog.interval, pg_catalog.text) IS 'wait until the lease is granted (first come, first served) and return its token';
COMMENT ON FUNCTION @extschema@.fence_xact_lease(pg_catalog.text, pg_catalog.interval, pg_catalog.interval) IS 'wait until the lease is granted, until the end of the transaction';
COMMENT ON FUNCTION @extschema@.fence_release(pg_catalog.text, @extschema@.fence_token) IS 'free the lease if token is its current token';
COMMENT ON FUNCTION @extschema@.fence_renew(pg_catalog.text, @extschema@.fence_token, pg_catalog.interval) IS 'extend the lease to now + ttl if token is its current live token';
COMMENT ON FUNCTION @extschema@.fence_lease_status(pg_catalog.text, @extschema@.fence_token) IS 'held, expired, superseded or released';
COMMENT ON FUNCTION @extschema@.fence_wait_lease_end(pg_catalog.text, @extschema@.fence_token, pg_catalog.interval) IS 'wait until the lease with this token is no longer held and return its status then (expired, superseded or released), or NULL after timeout';
COMMENT ON FUNCTION @extschema@.fence_assert_current(pg_catalog.text, @extschema@.fence_token) IS 'raise SQLSTATE LF002 unless token is the lease''s current live token';
COMMENT ON FUNCTION @extschema@.fence_break(pg_catalog.text) IS 'admin: free the lease whoever holds it; returns the token it ended';
COMMENT ON FUNCTION @extschema@.fence_try_lease(pg_catalog.int8, pg_catalog.interval, pg_catalog.text) IS 'take a lease now and return its token, or NULL if another live holder has it; with owner, a detached lease';
COMMENT ON FUNCTION @extschema@.fence_try_xact_lease(pg_catalog.int8, pg_catalog.interval) IS 'take a lease until the end of the transaction, or NULL if another live holder has it';
COMMENT ON FUNCTION @extschema@.fence_lease(pg_catalog.int8, pg_catalog.interval, pg_catalog.interval, pg_catalog.text) IS 'wait until the lease is granted (first come, first served) and return its token';
COMMENT ON FUNCTION @extschema@.fence_xact_lease(pg_catalog.int8, pg_catalog.interval, pg_catalog.interval) IS 'wait until the lease is granted, until the end of the transaction';
COMMENT ON FUNCTION @extschema@.fence_release(pg_catalog.int8, @extschema@.fence_token) IS 'free the lease if token is its current token';
COMMENT ON FUNCTION @extschema@.fence_renew(pg_catalog.int8, @extschema@.fence_token, pg_catalog.interval) IS 'extend the lease to now + ttl if token is its current live token';
COMMENT ON FUNCTION @extschema@.fence_lease_status(pg_catalog.int8, @extschema@.fence_token) IS 'held, expired, superseded or released';
COMMENT ON FUNCTION @extschema@.fence_wait_lease_end(pg_catalog.int8, @extschema@.fence_token, pg_catalog.interval) IS 'wait until the lease with this token is no longer held and return its status then (expired, superseded or released), or NULL after timeout';
COMMENT ON FUNCTION @extschema@.fence_assert_current(pg_catalog.int8, @extschema@.fence_token) IS 'raise SQLSTATE LF002 unless token is the lease''s current live token';
COMMENT ON FUNCTION @extschema@.fence_break(pg_catalog.int8) IS 'admin: free the lease whoever holds it; returns the token it ended';
COMMENT ON FUNCTION @extschema@.fence_current_token(pg_catalog.text) IS 'the token in effect in this transaction; with a lease key, for a trigger that names that lease';
COMMENT ON FUNCTION @extschema@.fence_current_token(pg_catalog.int8) IS 'the token in effect in this transaction for a trigger that names this lease';
COMMENT ON FUNCTION @extschema@.fence_use_token(@extschema@.fence_token, pg_catalog.text) IS 'set the token in effect for the rest of the transaction; with a lease key, for that lease only';
COMMENT ON FUNCTION @extschema@.fence_use_token(@extschema@.fence_token, pg_catalog.int8) IS 'set the token in effect for the rest of the transaction, for this lease only';
COMMENT ON FUNCTION @extschema@.fence_leases_all() IS 'every held lease and permit of the server, live or expired (the fence_leases view)';
COMMENT ON VIEW @extschema@.fence_leases IS 'every held lease and permit of the server, live or expired; the key and owner of another role''s lease are hidden';

-- stats.sql
COMMENT ON FUNCTION @extschema@.fence_stats_all() IS 'per-database lease and trigger counts since server start (the fence_stats view)';
COMMENT ON VIEW @extschema@.fence_stats IS 'per-database lease and trigger counts since server start';

-- enforce.sql
COMMENT ON FUNCTION @extschema@.fence_enforce() IS 'trigger: reject a write whose fencing token is below the row''s fence';
COMMENT ON FUNCTION @extschema@.fence_protect(pg_catalog.regclass, pg_catalog.name, pg_catalog.text, pg_catalog.text, pg_catalog.bool, pg_catalog.bool) IS 'create or replace the fence_enforce trigger on a table; returns its name';
COMMENT ON FUNCTION @extschema@.fence_unprotect(pg_catalog.regclass) IS 'drop the trigger fence_protect made; false if there was none';

-- Circuit breakers (src/breaker.c): one state per database and name, shared
-- by every session of the server, kept in shared memory only (a restart
-- forgets them: they come back closed).  The half-open probe is a detached
-- lease on the key 'breaker:<name>'.

-- Ask before calling the dependency: one row, 'call', 'probe' (with the
-- probe's token, to pass to fence_breaker_report) or 'fail_fast' (with
-- retry_at).
-- The settings given here are the breaker's from this call on; max_open_for
-- NULL is 10 minutes, or open_for if that is longer.
CREATE FUNCTION @extschema@.fence_breaker_allow(
	breaker pg_catalog.text,
	failure_threshold pg_catalog.int4 DEFAULT 5,
	failure_rate pg_catalog.float8 DEFAULT 0.5,
	window_size pg_catalog.int4 DEFAULT 20,
	open_for pg_catalog.interval DEFAULT '30 seconds',
	max_open_for pg_catalog.interval DEFAULT NULL,
	probe_ttl pg_catalog.interval DEFAULT '30 seconds')
	RETURNS TABLE (decision pg_catalog.text, probe_token @extschema@.fence_token, retry_at pg_catalog.timestamptz)
	AS 'MODULE_PATHNAME', 'fence_breaker_allow' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fence_breaker_allow(pg_catalog.text, pg_catalog.int4, pg_catalog.float8, pg_catalog.int4, pg_catalog.interval, pg_catalog.interval, pg_catalog.interval)
	IS 'ask a shared circuit breaker whether to call its dependency: call, probe (with a probe token) or fail_fast (with the time to retry)';

-- Tell the breaker how the call went, and how long it took; returns its
-- state afterwards.  A probe passes its probe token; a report with a stale
-- probe token is ignored.
CREATE FUNCTION @extschema@.fence_breaker_report(breaker pg_catalog.text, success pg_catalog.bool, probe_token @extschema@.fence_token DEFAULT NULL, duration pg_catalog.interval DEFAULT NULL)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_breaker_report' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fence_breaker_report(pg_catalog.text, pg_catalog.bool, @extschema@.fence_token, pg_catalog.interval)
	IS 'report the outcome of a call allowed by a shared circuit breaker, and how long it took; returns the breaker''s state';


-- Define a breaker once, or change its definition: from then on its
-- settings are these, and the settings fence_breaker_allow() callers pass
-- are ignored.  Its owner (who defined it first), members of manager_role
-- and superusers may define, force, clear and reset it; with caller_role,
-- only members of that role (and those) may ask it and report to it.
-- Returns the breaker's state.
CREATE FUNCTION @extschema@.fence_breaker_define(
	breaker pg_catalog.text,
	failure_threshold pg_catalog.int4 DEFAULT 5,
	failure_rate pg_catalog.float8 DEFAULT 0.5,
	window_size pg_catalog.int4 DEFAULT 20,
	open_for pg_catalog.interval DEFAULT '30 seconds',
	max_open_for pg_catalog.interval DEFAULT NULL,
	probe_ttl pg_catalog.interval DEFAULT '30 seconds',
	min_calls pg_catalog.int4 DEFAULT NULL,
	slow_call pg_catalog.interval DEFAULT NULL,
	slow_call_rate pg_catalog.float8 DEFAULT NULL,
	half_open_trials pg_catalog.int4 DEFAULT 1,
	manager_role pg_catalog.regrole DEFAULT NULL,
	caller_role pg_catalog.regrole DEFAULT NULL)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_breaker_define' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_breaker_define(pg_catalog.text, pg_catalog.int4, pg_catalog.float8, pg_catalog.int4, pg_catalog.interval, pg_catalog.interval, pg_catalog.interval, pg_catalog.int4, pg_catalog.interval, pg_catalog.float8, pg_catalog.int4, pg_catalog.regrole, pg_catalog.regrole) FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.fence_breaker_define(pg_catalog.text, pg_catalog.int4, pg_catalog.float8, pg_catalog.int4, pg_catalog.interval, pg_catalog.interval, pg_catalog.interval, pg_catalog.int4, pg_catalog.interval, pg_catalog.float8, pg_catalog.int4, pg_catalog.regrole, pg_catalog.regrole)
	IS 'define a shared circuit breaker''s settings once, for every caller; returns its state';

-- Admin: force a breaker open (every caller fails fast) or disabled (every
-- caller calls, nothing trips it), until fence_breaker_unforce() clears it
-- (closed again).  Both return the breaker's state.
CREATE FUNCTION @extschema@.fence_breaker_force(breaker pg_catalog.text, mode pg_catalog.text)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_breaker_force' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_breaker_force(pg_catalog.text, pg_catalog.text) FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.fence_breaker_force(pg_catalog.text, pg_catalog.text)
	IS 'force a shared circuit breaker open (every caller fails fast) or disabled (every caller calls) until cleared; returns its state';

CREATE FUNCTION @extschema@.fence_breaker_unforce(breaker pg_catalog.text)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_breaker_unforce' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_breaker_unforce(pg_catalog.text) FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.fence_breaker_unforce(pg_catalog.text)
	IS 'clear a shared circuit breaker''s forced state: it is closed again; returns its state';

-- Admin: forget a breaker (closed again) and free its probe lease.
CREATE FUNCTION @extschema@.fence_breaker_reset(breaker pg_catalog.text)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'fence_breaker_reset' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_breaker_reset(pg_catalog.text) FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.fence_breaker_reset(pg_catalog.text)
	IS 'forget a shared circuit breaker (it reads as closed again) and free its probe lease';

-- Every breaker of the server.  The name and probe token of a breaker
-- created by another role show as NULL unless you are a superuser, a member of
-- pg_read_all_stats, or a member of that role.
CREATE FUNCTION @extschema@.fence_breakers_all(
	OUT database pg_catalog.name,
	OUT breaker pg_catalog.text,
	OUT state pg_catalog.text,
	OUT consecutive_failures pg_catalog.int4,
	OUT window_calls pg_catalog.int4,
	OUT window_failures pg_catalog.int4,
	OUT failure_threshold pg_catalog.int4,
	OUT failure_rate pg_catalog.float8,
	OUT window_size pg_catalog.int4,
	OUT opened_at pg_catalog.timestamptz,
	OUT open_until pg_catalog.timestamptz,
	OUT open_for pg_catalog.interval,
	OUT probe_token @extschema@.fence_token,
	OUT probe_expires_at pg_catalog.timestamptz,
	OUT changed_at pg_catalog.timestamptz,
	OUT trips pg_catalog.int8,
	OUT fast_failures pg_catalog.int8,
	OUT successes pg_catalog.int8,
	OUT failures pg_catalog.int8,
	OUT defined pg_catalog.bool,
	OUT manager_role pg_catalog.name,
	OUT caller_role pg_catalog.name,
	OUT min_calls pg_catalog.int4,
	OUT slow_call pg_catalog.interval,
	OUT slow_call_rate pg_catalog.float8,
	OUT window_slow_calls pg_catalog.int4,
	OUT slow_calls pg_catalog.int8,
	OUT half_open_trials pg_catalog.int4,
	OUT trials_running pg_catalog.int4,
	OUT trials_succeeded pg_catalog.int4,
	OUT state_changes pg_catalog.int8)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_breakers_all' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fence_breakers_all()
	IS 'every shared circuit breaker of the server; the fence_breakers view';

CREATE VIEW @extschema@.fence_breakers AS
	SELECT * FROM @extschema@.fence_breakers_all();
GRANT SELECT ON @extschema@.fence_breakers TO PUBLIC;
COMMENT ON VIEW @extschema@.fence_breakers
	IS 'every shared circuit breaker of the server: state, counts and times';
