-- fence_lease_counts: the leases and permits held per database, scope, kind
-- and state, kept as the lease table changes.  "expired" is what
-- fence_leases says: held, past its expiry on the lease clock, not yet
-- released, taken over or reclaimed.  Other tests may leave leases behind,
-- so this one shows the change from where it started, in this database.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;
SET TimeZone = 'UTC';
SELECT fence_set_clock('2026-12-01 09:00:00+00') IS NOT NULL AS clock_set;

CREATE TABLE counts_base AS
	SELECT scope, kind, state, held FROM fence_lease_counts
	 WHERE database = current_database();
-- The change since the start, only where there is one.
CREATE VIEW counts_now AS
	SELECT c.scope, c.kind, c.state, c.held - coalesce(b.held, 0) AS held
	  FROM fence_lease_counts c
	  LEFT JOIN counts_base b USING (scope, kind, state)
	 WHERE c.database = current_database() AND c.held <> coalesce(b.held, 0)
	 ORDER BY 1, 2, 3;
-- The counts agree with a count of fence_leases' rows grouped the same way,
-- in every database: no row here.
CREATE VIEW counts_wrong AS
	SELECT c.database, c.scope, c.kind, c.state, c.held,
	       coalesce(v.n, 0) AS view_rows
	  FROM fence_lease_counts c
	  FULL JOIN (SELECT database, scope,
	                    CASE WHEN permits IS NULL THEN 'lease' ELSE 'permit' END AS kind,
	                    CASE WHEN live THEN 'live' ELSE 'expired' END AS state,
	                    count(*) AS n
	               FROM fence_leases GROUP BY 1, 2, 3, 4) v
	    ON v.database IS NOT DISTINCT FROM c.database AND v.scope = c.scope
	       AND v.kind = c.kind AND v.state = c.state
	 WHERE c.held IS DISTINCT FROM coalesce(v.n, 0);

-- Grant: a session lease, two detached leases, two of three permits.
SELECT fence_try_lease('counts:s', '1 min') AS ts \gset
SELECT fence_try_lease('counts:d1', '1 min', 'w1') AS td1 \gset
SELECT fence_try_lease('counts:d2', '5 min', 'w2') AS td2 \gset
SELECT fence_try_permit('counts:p', 3, '1 min', 'p1') AS tp1 \gset
SELECT fence_try_permit('counts:p', 3, '10 min', 'p2') AS tp2 \gset
SELECT * FROM counts_now;
SELECT * FROM counts_wrong;
-- Every combination is a row, 0 where nothing is held.
SELECT count(*) AS rows_here, count(*) FILTER (WHERE held = 0) > 0 AS zeros
  FROM fence_lease_counts WHERE database = current_database();

-- Expiry: the clock alone moves leases from live to expired.
SELECT fence_advance_clock('2 min') IS NOT NULL AS advanced;
SELECT * FROM counts_now;
SELECT * FROM counts_wrong;
-- And back, should the clock move back.
SELECT fence_set_clock(fence_now() - interval '90 s') IS NOT NULL AS moved_back;
SELECT * FROM counts_now;
SELECT fence_advance_clock('90 s') IS NOT NULL AS advanced;

-- Renew: a live lease's expiry moves (it stays live past its old expiry).
SELECT fence_renew('counts:d2', :'td2', '10 min') AS renewed;
SELECT fence_advance_clock('4 min') IS NOT NULL AS advanced;
SELECT * FROM counts_now;

-- Takeover of an expired detached lease by the same role: still one lease,
-- live again.
SELECT fence_try_lease('counts:d1', '1 min', 'w1b') > :'td1' AS taken_over;
SELECT * FROM counts_now;
SELECT * FROM counts_wrong;

-- Takeover by another role, of an expired permit and an expired lease.
CREATE ROLE regress_counts_other;
SELECT fence_advance_clock('2 min') IS NOT NULL AS advanced;
SELECT * FROM counts_now;
SET ROLE regress_counts_other;
SELECT fence_try_lease('counts:d1', '1 min', 'other') IS NOT NULL AS other_took_lease;
SELECT fence_try_permit('counts:p', 3, '1 min', 'other') IS NOT NULL AS other_took_permit;
RESET ROLE;
SELECT * FROM counts_now;
SELECT * FROM counts_wrong;

-- Release: the session lease and a permit.
SELECT fence_release('counts:s', :'ts') AS released,
       fence_release('counts:p', :'tp2') AS released_permit;
SELECT * FROM counts_now;

