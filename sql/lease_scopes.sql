-- Lease scopes (session, transaction, savepoint) and the token in effect.
-- The cross-session side of scopes is in the isolation suite.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

SELECT fence_advance_tokens(0)::text::bigint AS base \gset
CREATE TEMP TABLE base AS SELECT :base AS b;
CREATE FUNCTION pg_temp.rel(t fence_token) RETURNS bigint
	LANGUAGE sql AS $$ SELECT t::text::bigint - b FROM base $$;
CREATE FUNCTION pg_temp.held() RETURNS TABLE (key text, scope text)
	LANGUAGE sql AS $$ SELECT key, scope FROM fence_leases
	                    WHERE key LIKE 'scope:%' ORDER BY key $$;
SELECT fence_set_clock('2024-05-01 08:00:00+00') IS NOT NULL AS clock_set;

-- A new session has no token in effect.
SELECT fence_current_token() IS NULL AS no_token;

-- Session leases survive ROLLBACK and COMMIT, like pg_try_advisory_lock.
BEGIN;
SELECT pg_temp.rel(fence_try_lease('scope:s', '1 hour')) AS s;
ROLLBACK;
SELECT * FROM pg_temp.held();
BEGIN;
SELECT pg_temp.rel(fence_try_lease('scope:s', '1 hour')) AS s_again;
COMMIT;
SELECT * FROM pg_temp.held();

-- Transaction leases end at COMMIT, at ROLLBACK, and when an error aborts
-- the transaction.
BEGIN;
SELECT pg_temp.rel(fence_try_xact_lease('scope:x', '1 hour')) AS x;
SELECT * FROM pg_temp.held();
COMMIT;
SELECT * FROM pg_temp.held();
BEGIN;
SELECT fence_try_xact_lease('scope:x', '1 hour') IS NOT NULL AS x_taken;
ROLLBACK;
SELECT * FROM pg_temp.held();
BEGIN;
SELECT fence_try_xact_lease('scope:x', '1 hour') IS NOT NULL AS x_taken;
SELECT 1 / 0;
ROLLBACK;
SELECT * FROM pg_temp.held();
-- Outside a transaction block, a transaction lease lasts one statement.
SELECT pg_temp.rel(fence_try_xact_lease('scope:x', '1 hour')) AS x_autocommit;
SELECT * FROM pg_temp.held();

-- A transaction lease ends with the savepoint it was taken in ...
BEGIN;
SAVEPOINT a;
SELECT fence_try_xact_lease('scope:x1', '1 hour') IS NOT NULL AS x1_taken;
ROLLBACK TO SAVEPOINT a;
SELECT * FROM pg_temp.held();
-- ... a released savepoint hands it to its parent ...
SAVEPOINT b;
SAVEPOINT c;
SELECT fence_try_xact_lease('scope:x2', '1 hour') IS NOT NULL AS x2_taken;
RELEASE SAVEPOINT c;
SELECT * FROM pg_temp.held();
ROLLBACK TO SAVEPOINT b;
SELECT * FROM pg_temp.held();
-- ... and re-taking it in a savepoint that rolls back does not end it.
SELECT fence_try_xact_lease('scope:x3', '1 hour') IS NOT NULL AS x3_taken;
SAVEPOINT d;
SELECT fence_try_xact_lease('scope:x3', '1 hour') IS NOT NULL AS x3_again;
ROLLBACK TO SAVEPOINT d;
SELECT * FROM pg_temp.held();
-- Session leases taken in a rolled-back savepoint stay.
SAVEPOINT e;
SELECT fence_try_lease('scope:s2', '1 hour') IS NOT NULL AS s2_taken;
ROLLBACK TO SAVEPOINT e;
SELECT * FROM pg_temp.held();
COMMIT;
SELECT * FROM pg_temp.held();
-- An exception block is a savepoint too.
DO $$
BEGIN
	PERFORM fence_try_xact_lease('scope:x4', '1 hour');
	RAISE EXCEPTION 'undo';
EXCEPTION WHEN raise_exception THEN
	RAISE NOTICE 'leases after the block: %',
		(SELECT string_agg(key, ', ' ORDER BY key) FROM fence_leases WHERE key LIKE 'scope:%');
END $$;

