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
