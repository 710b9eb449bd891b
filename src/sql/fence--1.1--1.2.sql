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

-- breaker.sql: the breaker functions new in 1.2 (doc/breakers.md).  The
-- fence_breakers view and its function have new columns, and changed
-- functions new arguments: they are dropped and made again.
DROP VIEW @extschema@.fence_breakers;
DROP FUNCTION @extschema@.fence_breakers_all();
DROP FUNCTION @extschema@.fence_breaker_report(pg_catalog.text, pg_catalog.bool, @extschema@.fence_token);
CREATE FUNCTION @extschema@.fence_breaker_report(breaker pg_catalog.text, success pg_catalog.bool, probe_token @extschema@.fence_token DEFAULT NULL, duration pg_catalog.interval DEFAULT NULL)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_breaker_report' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fence_breaker_report(pg_catalog.text, pg_catalog.bool, @extschema@.fence_token, pg_catalog.interval)
	IS 'report the outcome of a call allowed by a shared circuit breaker, and how long it took; returns the breaker''s state';

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

-- stats.sql: fence_stats counts rejected writes by SQLSTATE too (LF001,
-- LF002, LF003), in three new columns at the end; view and function are
-- created again with them.
DROP VIEW @extschema@.fence_stats;
DROP FUNCTION @extschema@.fence_stats_all();
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
COMMENT ON FUNCTION @extschema@.fence_stats_all() IS 'per-database lease and trigger counts since server start (the fence_stats view)';
COMMENT ON VIEW @extschema@.fence_stats IS 'per-database lease and trigger counts since server start';
