
-- Per-database statistics since server start (src/dbstate.c).
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

-- Leases and permits held, per database, scope, kind and state, from counts
-- kept as the lease table changes (src/lease_counts.c): what monitoring
-- reads, at a cost that does not grow with the leases held.
CREATE FUNCTION @extschema@.fence_lease_counts_all(
	OUT database pg_catalog.name,
	OUT scope pg_catalog.text,
	OUT kind pg_catalog.text,
	OUT state pg_catalog.text,
	OUT held bigint)
	RETURNS SETOF pg_catalog.record
	AS 'MODULE_PATHNAME', 'fence_lease_counts_all' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE VIEW @extschema@.fence_lease_counts AS
	SELECT * FROM @extschema@.fence_lease_counts_all();
GRANT SELECT ON @extschema@.fence_lease_counts TO PUBLIC;
