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

-- Lease-wait diagnostics: who waits for which lease, and behind whom.
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
