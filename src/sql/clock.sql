
-- The lease clock (src/clock.c; SQL face in src/lease_sql.c).  fence_now()
-- is what every lease decision reads: real time, or the virtual test clock.
CREATE FUNCTION @extschema@.fence_now()
	RETURNS pg_catalog.timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Test servers only (fence.test_clock = on), superusers only.  NULL puts the
-- clock back on real time.
CREATE FUNCTION @extschema@.fence_set_clock(pg_catalog.timestamptz)
	RETURNS pg_catalog.timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_set_clock(pg_catalog.timestamptz) FROM PUBLIC;

CREATE FUNCTION @extschema@.fence_advance_clock(pg_catalog.interval)
	RETURNS pg_catalog.timestamptz
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION @extschema@.fence_advance_clock(pg_catalog.interval) FROM PUBLIC;
