-- fence 1.0 to 1.1.  Every change since 1.0, in the order the fresh 1.1
-- install script (the pieces under src/sql/) makes it; the extension-update
-- test (test/t/012_extension_update.pl) proves that the two give identical
-- objects.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fence UPDATE TO '1.1'" to load this file. \quit

-- Leases: an administrator's way to free what dropped databases left.
CREATE FUNCTION @extschema@.fence_break_dropped_databases()
	RETURNS pg_catalog.int8
	AS 'MODULE_PATHNAME', 'fence_break_dropped_databases' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_break_dropped_databases() FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.fence_break_dropped_databases() IS
	'Frees the leases and per-database slots of dropped databases; returns how many leases it ended';
