-- fence_token: a non-negative 64-bit fencing token (src/token.c).
--
-- Stored and sent like int8, but only compared, never computed with: there
-- are comparison operators with itself and with int8/int4/int2 on either
-- side, btree and hash operator families holding them all, min/max,
-- implicit casts from int8/int4/int2
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
-- arithmetic.  Every token is a valid int8, so that cast needs no function
-- (binary coercible); the way back must check for a negative value, so it
-- is a function.  PostgreSQL's opr_sanity lists such one-way binary casts
-- as "legal, but usually not intended": this one is intended.
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
-- Every = MERGES and HASHES: each is the equality of the btree and the hash
-- family below, which hold the integers' own comparisons too, so a merge
-- join can sort each side with the family's "<" for that side's type.

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
	HASHES, MERGES
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
	HASHES, MERGES
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
	HASHES, MERGES
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
	HASHES, MERGES
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
-- fence_token column serves "fence <= $2" for an int8 or int4 $2 (and for
-- an integer literal, which resolves to the cross-type operator), and
-- "fence = ANY ($1::int8[])", whose elements the index scan sorts with the
-- family's int8 comparison function.  The family also holds every
-- comparison among the integer types (at the end of this file), as
-- PostgreSQL's own cross-type families do.
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
	FUNCTION 1 @extschema@.int4_fence_token_cmp(pg_catalog.int4, @extschema@.fence_token);

-- hash: a token hashes exactly as the equal int8 does (src/token.c), and
-- int8's hash agrees with int4's for equal values, so the cross-type =
-- operators belong here too, with int8's and int4's own hash functions as
-- the support functions for those types (hash joins and hash index scans
-- with an integer on the other side; the integer operator classes at the
-- end of this file hold them).
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
	OPERATOR 1 @extschema@.= (pg_catalog.int4, @extschema@.fence_token);

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
	HASHES, MERGES
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
	HASHES, MERGES
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
	FUNCTION 1 @extschema@.int2_fence_token_cmp(pg_catalog.int2, @extschema@.fence_token);

ALTER OPERATOR FAMILY @extschema@.fence_token_ops USING hash ADD
	OPERATOR 1 @extschema@.= (@extschema@.fence_token, pg_catalog.int2),
	OPERATOR 1 @extschema@.= (pg_catalog.int2, @extschema@.fence_token);

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
