
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
