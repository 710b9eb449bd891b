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
