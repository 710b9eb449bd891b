-- fence 1.1 to 1.2: every change since 1.1, one block per concern.  The
-- extension-update test (test/t/012_extension_update.pl) proves that an
-- installation updated with it has exactly the objects a fresh 1.2 install
-- has.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION fence UPDATE TO '1.2'" to load this file. \quit

-- lease.sql: a holder's watchdog, which waits until the lease with its
-- token is no longer held.
CREATE FUNCTION @extschema@.fence_wait_lease_end(key pg_catalog.text, token @extschema@.fence_token, timeout pg_catalog.interval DEFAULT NULL)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_wait_lease_end' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_wait_lease_end(key pg_catalog.int8, token @extschema@.fence_token, timeout pg_catalog.interval DEFAULT NULL)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_wait_lease_end_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fence_wait_lease_end(pg_catalog.text, @extschema@.fence_token, pg_catalog.interval) IS 'wait until the lease with this token is no longer held and return its status then (expired, superseded or released), or NULL after timeout';
COMMENT ON FUNCTION @extschema@.fence_wait_lease_end(pg_catalog.int8, @extschema@.fence_token, pg_catalog.interval) IS 'wait until the lease with this token is no longer held and return its status then (expired, superseded or released), or NULL after timeout';
