
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

-- Forget a detached lease this session took, leaving it held: for a grant
-- on a pooled connection that must not keep the token in effect there.
CREATE FUNCTION @extschema@.fence_forget_token(key pg_catalog.text, token @extschema@.fence_token)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_forget_token' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
CREATE FUNCTION @extschema@.fence_forget_token(key pg_catalog.int8, token @extschema@.fence_token)
	RETURNS @extschema@.fence_token
	AS 'MODULE_PATHNAME', 'fence_forget_token_int8' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

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
-- The same for several leases at once: one watchdog connection for all of a
-- process's leases (a bigint key is its decimal text here).
CREATE FUNCTION @extschema@.fence_wait_leases_end(keys pg_catalog.text[], tokens @extschema@.fence_token[], timeout pg_catalog.interval DEFAULT NULL)
	RETURNS TABLE (key pg_catalog.text, token @extschema@.fence_token, status pg_catalog.text)
	AS 'MODULE_PATHNAME', 'fence_wait_leases_end' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;

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

-- One key's rows of fence_leases (the view reads every partition of the
-- lease table; this reads the key's bucket).  Not fence_lease: it takes
-- nothing.
CREATE FUNCTION @extschema@.fence_leases_of(lease_key pg_catalog.text,
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
	AS 'MODULE_PATHNAME', 'fence_leases_of' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
CREATE FUNCTION @extschema@.fence_leases_of(lease_key pg_catalog.int8,
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
	AS 'MODULE_PATHNAME', 'fence_leases_of_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;

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

-- One key's rows of fence_lease_waiters, and what a session asking for the
-- key would wait for (fence_blocking_pids' rows for a key), read from the
-- key's bucket.  Neither takes anything.
CREATE FUNCTION @extschema@.fence_lease_waiters_of(lease_key pg_catalog.text,
	OUT database pg_catalog.name,
	OUT key pg_catalog.text,
	OUT pid pg_catalog.int4,
	OUT role pg_catalog.name,
	OUT scope pg_catalog.text,
	OUT waiting_since pg_catalog.timestamptz,
	OUT queue_position pg_catalog.int4,
	OUT deadline pg_catalog.timestamptz)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_waiters_of' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
CREATE FUNCTION @extschema@.fence_lease_waiters_of(lease_key pg_catalog.int8,
	OUT database pg_catalog.name,
	OUT key pg_catalog.text,
	OUT pid pg_catalog.int4,
	OUT role pg_catalog.name,
	OUT scope pg_catalog.text,
	OUT waiting_since pg_catalog.timestamptz,
	OUT queue_position pg_catalog.int4,
	OUT deadline pg_catalog.timestamptz)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_waiters_of_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
CREATE FUNCTION @extschema@.fence_lease_blockers_of(lease_key pg_catalog.text,
	OUT blocking_pid pg_catalog.int4,
	OUT blocked_by pg_catalog.text,
	OUT owner pg_catalog.text,
	OUT queue_position pg_catalog.int4)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_blockers_of' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
CREATE FUNCTION @extschema@.fence_lease_blockers_of(lease_key pg_catalog.int8,
	OUT blocking_pid pg_catalog.int4,
	OUT blocked_by pg_catalog.text,
	OUT owner pg_catalog.text,
	OUT queue_position pg_catalog.int4)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_blockers_of_int8' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 1;