-- The token in effect: the most recent token this session took ...
SELECT fence_release('scope:s2', fence_try_lease('scope:s2', '1 hour'));
SELECT pg_temp.rel(fence_current_token()) AS current, pg_temp.rel(fence_try_lease('scope:s', '1 hour')) AS s;
SELECT pg_temp.rel(fence_try_lease('scope:t', '1 hour')) AS t;
SELECT pg_temp.rel(fence_current_token()) AS current;
-- ... re-taking an older lease does not make it the most recent ...
SELECT pg_temp.rel(fence_try_lease('scope:s', '1 hour')) AS s_again, pg_temp.rel(fence_current_token()) AS current;
-- ... and for a trigger that names a lease, that lease's token.
SELECT pg_temp.rel(fence_current_token('scope:s')) AS for_s,
       pg_temp.rel(fence_current_token('scope:t')) AS for_t,
       pg_temp.rel(fence_current_token('scope:other')) AS for_other;
-- A transaction lease's token is in effect until its transaction ends.
BEGIN;
SELECT pg_temp.rel(fence_try_xact_lease('scope:u', '1 hour')) AS u;
SELECT pg_temp.rel(fence_current_token()) AS current;
COMMIT;
SELECT pg_temp.rel(fence_current_token()) AS current, fence_current_token('scope:u')::text = fence_current_token()::text AS u_falls_back;

-- A token stays in effect after its lease expires (and after it is
-- superseded by another session: see the isolation suite): a stale holder
-- stays fenced, it never becomes an unfenced writer.
SELECT fence_advance_clock('2 hours') IS NOT NULL AS clock_moved;
SELECT fence_lease_status('scope:t', fence_current_token('scope:t'));
SELECT pg_temp.rel(fence_current_token('scope:t')) AS for_t, pg_temp.rel(fence_current_token()) AS current;
-- A release with another token fails and changes nothing ...
SELECT fence_release('scope:t', '1');
SELECT pg_temp.rel(fence_current_token('scope:t')) AS for_t;
-- ... a successful release (of the expired, still current token) forgets it.
SELECT fence_release('scope:t', fence_current_token('scope:t'));
SELECT pg_temp.rel(fence_current_token('scope:t')) AS for_t_after_release,
       pg_temp.rel(fence_current_token()) AS current;
-- So does breaking one's own lease.
SELECT pg_temp.rel(fence_try_lease('scope:v', '1 hour')) AS v, pg_temp.rel(fence_current_token()) AS current;
SELECT pg_temp.rel(fence_break('scope:v')) AS broken_v, pg_temp.rel(fence_current_token()) AS current;

-- fence_use_token sets the token in effect for the rest of the transaction.
BEGIN;
SELECT fence_use_token('5');
SELECT fence_current_token() AS current, fence_current_token('scope:s') AS for_s;
-- With a key, it is the token for a trigger that names that lease; a
-- trigger that names no lease takes the latest one set, with or without key.
SELECT fence_use_token('7', 'scope:s');
SELECT fence_current_token() AS current, fence_current_token('scope:s') AS for_s,
       fence_current_token('scope:other') AS for_other;
-- Like SET LOCAL, a rolled-back savepoint undoes it.
SAVEPOINT f;
SELECT fence_use_token('9', 'scope:s');
SELECT fence_use_token('11');
SELECT fence_current_token() AS current, fence_current_token('scope:s') AS for_s;
ROLLBACK TO SAVEPOINT f;
SELECT fence_current_token() AS current, fence_current_token('scope:s') AS for_s;
SAVEPOINT g;
SELECT fence_use_token('13', 4242);
RELEASE SAVEPOINT g;
SELECT fence_current_token() AS current, fence_current_token(4242) AS for_4242;
COMMIT;
-- Gone with the transaction.
SELECT pg_temp.rel(fence_current_token()) AS current;
BEGIN;
SELECT fence_use_token('3');
ROLLBACK;
SELECT pg_temp.rel(fence_current_token()) AS current;

-- Clean up.
SELECT fence_release('scope:s', fence_try_lease('scope:s', '1 hour'));
SELECT * FROM pg_temp.held();
SELECT fence_set_clock(NULL) IS NOT NULL AS clock_cleared;
