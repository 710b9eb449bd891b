-- fence_token: a non-negative 64-bit fencing token (src/token.c).

CREATE TYPE @extschema@.fence_token;

CREATE FUNCTION @extschema@.fence_token_in(cstring) RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION @extschema@.fence_token_out(@extschema@.fence_token) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE @extschema@.fence_token (
	INPUT = @extschema@.fence_token_in,
	OUTPUT = @extschema@.fence_token_out,
	INTERNALLENGTH = 8,
	PASSEDBYVALUE,
	ALIGNMENT = double
);