-- A transaction lease and a transaction permit, until the transaction ends.
BEGIN;
SELECT fence_try_xact_lease('counts:x', '1 min') IS NOT NULL AS xact_lease;
SELECT fence_try_xact_permit('counts:xp', 2, '1 min') IS NOT NULL AS xact_permit;
SELECT * FROM counts_now;
COMMIT;
SELECT * FROM counts_now;
BEGIN;
SELECT fence_try_xact_lease('counts:x', '1 min') IS NOT NULL AS xact_lease;
ROLLBACK;
SELECT count(*) AS xact_left FROM counts_now WHERE scope = 'transaction';

-- fence_break ends every permit of a key.
SELECT fence_break('counts:p') IS NOT NULL AS broken;
SELECT * FROM counts_now;

-- A session's end releases its session leases and permits (its detached
-- ones stay).  Reconnect and wait for the old backend to be gone.
SELECT fence_try_lease('counts:s2', '1 min') IS NOT NULL AS session_lease;
SELECT fence_try_permit('counts:sp', 2, '1 min') IS NOT NULL AS session_permit;
SELECT pg_backend_pid() AS old_pid \gset
SELECT set_config('counts.old_pid', :'old_pid', false) IS NOT NULL AS noted;
SELECT * FROM counts_now;
\c
SET TimeZone = 'UTC';
SELECT set_config('counts.old_pid', :'old_pid', false) IS NOT NULL AS noted;
DO $$
BEGIN
	FOR i IN 1 .. 3000 LOOP
		EXIT WHEN NOT EXISTS (SELECT FROM pg_stat_activity
		                       WHERE pid = current_setting('counts.old_pid')::int);
		PERFORM pg_sleep(0.01);
	END LOOP;
END
$$;
SELECT count(*) AS session_rows_left FROM fence_leases WHERE pid = :old_pid;
SELECT * FROM counts_now;
SELECT * FROM counts_wrong;

-- A random workload of every kind of change, then the counts agree with
-- the view exactly, under the clock as it stands.
SELECT setseed(0.36);
DO $$
DECLARE
	k text;
	t fence_token;
BEGIN
	FOR i IN 1 .. 3000 LOOP
		k := 'counts:r' || (random() * 200)::int;
		-- A refusal of a conflicting request changes nothing: go on.
		BEGIN
		CASE (random() * 9)::int
		WHEN 0 THEN PERFORM fence_try_lease(k, make_interval(secs => 1 + random() * 60));
		WHEN 1 THEN PERFORM fence_try_lease(k, make_interval(secs => 1 + random() * 60),
		                                    'o' || (random() * 3)::int);
		WHEN 2 THEN PERFORM fence_try_permit(k || 'p', 4, make_interval(secs => 1 + random() * 60),
		                                     'o' || (random() * 6)::int);
		WHEN 3 THEN PERFORM fence_try_permit(k || 'p', 4, make_interval(secs => 1 + random() * 60));
		WHEN 4 THEN
			SELECT token INTO t FROM fence_leases_of(k) LIMIT 1;
			IF t IS NOT NULL THEN PERFORM fence_release(k, t); END IF;
		WHEN 5 THEN
			SELECT token INTO t FROM fence_leases_of(k || 'p') ORDER BY random() LIMIT 1;
			IF t IS NOT NULL THEN
				PERFORM fence_renew(k || 'p', t, make_interval(secs => 1 + random() * 60));
			END IF;
		WHEN 6 THEN PERFORM fence_advance_clock(make_interval(secs => random() * 20));
		WHEN 7 THEN PERFORM fence_set_clock(fence_now() - make_interval(secs => random() * 5));
		WHEN 8 THEN PERFORM fence_break(k);
		ELSE
			SELECT token INTO t FROM fence_leases_of(k) LIMIT 1;
			IF t IS NOT NULL THEN
				PERFORM fence_renew(k, t, make_interval(secs => 1 + random() * 60));
			END IF;
		END CASE;
		EXCEPTION WHEN OTHERS THEN NULL;
		END;
	END LOOP;
END
$$;
SELECT count(*) > 0 AS some_held,
       count(*) FILTER (WHERE NOT live) > 0 AS some_expired
  FROM fence_leases WHERE key LIKE 'counts:r%';
SELECT * FROM counts_wrong;

-- Clean up: break what is left, and nothing is counted any more.
SELECT count(fence_break(key)) > 0 AS broken
  FROM (SELECT DISTINCT key FROM fence_leases
         WHERE database = current_database() AND key LIKE 'counts:%') k;
SELECT * FROM counts_now;
SELECT * FROM counts_wrong;
SELECT fence_set_clock(NULL) IS NOT NULL AS clock_cleared;
DROP VIEW counts_now, counts_wrong;
DROP TABLE counts_base;
DROP ROLE regress_counts_other;
