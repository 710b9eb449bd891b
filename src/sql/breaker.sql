
-- Circuit breakers (src/breaker.c): one state per database and name, shared
-- by every session of the server, kept in shared memory only (a restart
-- forgets them: they come back closed).  The half-open probe is a detached
-- lease on the key 'breaker:<name>'.

-- Ask before calling the dependency: one row, 'call', 'probe' (with the
-- probe's token, to pass to fence_breaker_report) or 'fail_fast' (with
-- retry_at).
-- The settings given here are the breaker's from this call on; max_open_for
-- NULL is 10 minutes, or open_for if that is longer.
CREATE FUNCTION @extschema@.fence_breaker_allow(
	breaker pg_catalog.text,
	failure_threshold pg_catalog.int4 DEFAULT 5,
	failure_rate pg_catalog.float8 DEFAULT 0.5,
	window_size pg_catalog.int4 DEFAULT 20,
	open_for pg_catalog.interval DEFAULT '30 seconds',
	max_open_for pg_catalog.interval DEFAULT NULL,
	probe_ttl pg_catalog.interval DEFAULT '30 seconds')
	RETURNS TABLE (decision pg_catalog.text, probe_token @extschema@.fence_token, retry_at pg_catalog.timestamptz)
	AS 'MODULE_PATHNAME', 'fence_breaker_allow' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fence_breaker_allow(pg_catalog.text, pg_catalog.int4, pg_catalog.float8, pg_catalog.int4, pg_catalog.interval, pg_catalog.interval, pg_catalog.interval)
	IS 'ask a shared circuit breaker whether to call its dependency: call, probe (with a probe token) or fail_fast (with the time to retry)';

-- Tell the breaker how the call went, and how long it took; returns its
-- state afterwards.  A probe passes its probe token; a report with a stale
-- probe token is ignored.
CREATE FUNCTION @extschema@.fence_breaker_report(breaker pg_catalog.text, success pg_catalog.bool, probe_token @extschema@.fence_token DEFAULT NULL, duration pg_catalog.interval DEFAULT NULL)
	RETURNS pg_catalog.text
	AS 'MODULE_PATHNAME', 'fence_breaker_report' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION @extschema@.fence_breaker_report(pg_catalog.text, pg_catalog.bool, @extschema@.fence_token, pg_catalog.interval)
	IS 'report the outcome of a call allowed by a shared circuit breaker, and how long it took; returns the breaker''s state';


-- Define a breaker once, or change its definition: from then on its
-- settings are these, and the settings fence_breaker_allow() callers pass
-- are ignored.  Its owner (who defined it first), members of manager_role
-- and superusers may define, force, clear and reset it; with caller_role,
-- only members of that role (and those) may ask it and report to it.
-- Returns the breaker's state.
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

-- Admin: force a breaker open (every caller fails fast) or disabled (every
-- caller calls, nothing trips it), until fence_breaker_unforce() clears it
-- (closed again).  Both return the breaker's state.
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

-- Admin: forget a breaker (closed again) and free its probe lease.
CREATE FUNCTION @extschema@.fence_breaker_reset(breaker pg_catalog.text)
	RETURNS pg_catalog.bool
	AS 'MODULE_PATHNAME', 'fence_breaker_reset' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_breaker_reset(pg_catalog.text) FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.fence_breaker_reset(pg_catalog.text)
	IS 'forget a shared circuit breaker (it reads as closed again) and free its probe lease';

-- Every breaker of the server.  The name and probe token of a breaker
-- created by another role show as NULL unless you are a superuser, a member of
-- pg_read_all_stats, or a member of that role.
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
