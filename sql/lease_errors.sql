-- Leases: every error path, with its SQLSTATE.  Bad input is an error,
-- never a quiet NULL that a caller would read as "refused".
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
RESET client_min_messages;

-- Keys: NULL, empty, longer than 200 bytes (bytes, not characters).
SELECT fence_try_lease(NULL::text, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease(NULL::bigint, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease(repeat('k', 201), '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease(repeat('é', 101), '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease(repeat('k', 1000000), '1 minute');
\echo :LAST_ERROR_SQLSTATE
-- 200 bytes is fine.
SELECT fence_release(repeat('é', 100), fence_try_lease(repeat('é', 100), '1 minute'));
-- Every function checks its key the same way.
SELECT fence_try_xact_lease(NULL::text, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease(NULL::bigint, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release(NULL::text, '1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew(repeat('k', 201), '1', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease_status(NULL::bigint, '1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current('', '1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_break(NULL::text);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_use_token('1', '');
\echo :LAST_ERROR_SQLSTATE

-- TTLs: NULL, zero, negative, in months, over fence.max_ttl (1 day here),
-- beyond any interval arithmetic.
SELECT fence_try_lease('err:k', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('err:k', '0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('err:k', '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('err:k', '1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('err:k', '1 day 1 microsecond');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_lease('err:k', '2147483647 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('err:k', '1 minute', timeout => '106752000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('err:k', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('err:k', '0');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_try_xact_lease('err:k', '1 year');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('err:k', '1', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('err:k', '1', '-1 day');
\echo :LAST_ERROR_SQLSTATE
-- Exactly fence.max_ttl is allowed.
SELECT fence_release('err:k', fence_try_lease('err:k', '24 hours'));

-- Owners of detached leases: empty or longer than 48 bytes.
SELECT fence_try_lease('err:k', '1 minute', '');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease('err:k', '1 minute', NULL, repeat('o', 49));
\echo :LAST_ERROR_SQLSTATE
SELECT fence_break('err:k') AS nothing_taken;

-- Timeouts: negative, or in months.
SELECT fence_lease('err:k', '1 minute', '-1 ms');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('err:k', '1 minute', '1 mon');
\echo :LAST_ERROR_SQLSTATE

-- Tokens: NULL is an error everywhere.
SELECT fence_release('err:k', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('err:k', NULL, '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_lease_status('err:k', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_assert_current(7, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_use_token(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_use_token(NULL, 7);
\echo :LAST_ERROR_SQLSTATE

-- fence_assert_current raises LF002 unless the token holds the lease.
SELECT fence_assert_current('err:never', '7');
\echo :LAST_ERROR_SQLSTATE

-- A key is held in one scope at a time by a session.
SELECT fence_try_lease('err:scope', '1 minute') IS NOT NULL AS session_lease;
SELECT fence_try_xact_lease('err:scope', '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_xact_lease('err:scope', '1 minute');
\echo :LAST_ERROR_SQLSTATE
-- Asking for a key this session holds as a detached lease fails at once,
-- instead of queueing behind itself until the timeout.
SELECT clock_timestamp() AS asked_at \gset
SELECT fence_lease('err:scope', '1 minute', timeout => '3 s', owner => 'D1');
\echo :LAST_ERROR_SQLSTATE
SELECT clock_timestamp() - :'asked_at' < interval '1 s' AS at_once;
SELECT fence_try_lease('err:scope', '1 minute', owner => 'D1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_release('err:scope', fence_try_lease('err:scope', '1 minute'));
BEGIN;
SELECT fence_try_xact_lease('err:scope', '1 minute') IS NOT NULL AS xact_lease;
SELECT fence_lease('err:scope', '1 minute');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT fence_try_xact_lease('err:scope', '1 minute') IS NOT NULL AS xact_lease;
SELECT fence_lease('err:scope', '1 minute', timeout => '3 s', owner => 'D1');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT count(*) AS after_rollback FROM fence_leases WHERE key = 'err:scope';

-- PREPARE TRANSACTION with a transaction lease is refused, and the lease
-- ends with the aborted transaction (no leak).
BEGIN;
SELECT fence_try_xact_lease('err:prepared', '1 minute') IS NOT NULL AS xact_lease;
PREPARE TRANSACTION 'fence_err_prepared';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS after_prepare FROM fence_leases WHERE key = 'err:prepared';
SELECT count(*) AS prepared FROM pg_prepared_xacts WHERE gid = 'fence_err_prepared';
-- Session and detached leases do not stop a PREPARE.
BEGIN;
SELECT fence_try_lease('err:prepared', '1 minute') IS NOT NULL AS session_lease;
PREPARE TRANSACTION 'fence_err_prepared';
COMMIT PREPARED 'fence_err_prepared';
SELECT scope FROM fence_leases WHERE key = 'err:prepared';
SELECT fence_release('err:prepared', fence_try_lease('err:prepared', '1 minute'));

-- Read-only transactions cannot take leases: a grant writes a token to WAL.
-- Releasing, renewing and checking do not write, and are allowed.
SELECT fence_try_lease('err:ro', '1 minute', 'W1') IS NOT NULL AS detached;
BEGIN READ ONLY;
SELECT fence_try_lease('err:ro', '1 minute');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN READ ONLY;
SELECT fence_try_xact_lease('err:ro2', '1 minute');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN READ ONLY;
SELECT fence_lease('err:ro2', '1 minute', '0');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SET default_transaction_read_only = on;
SELECT fence_xact_lease('err:ro2', '1 minute');
\echo :LAST_ERROR_SQLSTATE
-- Even a re-acquire by the holder is refused, whatever its outcome would be.
SELECT fence_try_lease('err:ro', '1 minute', 'W1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_renew('err:ro', fence_break('err:ro'), '1 minute') AS renew_after_break;
RESET default_transaction_read_only;

-- The clock: only finite times, far enough from the end of time; forward
-- only; no months.
SELECT fence_set_clock('infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_set_clock('-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_set_clock('294270-01-01 00:00:00+00');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_clock(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_clock('-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_clock('1 month');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_set_clock('2024-01-01 00:00:00+00');
SELECT fence_advance_clock('106751000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_clock('106752000 days');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_clock('0') AS not_moved;
SELECT fence_set_clock(NULL) IS NOT NULL AS cleared;

-- Privileges: the admin and clock functions are revoked from PUBLIC; the
-- clock also wants a superuser.  Everything else is open to every role.
CREATE ROLE regress_lease_plain;
SELECT fence_try_lease('err:admin', '1 minute') IS NOT NULL AS admin_lease;
SET ROLE regress_lease_plain;
SELECT fence_break('err:admin');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_break_dropped_databases();
\echo :LAST_ERROR_SQLSTATE
SET fence.max_leases_per_role = 0;
\echo :LAST_ERROR_SQLSTATE
SET fence.log_lease_waits = on;
\echo :LAST_ERROR_SQLSTATE
SELECT fence_break(7);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_set_clock(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT fence_advance_clock('1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT fence_now() IS NOT NULL AS may_read_clock;
SELECT count(*) >= 1 AS may_read_stats FROM fence_stats;
SELECT fence_try_lease('err:plain', '1 minute', 'P1') IS NOT NULL AS plain_lease;
-- Another role's key and owner are hidden in fence_leases; one's own are not.
SELECT key, scope, owner, pid IS NOT NULL AS has_pid
  FROM fence_leases WHERE key LIKE 'err:%' OR pid = pg_backend_pid() ORDER BY key NULLS FIRST;
RESET ROLE;
SELECT key, scope, owner FROM fence_leases WHERE key LIKE 'err:%' ORDER BY key;
GRANT EXECUTE ON FUNCTION fence_set_clock(timestamptz) TO regress_lease_plain;
SET ROLE regress_lease_plain;
SELECT fence_set_clock(NULL);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
REVOKE EXECUTE ON FUNCTION fence_set_clock(timestamptz) FROM regress_lease_plain;
SELECT fence_break('err:plain') IS NOT NULL AS broke_plain;
SELECT fence_break('err:admin') IS NOT NULL AS broke_admin;
DROP ROLE regress_lease_plain;
SELECT count(*) AS left_over FROM fence_leases WHERE key LIKE 'err:%';

-- Lease-wait diagnostics with nobody waiting, and bad input.
SELECT count(*) AS waiters FROM fence_lease_waiters;
SELECT * FROM fence_blocking_pids(pg_backend_pid());
SELECT * FROM fence_blocking_pids(0);
SELECT * FROM fence_blocking_pids(NULL);
\echo :LAST_ERROR_SQLSTATE
SET fence.max_leases_per_role = -2;
\echo :LAST_ERROR_SQLSTATE
SHOW fence.max_leases_per_role;
SHOW fence.max_databases;
SHOW fence.log_lease_waits;
